"""Safe auto-continuation of a thread's goal.

``run_goal_loop`` calls the caller's ``work(goal)`` while the goal is active, under budget and
not suppressed, accounting each turn with the goal-id compare-and-set. It always stops: after
``max_no_progress`` consecutive turns without progress (and then sets one-shot suppression,
so nothing restarts it until a user turn), and after ``max_turns`` turns in any case.
``continuation_tick`` (and ``acontinuation_tick``) is the same for an external scheduler.
``note_user_turn`` clears suppression and resumes a paused goal, and ``user_turn`` keeps
schedulers off the thread while a user's turn runs: a user always wins. Every turn holds the
thread's turn lease (:mod:`taskloom.goals.turns`).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import inspect
import math
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from taskloom._pools import ASYNC_API
from taskloom._runtime import HasRuntime, Runtime, runtime_of
from taskloom.domain.common import iso
from taskloom.domain.errors import InvalidInput, InvariantViolation, NotFound, TurnFailed
from taskloom.domain.goals import MAX_TURN_SECONDS, Goal, GoalStatus, check_usage
from taskloom.domain.kinds import GOAL_KIND
from taskloom.domain.redact import redact_text
from taskloom.goals.handle import GoalHandle
from taskloom.goals.turns import (
    TurnLease,
    claim_turn,
    end_turn,
    end_user_turn,
    hold_for_user,
    user_spoke,
)

T = TypeVar("T")
Client = Runtime | HasRuntime
"""What the entry points take: a client from ``taskloom.connect`` or ``connect_async`` (or
its runtime)."""
__all__ = [
    "LoopResult",
    "StopReason",
    "TickItem",
    "TurnFailed",
    "TurnOutcome",
    "acontinuation_tick",
    "arun_goal_loop",
    "continuation_tick",
    "due_goals",
    "note_user_turn",
    "run_goal_loop",
    "user_turn",
]


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    tokens_used: int = 0
    elapsed_s: float = 0.0
    made_progress: bool = True


def _charge_failed(handle: GoalHandle, goal: Goal, failed: TurnFailed) -> None:
    """Charge what a failed turn spent; usage that is not a whole token count and finite
    seconds is an ``InvalidInput`` raised from the turn's own error."""
    try:
        handle.account_usage(goal.lineage_id, failed.tokens_used, failed.elapsed_s)
    except InvalidInput as exc:
        raise InvalidInput(f"the TurnFailed a turn raised: {exc.message}") from failed


class StopReason(enum.StrEnum):
    NO_GOAL = "no_goal"
    COMPLETE = "complete"
    BLOCKED = "blocked"
    PAUSED = "paused"
    BUDGET_LIMITED = "budget_limited"
    SUPPRESSED = "suppressed"
    NO_PROGRESS = "no_progress"
    MAX_TURNS = "max_turns"
    GOAL_CHANGED = "goal_changed"
    TURN_IN_FLIGHT = "turn_in_flight"


@dataclass(frozen=True, slots=True)
class LoopResult:
    reason: StopReason
    turns: int
    goal: dict[str, Any] | None


_STATUS_STOP = {
    GoalStatus.COMPLETE: StopReason.COMPLETE,
    GoalStatus.BLOCKED: StopReason.BLOCKED,
    GoalStatus.PAUSED: StopReason.PAUSED,
    GoalStatus.BUDGET_LIMITED: StopReason.BUDGET_LIMITED,
}


def _why_stop(goal: Goal | None) -> StopReason | None:
    if goal is None:
        return StopReason.NO_GOAL
    if goal.status in _STATUS_STOP:
        return _STATUS_STOP[goal.status]
    if goal.continuation_suppressed:
        return StopReason.SUPPRESSED
    return None


