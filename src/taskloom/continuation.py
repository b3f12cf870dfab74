"""Safe auto-continuation of a thread's goal.

``run_goal_loop`` calls the caller's ``work(goal)`` while the goal is active, under budget and
not suppressed, accounting each turn with the goal-id compare-and-set. It always stops: after
``max_no_progress`` consecutive turns without progress (and then sets one-shot suppression,
so nothing restarts it until a user turn), and after ``max_turns`` turns in any case.
``note_user_turn`` clears suppression and resumes a paused goal: a user always wins.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from taskloom.domain.common import iso
from taskloom.domain.errors import InvariantViolation, NotFound
from taskloom.domain.goals import Goal, GoalStatus
from taskloom.goals import GOAL_KIND, GoalHandle, load_goal

if TYPE_CHECKING:
    from taskloom.client import Taskloom


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    tokens_used: int = 0
    elapsed_s: float = 0.0
    made_progress: bool = True


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


def _before_turn(handle: GoalHandle, turns: int, max_turns: int) -> Goal | LoopResult:
    goal = handle.goal()
    reason = _why_stop(goal)
    if reason is not None or goal is None:
        return LoopResult(reason or StopReason.NO_GOAL, turns, handle.get()["goal"])
    if turns >= max_turns:
        return LoopResult(StopReason.MAX_TURNS, turns, goal.to_dict())
    return goal


def _after_turn(
    handle: GoalHandle, goal: Goal, outcome: TurnOutcome, turns: int, idle: int, limit: int
) -> LoopResult | int:
    """Account the turn; return the stop result, or the new count of idle turns."""
    snap = handle.account_usage(goal.goal_id, outcome.tokens_used, outcome.elapsed_s)
    if not snap["applied"]:
        return LoopResult(StopReason.GOAL_CHANGED, turns, snap["goal"])
    if snap["goal"]["goal_id"] != goal.goal_id:
        return 0  # the objective changed during the turn: charged, and counted afresh
    idle = 0 if outcome.made_progress else idle + 1
    if idle >= limit:
        suppressed = handle.suppress(True, goal_id=goal.goal_id)["goal"]
        return LoopResult(StopReason.NO_PROGRESS, turns, suppressed)
    return idle


def run_goal_loop(
    tl: Taskloom,
    thread_id: str,
    work: Callable[[Goal], TurnOutcome],
    *,
    max_turns: int = 20,
    max_no_progress: int = 2,
) -> LoopResult:
    """Run ``work`` turn after turn until the goal stops being eligible; say why it stopped."""
    handle = tl.goal(thread_id)
    idle = turns = 0
    while True:
        goal = _before_turn(handle, turns, max_turns)
        if isinstance(goal, LoopResult):
            return goal
        outcome = work(goal)
        turns += 1
        after = _after_turn(handle, goal, outcome, turns, idle, max_no_progress)
        if isinstance(after, LoopResult):
            return after
        idle = after


async def arun_goal_loop(
    tl: Taskloom,
    thread_id: str,
    work: Callable[[Goal], Awaitable[TurnOutcome]],
    *,
    max_turns: int = 20,
    max_no_progress: int = 2,
) -> LoopResult:
    """:func:`run_goal_loop` for an async ``work``; store calls run on worker threads."""
    handle = tl.goal(thread_id)
    idle = turns = 0
    while True:
        goal = await asyncio.to_thread(_before_turn, handle, turns, max_turns)
        if isinstance(goal, LoopResult):
            return goal
        outcome = await work(goal)
        turns += 1
        after = await asyncio.to_thread(
            _after_turn, handle, goal, outcome, turns, idle, max_no_progress
        )
        if isinstance(after, LoopResult):
            return after
        idle = after


def note_user_turn(tl: Taskloom, thread_id: str) -> dict[str, Any]:
    """A user spoke: clear one-shot suppression and resume a paused goal."""
    handle = tl.goal(thread_id)
    goal = handle.goal()
    if goal is None:
        return handle.get()
    return handle.resume()


TURN_KIND = "goal_turn"
MAX_REASON = 500
"""The failure text kept as a paused goal's reason is cut to this many characters."""


@dataclass(frozen=True, slots=True)
class TickItem:
    thread_id: str
    ran: bool
    outcome: TurnOutcome | None = None
    error: str | None = None
    paused: bool = False


@dataclass(frozen=True, slots=True)
class _Claim:
    goal: Goal
    failures: int


def _is_due(goal: Goal, cutoff: str) -> bool:
    return (
        goal.status is GoalStatus.ACTIVE
        and not goal.continuation_suppressed
        and goal.last_activity_at <= cutoff
    )


def _idle_cutoff(tl: Taskloom, idle_s: float) -> str:
    return iso(tl.now() - timedelta(seconds=idle_s))


