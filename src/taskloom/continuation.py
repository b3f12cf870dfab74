"""Safe auto-continuation of a thread's goal.

``run_goal_loop`` calls the caller's ``work(goal)`` while the goal is active, under budget and
not suppressed, accounting each turn with the goal-id compare-and-set. It always stops: after
``max_no_progress`` consecutive turns without progress (and then sets one-shot suppression,
so nothing restarts it until a user turn), and after ``max_turns`` turns in any case.
``note_user_turn`` clears suppression and resumes a paused goal: a user always wins.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from taskloom.domain.goals import Goal, GoalStatus

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
    idle = 0
    turns = 0
    while True:
        goal = handle.goal()
        reason = _why_stop(goal)
        if reason is not None or goal is None:
            return LoopResult(reason or StopReason.NO_GOAL, turns, handle.get()["goal"])
        if turns >= max_turns:
            return LoopResult(StopReason.MAX_TURNS, turns, goal.to_dict())
        outcome = work(goal)
        turns += 1
        snap = handle.account_usage(goal.goal_id, outcome.tokens_used, outcome.elapsed_s)
        if not snap["applied"]:
            return LoopResult(StopReason.GOAL_CHANGED, turns, snap["goal"])
        idle = 0 if outcome.made_progress else idle + 1
        if idle >= max_no_progress:
            snap = handle.suppress(True)
            return LoopResult(StopReason.NO_PROGRESS, turns, snap["goal"])


def note_user_turn(tl: Taskloom, thread_id: str) -> dict[str, Any]:
    """A user spoke: clear one-shot suppression and resume a paused goal."""
    handle = tl.goal(thread_id)
    goal = handle.goal()
    if goal is None:
        return handle.get()
    return handle.resume()
