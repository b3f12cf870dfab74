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
from taskloom.domain.goals import Goal, GoalStatus
from taskloom.goals import GOAL_KIND, GoalHandle

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
    idle = 0 if outcome.made_progress else idle + 1
    if idle >= limit:
        return LoopResult(StopReason.NO_PROGRESS, turns, handle.suppress(True)["goal"])
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


@dataclass(frozen=True, slots=True)
class TickItem:
    thread_id: str
    ran: bool
    outcome: TurnOutcome | None = None
    error: str | None = None
    paused: bool = False


def _claim_turn(tl: Taskloom, thread_id: str, lease_s: float) -> dict[str, Any] | None:
    """Take the thread's turn lease (in the database, so it holds across processes)."""
    now = tl.now()
    with tl.store.write() as tx:
        doc = tx.load_doc(TURN_KIND, thread_id)
        state: dict[str, Any] = dict(doc.state) if doc else {"failures": 0}
        until = state.get("lease_until")
        if until is not None and until > now.timestamp():
            return None
        state["lease_until"] = now.timestamp() + lease_s
        tx.save_doc(TURN_KIND, thread_id, (doc.version if doc else 0) + 1, state, iso(now))
    return state


def _end_turn(tl: Taskloom, thread_id: str, failures: int) -> None:
    now = tl.now()
    with tl.store.write() as tx:
        doc = tx.load_doc(TURN_KIND, thread_id)
        state = {"failures": failures, "lease_until": None}
        tx.save_doc(TURN_KIND, thread_id, (doc.version if doc else 0) + 1, state, iso(now))


def due_goals(tl: Taskloom, idle_s: float) -> list[Goal]:
    """Active, unsuppressed goals idle for at least ``idle_s``, oldest activity first."""
    cutoff = iso(tl.now() - timedelta(seconds=idle_s))
    with tl.store.read() as tx:
        docs = tx.list_docs(GOAL_KIND)
    goals = [Goal.from_dict(d.state["goal"]) for d in docs if d.state.get("goal")]
    due = [
        g
        for g in goals
        if g.status is GoalStatus.ACTIVE
        and not g.continuation_suppressed
        and g.last_activity_at <= cutoff
    ]
    return sorted(due, key=lambda g: g.last_activity_at)


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
    is in flight (a lease in the database). A turn that raises stamps activity (so the goal is
    not picked again at once) and counts as a failure; after ``max_failures`` failures in a
    row the goal is paused with the error as its reason. A turn without progress sets one-shot
    suppression, cleared by the next user turn.
    """
    items: list[TickItem] = []
    for goal in due_goals(tl, idle_s):
        if len([i for i in items if i.ran]) >= max_per_tick:
            break
        lease = _claim_turn(tl, goal.thread_id, lease_s)
        if lease is None:
            items.append(TickItem(goal.thread_id, ran=False))
            continue
        failures = int(lease.get("failures", 0))
        handle = tl.goal(goal.thread_id)
        try:
            outcome = run_turn(goal)
        except Exception as exc:  # a failing turn must not stop the scheduler
            failures += 1
            handle.account_usage(goal.goal_id, 0, 0.0)
            paused = failures >= max_failures
            if paused:
                handle.pause(f"continuation failed {failures} times in a row: {exc}")
                failures = 0
            _end_turn(tl, goal.thread_id, failures)
            items.append(TickItem(goal.thread_id, ran=True, error=str(exc), paused=paused))
            continue
        handle.account_usage(goal.goal_id, outcome.tokens_used, outcome.elapsed_s)
        if not outcome.made_progress:
            handle.suppress(True)
        _end_turn(tl, goal.thread_id, 0)
        items.append(TickItem(goal.thread_id, ran=True, outcome=outcome))
    return items