def _positive(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{name} must be a whole number of at least 1 (got {value!r})")


def _seconds(value: object, name: str, *, positive: bool) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not 0 <= value <= MAX_TURN_SECONDS or (positive and value == 0):  # type: ignore[operator]
        kind = "positive" if positive else "non-negative"
        raise InvalidInput(
            f"{name} must be a {kind} number of seconds up to {MAX_TURN_SECONDS:.0e}"
            f" (got {value!r})"
        )


def _check_outcome(outcome: object) -> TurnOutcome:
    """What a turn function returned, checked before anything is charged: a mistake in the
    caller's turn function is that turn's failure, never a crash of the scheduler."""
    if inspect.iscoroutine(outcome):
        outcome.close()
        raise InvalidInput(
            "the turn function returned a coroutine: an async turn function needs"
            " acontinuation_tick (or arun_goal_loop)"
        )
    if not isinstance(outcome, TurnOutcome):
        raise InvalidInput(
            f"the turn function must return a TurnOutcome (got {type(outcome).__name__})"
        )
    check_usage(outcome.tokens_used, outcome.elapsed_s)
    if type(outcome.made_progress) is not bool:  # "false" from a parser would count as true
        raise InvalidInput(
            f"a TurnOutcome's made_progress is true or false (got {outcome.made_progress!r})"
        )
    return outcome


def _before_turn(
    runtime: Runtime, handle: GoalHandle, turns: int, max_turns: int, lease_s: float
) -> TurnLease | LoopResult:
    """The next turn's lease, or why the loop stops: the goal is not eligible, the turn cap is
    reached, or another turn (a scheduler's, a user's) holds the thread."""
    goal = handle.goal()
    reason = _why_stop(goal)
    if reason is not None or goal is None:
        return LoopResult(reason or StopReason.NO_GOAL, turns, handle.get()["goal"])
    if turns >= max_turns:
        return LoopResult(StopReason.MAX_TURNS, turns, goal.to_dict())
    lease = claim_turn(runtime, handle.thread_id, lease_s, lambda g: _why_stop(g) is None)
    if lease is None:
        now = handle.get()["goal"]
        again = _why_stop(Goal.from_dict(now) if now else None)
        return LoopResult(again or StopReason.TURN_IN_FLIGHT, turns, now)
    return lease


def _after_turn(
    runtime: Runtime, lease: TurnLease, outcome: TurnOutcome, turns: int, idle: int, limit: int
) -> LoopResult | int:
    """Account the turn; return the stop result, or the new count of idle turns. A goal whose
    objective the model rephrased during the turn is the same goal (:meth:`Goal.continues`):
    its idle turns go on counting, or rephrasing every turn would never stop. A user who
    spoke during the turn starts the count again, as a user turn lifts suppression."""
    handle, goal = GoalHandle(runtime, lease.thread_id), lease.goal
    snap = handle.account_usage(goal.lineage_id, outcome.tokens_used, outcome.elapsed_s)
    if not snap["applied"]:
        return LoopResult(StopReason.GOAL_CHANGED, turns, snap["goal"])
    reason = _why_stop(Goal.from_dict(snap["goal"]))  # completed, blocked, out of budget…
    if reason is not None:
        return LoopResult(reason, turns, snap["goal"])
    if not Goal.from_dict(snap["goal"]).continues(goal.lineage_id):
        return 0  # the host set a new objective during the turn: charged, counted afresh
    idle = 0 if outcome.made_progress or user_spoke(runtime, lease) else idle + 1
    if idle >= limit:
        suppressed = handle.suppress(True, goal_id=goal.lineage_id, user_turns=goal.user_turns)[
            "goal"
        ]
        return LoopResult(StopReason.NO_PROGRESS, turns, suppressed)
    return idle


def _check_loop(max_turns: int, max_no_progress: int, lease_s: float) -> None:
    _positive(max_turns, "max_turns")
    _positive(max_no_progress, "max_no_progress")
    _seconds(lease_s, "lease_s", positive=True)


def run_goal_loop(
    tl: Client,
    thread_id: str,
    work: Callable[[Goal], TurnOutcome],
    *,
    max_turns: int = 20,
    max_no_progress: int = 2,
    lease_s: float = 900.0,
) -> LoopResult:
    """Run ``work`` turn after turn until the goal stops being eligible; say why it stopped.

    Each turn holds the thread's turn lease (:mod:`taskloom.goals.turns`), so a scheduler in
    another process never runs a turn beside it; if another turn holds the thread, the loop
    stops with ``turn_in_flight``. An exception from ``work`` ends the loop and propagates;
    a :class:`TurnFailed` is charged first. A turn that returns its outcome ends the
    thread's failures in a row (the count :func:`continuation_tick` pauses a goal at).
    """
    runtime = runtime_of(tl)
    _check_loop(max_turns, max_no_progress, lease_s)
    handle = GoalHandle(runtime, thread_id)
    idle = turns = 0
    while True:
        lease = _before_turn(runtime, handle, turns, max_turns, lease_s)
        if isinstance(lease, LoopResult):
            return lease
        failures = lease.failures
        try:
            outcome = _check_outcome(work(lease.goal))
            turns, failures = turns + 1, 0
            after = _after_turn(runtime, lease, outcome, turns, idle, max_no_progress)
        except TurnFailed as failed:
            _charge_failed(handle, lease.goal, failed)
            raise
        finally:
            end_turn(runtime, lease, failures)
        if isinstance(after, LoopResult):
            return after
        idle = after


async def _awaited(result: object) -> object:
    """What an async turn function gave: awaited if awaitable. A plain function's result is
    taken as its outcome: the turn has run by then (blocking the event loop meanwhile), and
    what it spent is charged, never dropped as a failure to await it."""
    if inspect.isawaitable(result):
        return await result
    return result


async def _claimed(runtime: Runtime, claim: Callable[..., T], *args: Any) -> T:
    """``claim(*args)`` on a worker thread, for a result that may be a turn lease. Cancelled
    while the thread runs (a timeout, a shutdown), the claim still commits there; it is then
    awaited to its end and its lease released, or the thread would stay blocked for
    ``lease_s``."""
    task = asyncio.ensure_future(ASYNC_API.run(claim, *args))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        result = await task
        if isinstance(result, TurnLease):
            await ASYNC_API.run(end_turn, runtime, result, result.failures)
        raise


async def arun_goal_loop(
    client: Client,
    thread_id: str,
    work: Callable[[Goal], Awaitable[TurnOutcome]],
    *,
    max_turns: int = 20,
    max_no_progress: int = 2,
    lease_s: float = 900.0,
) -> LoopResult:
    """:func:`run_goal_loop` for an async ``work``; store calls run on worker threads.
    ``client``: ``taskloom.connect``'s or ``taskloom.connect_async``'s."""
    runtime = runtime_of(client)
    _check_loop(max_turns, max_no_progress, lease_s)
    handle = GoalHandle(runtime, thread_id)
    idle = turns = 0
    while True:
        lease = await _claimed(runtime, _before_turn, runtime, handle, turns, max_turns, lease_s)
        if isinstance(lease, LoopResult):
            return lease
        failures = lease.failures
        try:
            outcome = _check_outcome(await _awaited(work(lease.goal)))
            turns, failures = turns + 1, 0
            after = await ASYNC_API.run(
                _after_turn, runtime, lease, outcome, turns, idle, max_no_progress
            )
        except TurnFailed as failed:
            await ASYNC_API.run(_charge_failed, handle, lease.goal, failed)
            raise
        finally:
            await ASYNC_API.run(end_turn, runtime, lease, failures)
        if isinstance(after, LoopResult):
            return after
        idle = after


def note_user_turn(tl: Client, thread_id: str) -> dict[str, Any]:
    """A user spoke: clear one-shot suppression, resume a paused goal, and stamp activity, so
    an idle scheduler waits its full ``idle_s`` from now. To keep schedulers off the thread
    for the whole of a user's turn, use :func:`user_turn`."""
    handle = GoalHandle(runtime_of(tl), thread_id)
    if handle.goal() is None:
        return handle.get()
    return handle.user_turn()


@contextlib.contextmanager
def user_turn(tl: Client, thread_id: str, *, lease_s: float = 900.0) -> Iterator[dict[str, Any]]:
    """Hold the thread's turn while a user's turn runs: :func:`note_user_turn`, then the turn
    lease, taken even from a continuation turn in flight (whose end then leaves it alone), and
    released at the end. Yields the goal snapshot."""
    runtime = runtime_of(tl)
    _seconds(lease_s, "lease_s", positive=True)
    snap = note_user_turn(runtime, thread_id)
    owner = hold_for_user(runtime, thread_id, lease_s)
    try:
        yield snap
    finally:
        end_user_turn(runtime, thread_id, owner)


MAX_REASON = 500
"""The failure text kept as a paused goal's reason is cut to this many characters."""


@dataclass(frozen=True, slots=True)
class TickItem:
    thread_id: str
    ran: bool
    outcome: TurnOutcome | None = None
    error: str | None = None
    paused: bool = False


def _is_due(goal: Goal, cutoff: str) -> bool:
    return (
        goal.status is GoalStatus.ACTIVE
        and not goal.continuation_suppressed
        and goal.last_activity_at <= cutoff
    )


def _idle_cutoff(runtime: Runtime, idle_s: float) -> str:
    return iso(runtime.now() - timedelta(seconds=idle_s))


def due_goals(tl: Client, idle_s: float) -> list[Goal]:
    """Active, unsuppressed goals idle for at least ``idle_s``, oldest activity first."""
    runtime = runtime_of(tl)
    cutoff = _idle_cutoff(runtime, idle_s)
    with runtime.store.read() as tx:
        docs = tx.list_docs(GOAL_KIND)
    goals = [Goal.from_dict(d.state["goal"]) for d in docs if d.state.get("goal")]
    return sorted((g for g in goals if _is_due(g, cutoff)), key=lambda g: g.last_activity_at)


def _still_due(runtime: Runtime, listed: Goal, idle_s: float) -> Callable[[Goal], bool]:
    """Due now, and no turn was accounted since the tick listed it (nobody else just ran it)."""

    def check(goal: Goal) -> bool:
        return (
            _is_due(goal, _idle_cutoff(runtime, idle_s))
            and goal.last_activity_at == listed.last_activity_at
        )

    return check


def _error_text(exc: BaseException | str) -> str:
    """A failed turn's error as text to keep and show: credentials redacted (a provider's
    error may quote a key, a header or a URL's password, and the paused goal's reason is in
    every snapshot, event and ``goal_get`` answer)."""
    return redact_text(str(exc))[0]


def _failure_reason(failures: int, why: str) -> str:
    """The paused goal's reason: redacted (:func:`_error_text`), storable text (no NUL, no
    lone surrogate), bounded."""
    text = _error_text(why).replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    times = "time" if failures == 1 else "times"
    return f"continuation failed {failures} {times} in a row: {text}"[:MAX_REASON]


def _pause_failing(handle: GoalHandle, goal: Goal, reason: str) -> bool:
    """Pause after too many failures. A goal the turn completed or cleared before raising
    cannot be paused and needs no retry limit: it is left as the turn left it, as is a new
    goal set since (it did not fail)."""
    try:
        snap = handle.pause(reason, goal_id=goal.lineage_id)
    except (InvariantViolation, NotFound):
        return False
    now = Goal.from_dict(snap["goal"])
    return now.status is GoalStatus.PAUSED and now.continues(goal.lineage_id)


def _turn_failed(
    handle: GoalHandle, goal: Goal, exc: Exception, failures: int, max_failures: int
) -> tuple[TickItem, int]:
    """Charge what it spent (a :class:`TurnFailed`'s usage, else nothing: activity is
    stamped), count the failure, pause at the limit; return the item and the count."""
    tokens, seconds = (0, 0.0)
    if isinstance(exc, TurnFailed):
        try:
            check_usage(exc.tokens_used, exc.elapsed_s)
            tokens, seconds = exc.tokens_used, exc.elapsed_s
        except InvalidInput as bad:
            exc = InvalidInput(f"the TurnFailed a turn raised: {bad.message} ({exc})")
    handle.account_usage(goal.lineage_id, tokens, seconds)
    failures += 1
    reason = _failure_reason(failures, str(exc))
    paused = failures >= max_failures and _pause_failing(handle, goal, reason)
    item = TickItem(goal.thread_id, ran=True, error=_error_text(exc), paused=paused)
    return item, 0 if failures >= max_failures else failures


def _turn_done(runtime: Runtime, lease: TurnLease, outcome: TurnOutcome) -> TickItem:
    """Charge the turn; suppress only the goal that ran, never one that replaced it since,
    and not after a user spoke during the turn (a user goes before continuation). A turn that
    cleared its goal leaves nothing to suppress (suppressing would raise ``NotFound`` and end
    the tick)."""
    handle, goal = GoalHandle(runtime, lease.thread_id), lease.goal
    snap = handle.account_usage(goal.lineage_id, outcome.tokens_used, outcome.elapsed_s)
    after = snap["goal"]
    idle = not outcome.made_progress and after and after["status"] == GoalStatus.ACTIVE
    if idle:
        with contextlib.suppress(NotFound):  # a goal the turn ended needs no suppression
            handle.suppress(True, goal_id=goal.lineage_id, user_turns=goal.user_turns)
    return TickItem(goal.thread_id, ran=True, outcome=outcome)


def _finish(runtime: Runtime, lease: TurnLease, result: object, max_failures: int) -> TickItem:
    """Charge a turn (``result``: its outcome, or the exception it raised) or count its
    failure; the lease is released whatever happens."""
    handle = GoalHandle(runtime, lease.thread_id)
    failures = lease.failures
    try:
        try:
            if isinstance(result, Exception):
                raise result
            outcome = _check_outcome(result)
        except Exception as exc:  # a failing turn must not stop the scheduler
            item, failures = _turn_failed(handle, lease.goal, exc, failures, max_failures)
            return item
        failures = 0
        return _turn_done(runtime, lease, outcome)
    finally:
        end_turn(runtime, lease, failures)


def _check_tick(idle_s: float, max_per_tick: int, max_failures: int, lease_s: float) -> None:
    _seconds(idle_s, "idle_s", positive=False)
    _positive(max_per_tick, "max_per_tick")
    _positive(max_failures, "max_failures")
    _seconds(lease_s, "lease_s", positive=True)


def _take(runtime: Runtime, listed: Goal, idle_s: float, lease_s: float) -> TurnLease | None:
    return claim_turn(runtime, listed.thread_id, lease_s, _still_due(runtime, listed, idle_s))


UNENDED = "its turn never ended: the process running it died, or the turn outran its lease"


def _given_up(runtime: Runtime, lease: TurnLease, max_failures: int) -> TickItem | None:
    """Pause, instead of running again, a goal whose last ``max_failures`` turns never ended
    (:func:`claim_turn` counts them): such a turn never reaches :func:`_finish` to be counted
    there, and a turn that kills its process would otherwise be retried for ever."""
    if lease.failures < max_failures:
        return None
    try:
        reason = _failure_reason(lease.failures, UNENDED)
        paused = _pause_failing(GoalHandle(runtime, lease.thread_id), lease.goal, reason)
    finally:
        end_turn(runtime, lease, 0)
    return TickItem(lease.thread_id, ran=False, error=UNENDED, paused=paused)


def _skipped(listed: Goal) -> TickItem:
    return TickItem(listed.thread_id, ran=False)


def _ran(items: list[TickItem]) -> int:
    return sum(item.ran for item in items)


def continuation_tick(
    tl: Client,
    run_turn: Callable[[Goal], TurnOutcome],
    *,
    idle_s: float = 60.0,
    max_per_tick: int = 4,
    max_failures: int = 3,
    lease_s: float = 900.0,
) -> list[TickItem]:
    """One pass of an external scheduler (cron, a worker loop).

    Runs at most ``max_per_tick`` turns on due goals, oldest first, skipping threads whose turn
    is in flight (a lease in the database) and goals no longer due when their lease is taken
    (paused, suppressed, or just run by another scheduler since the tick listed them). A turn
    that raises, or returns something other than a valid :class:`TurnOutcome`, stamps
    activity (so the goal is not picked again at once) and counts as a failure; after
    ``max_failures`` failures in a row the goal is paused with the error as its reason (a
    :class:`TurnFailed` is charged its usage first). A turn without progress sets one-shot
    suppression, cleared by the next user turn.
    """
    runtime = runtime_of(tl)
    _check_tick(idle_s, max_per_tick, max_failures, lease_s)
    items: list[TickItem] = []
    for listed in due_goals(runtime, idle_s):
        if _ran(items) >= max_per_tick:
            break
        lease = _take(runtime, listed, idle_s, lease_s)
        if lease is None:
            items.append(_skipped(listed))
            continue
        given_up = _given_up(runtime, lease, max_failures)
        if given_up is not None:
            items.append(given_up)
            continue
        result: object
        try:
            result = run_turn(lease.goal)
        except Exception as exc:
            result = exc
        except BaseException:
            end_turn(runtime, lease, lease.failures)
            raise
        items.append(_finish(runtime, lease, result, max_failures))
    return items


async def acontinuation_tick(
    client: Client,
    run_turn: Callable[[Goal], Awaitable[TurnOutcome]],
    *,
    idle_s: float = 60.0,
    max_per_tick: int = 4,
    max_failures: int = 3,
    lease_s: float = 900.0,
) -> list[TickItem]:
    """:func:`continuation_tick` for an async ``run_turn``; store calls run on worker
    threads, so the event loop is never blocked by the database. ``client``: as for
    :func:`arun_goal_loop`."""
    runtime = runtime_of(client)
    _check_tick(idle_s, max_per_tick, max_failures, lease_s)
    items: list[TickItem] = []
    for listed in await ASYNC_API.run(due_goals, runtime, idle_s):
        if _ran(items) >= max_per_tick:
            break
        lease = await _claimed(runtime, _take, runtime, listed, idle_s, lease_s)
        if lease is None:
            items.append(_skipped(listed))
            continue
        given_up = await ASYNC_API.run(_given_up, runtime, lease, max_failures)
        if given_up is not None:
            items.append(given_up)
            continue
        result: object
        try:
            result = await _awaited(run_turn(lease.goal))
        except Exception as exc:
            result = exc
        except BaseException:
            await ASYNC_API.run(end_turn, runtime, lease, lease.failures)
            raise
        items.append(await ASYNC_API.run(_finish, runtime, lease, result, max_failures))
    return items
