"""A thread's turn lease: at most one turn (a scheduler's, a loop's or a user's) at a time.

The lease lives in the database (a document of kind ``goal_turn`` per thread), so it holds
across processes and machines. Each holder gets its own ``owner`` token, and only the owner
releases the lease: a turn that outlived its lease ends without touching the lease another
turn took since (releasing it let a third scheduler start a turn beside the second).

The lease records its holder's pid and host: a process that died mid-turn leaves the thread to
the next claim on the same host at once, instead of blocking it until the lease runs out.

The document also counts the thread's failed turns in a row, for the goal that failed them:
a new goal (after a clear, or a host's new objective) starts again from zero, one the model
rephrased does not.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from taskloom.domain.common import iso
from taskloom.domain.goals import Goal
from taskloom.goals import load_goal
from taskloom.ids import new_token
from taskloom.process import HOST, alive

if TYPE_CHECKING:
    from taskloom.client import Taskloom

TURN_KIND = "goal_turn"


@dataclass(frozen=True, slots=True)
class TurnLease:
    """A turn held on a thread: the goal as it was when the turn began, and the failed turns
    before this one."""

    thread_id: str
    owner: str
    goal: Goal
    failures: int


def claim_turn(
    tl: Taskloom,
    thread_id: str,
    lease_s: float,
    eligible: Callable[[Goal], bool] = lambda goal: True,
    *,
    force: bool = False,
) -> TurnLease | None:
    """Take the thread's turn for ``lease_s`` seconds, or ``None`` if another turn holds it
    or the thread's goal is missing or not ``eligible``.

    ``eligible`` sees the goal as it is in the same transaction, so a goal paused,
    suppressed or run by another scheduler since the caller looked is not run on a stale
    view. ``force`` takes the turn even from a holder (a user's turn goes first).
    """
    now = tl.now()
    with tl.store.write() as tx:
        doc = tx.load_doc(TURN_KIND, thread_id)
        state: dict[str, Any] = dict(doc.state) if doc else {}
        until = state.get("lease_until")
        held = until is not None and until > now.timestamp() and not _holder_died(state)
        if held and not force:
            return None
        goal = load_goal(tx, thread_id)[0]
        if goal is None or not eligible(goal):
            return None
        failures = int(state.get("failures") or 0)
        if not goal.continues(str(state.get("goal_id") or "")):
            failures = 0
        owner = new_token()
        state = {
            "owner": owner,
            "pid": os.getpid(),
            "host": HOST,
            "lease_until": now.timestamp() + lease_s,
            "goal_id": goal.goal_id,
            "failures": failures,
        }
        tx.save_doc(TURN_KIND, thread_id, (doc.version if doc else 0) + 1, state, iso(now))
    return TurnLease(thread_id, owner, goal, failures)


def _holder_died(state: dict[str, Any]) -> bool:
    """Whether the lease's holder was a process of this host that no longer runs."""
    pid = state.get("pid")
    return state.get("host") == HOST and isinstance(pid, int) and not alive(pid)


def end_turn(tl: Taskloom, lease: TurnLease, failures: int) -> bool:
    """Release the turn and record ``failures`` in a row, if ``lease`` still holds it;
    whether it did. A lease taken over since is left to its new holder."""
    now = tl.now()
    with tl.store.write() as tx:
        doc = tx.load_doc(TURN_KIND, lease.thread_id)
        if doc is None or doc.state.get("owner") != lease.owner:
            return False
        state = {
            "owner": None,
            "lease_until": None,
            "goal_id": lease.goal.goal_id,
            "failures": failures,
        }
        tx.save_doc(TURN_KIND, lease.thread_id, doc.version + 1, state, iso(now))
    return True