def _claim_turn(
    tl: Taskloom,
    thread_id: str,
    lease_s: float,
    eligible: Callable[[Goal], bool] = lambda goal: True,
) -> _Claim | None:
    """Take the thread's turn lease (in the database, so it holds across processes).

    ``eligible`` sees the goal as it is in the same transaction: a goal paused, suppressed or
    run by another scheduler since the tick listed it is not run again on a stale snapshot.
    """
    now = tl.now()
    with tl.store.write() as tx:
        doc = tx.load_doc(TURN_KIND, thread_id)
        state: dict[str, Any] = dict(doc.state) if doc else {"failures": 0}
        until = state.get("lease_until")
        if until is not None and until > now.timestamp():
            return None
        goal = load_goal(tx, thread_id)[0]
        if goal is None or not eligible(goal):
            return None
        state["lease_until"] = now.timestamp() + lease_s
        tx.save_doc(TURN_KIND, thread_id, (doc.version if doc else 0) + 1, state, iso(now))
    return _Claim(goal, int(state.get("failures", 0)))


def _end_turn(tl: Taskloom, thread_id: str, failures: int) -> None:
    now = tl.now()
    with tl.store.write() as tx:
        doc = tx.load_doc(TURN_KIND, thread_id)
        state = {"failures": failures, "lease_until": None}
        tx.save_doc(TURN_KIND, thread_id, (doc.version if doc else 0) + 1, state, iso(now))


def due_goals(tl: Taskloom, idle_s: float) -> list[Goal]:
    """Active, unsuppressed goals idle for at least ``idle_s``, oldest activity first."""
    cutoff = _idle_cutoff(tl, idle_s)
    with tl.store.read() as tx:
        docs = tx.list_docs(GOAL_KIND)
    goals = [Goal.from_dict(d.state["goal"]) for d in docs if d.state.get("goal")]
    return sorted((g for g in goals if _is_due(g, cutoff)), key=lambda g: g.last_activity_at)


def _still_due(tl: Taskloom, listed: Goal, idle_s: float) -> Callable[[Goal], bool]:
    """Due now, and no turn was accounted since the tick listed it (nobody else just ran it)."""

    def check(goal: Goal) -> bool:
        return (
            _is_due(goal, _idle_cutoff(tl, idle_s))
            and goal.last_activity_at == listed.last_activity_at
        )

    return check


def _failure_reason(failures: int, exc: Exception) -> str:
    """The paused goal's reason: storable text (no NUL, no lone surrogate), bounded."""
    text = str(exc).replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    return f"continuation failed {failures} times in a row: {text}"[:MAX_REASON]


def _pause_failing(handle: GoalHandle, reason: str) -> bool:
    """Pause after too many failures. A goal the turn completed or cleared before raising
    cannot be paused and needs no retry limit: it is left as the turn left it."""
    try:
        handle.pause(reason)
    except (InvariantViolation, NotFound):
        return False
    return True


def _turn_failed(
    handle: GoalHandle, goal: Goal, exc: Exception, failures: int, max_failures: int
) -> tuple[TickItem, int]:
    """Stamp activity, count the failure, pause at the limit; return the item and the count."""
    handle.account_usage(goal.goal_id, 0, 0.0)
    failures += 1
    paused = failures >= max_failures and _pause_failing(handle, _failure_reason(failures, exc))
    item = TickItem(goal.thread_id, ran=True, error=str(exc), paused=paused)
    return item, 0 if failures >= max_failures else failures


def _turn_done(handle: GoalHandle, goal: Goal, outcome: TurnOutcome) -> TickItem:
    """Charge the turn; suppress only the goal that ran, never one that replaced it since."""
    handle.account_usage(goal.goal_id, outcome.tokens_used, outcome.elapsed_s)
    if not outcome.made_progress:
        handle.suppress(True, goal_id=goal.goal_id)
    return TickItem(goal.thread_id, ran=True, outcome=outcome)


def _tick_one(
    tl: Taskloom, claim: _Claim, run_turn: Callable[[Goal], TurnOutcome], max_failures: int
) -> TickItem:
    """Run one leased turn; the lease is released whatever happens."""
    goal, failures = claim.goal, claim.failures
    handle = tl.goal(goal.thread_id)
    try:
        try:
            outcome = run_turn(goal)
        except Exception as exc:  # a failing turn must not stop the scheduler
            item, failures = _turn_failed(handle, goal, exc, failures, max_failures)
            return item
        failures = 0
        return _turn_done(handle, goal, outcome)
    finally:
        _end_turn(tl, goal.thread_id, failures)


def continuation_tick(
    tl: Taskloom,
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
    that raises stamps activity (so the goal is not picked again at once) and counts as a
    failure; after ``max_failures`` failures in a row the goal is paused with the error as its
    reason. A turn without progress sets one-shot suppression, cleared by the next user turn.
    """
    items: list[TickItem] = []
    for listed in due_goals(tl, idle_s):
        if len([i for i in items if i.ran]) >= max_per_tick:
            break
        claim = _claim_turn(tl, listed.thread_id, lease_s, _still_due(tl, listed, idle_s))
        if claim is None:
            items.append(TickItem(listed.thread_id, ran=False))
            continue
        items.append(_tick_one(tl, claim, run_turn, max_failures))
    return items
