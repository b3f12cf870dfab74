"""A thread's turn lease: at most one turn (a scheduler's, a loop's or a user's) at a time.

The lease lives in the database (a document of kind ``goal_turn`` per thread), so it holds
across processes and machines. Each holder gets its own ``owner`` token, and only the owner
releases the lease: a turn that outlived its lease ends without touching the lease another
turn took since (releasing it would let a third scheduler start a turn beside the second).

The lease records its holder's pid and host: a process that died mid-turn leaves the thread to
the next claim on the same host at once, instead of blocking it until the lease runs out. A
user's turn takes the thread even from a turn in flight; that turn, while it still runs, holds
the thread again once the user's turn ends. The goal counts the user's turns
(:attr:`~taskloom.domain.goals.Goal.user_turns`), so a turn can tell that a user spoke while
it ran (:func:`user_spoke`).

The document also counts the thread's failed turns in a row, for the goal that failed them
(a turn that never ended is one): a new goal (after a clear, or a host's new objective) starts
again from zero, one the model rephrased does not.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskloom._runtime import HOST, Runtime, alive, new_token
from taskloom.domain.common import iso
from taskloom.domain.goals import Goal
from taskloom.goals.handle import load_goal
from taskloom.store.base import Transaction

TURN_KIND = "goal_turn"


@dataclass(frozen=True, slots=True)
class TurnLease:
    """A turn held on a thread: the goal as it was when the turn began, and the failed turns
    before this one (a turn that never ended, its process dead or its lease run out, is one)."""

    thread_id: str
    owner: str
    goal: Goal
    failures: int


Holder = dict[str, Any]
"""Who holds a thread's turn: ``owner``, ``pid``, ``host``, ``lease_until`` and ``kind``
(``turn``: a loop's or scheduler's; ``user``: a user's turn)."""


def _holder(lease_s: float, now: float, kind: str) -> Holder:
    return {
        "owner": new_token(),
        "pid": os.getpid(),
        "host": HOST,
        "lease_until": now + lease_s,
        "kind": kind,
    }


def _live(holder: Holder, now: float) -> bool:
    """Whether ``holder`` still holds its lease: unexpired, and not a process of this host that
    no longer runs (which leaves the thread to the next claim at once, not after the lease)."""
    until = holder.get("lease_until")
    if until is None or until <= now:
        return False
    pid = holder.get("pid")
    return not (holder.get("host") == HOST and isinstance(pid, int) and not alive(pid))


def _displaced(state: dict[str, Any], now: float) -> list[Holder]:
    """The turns a user's turn went before that still run: the thread stays theirs after it."""
    return [h for h in state.get("displaced") or [] if _live(h, now)]


def _save(
    tx: Transaction, thread_id: str, version: int, state: dict[str, Any], now: datetime
) -> None:
    tx.save_doc(TURN_KIND, thread_id, version + 1, state, iso(now))


def claim_turn(
    runtime: Runtime,
    thread_id: str,
    lease_s: float,
    eligible: Callable[[Goal], bool] = lambda goal: True,
) -> TurnLease | None:
    """Take the thread's turn for ``lease_s`` seconds, or ``None`` if another turn holds it
    or the thread's goal is missing or not ``eligible``.

    ``eligible`` sees the goal as it is in the same transaction, so a goal paused,
    suppressed or run by another scheduler since the caller looked is not run on a stale
    view.
    """
    now = runtime.now()
    stamp = now.timestamp()
    with runtime.store.write() as tx:
        doc = tx.load_doc(TURN_KIND, thread_id)
        state: dict[str, Any] = dict(doc.state) if doc else {}
        if _live(state, stamp) or _displaced(state, stamp):
            return None
        goal = load_goal(tx, thread_id)[0]
        if goal is None or not eligible(goal):
            return None
        failures = int(state.get("failures") or 0)
        unended = state.get("owner") is not None and state.get("kind", "turn") == "turn"
        if not goal.continues(str(state.get("goal_id") or "")):
            failures = 0
        elif unended:  # the last turn never ended: its process died, or it outran its lease
            failures += 1
        holder = _holder(lease_s, stamp, "turn")
        state = {**holder, "goal_id": goal.lineage_id, "failures": failures}
        _save(tx, thread_id, doc.version if doc else 0, state, now)
    return TurnLease(thread_id, holder["owner"], goal, failures)


def user_spoke(runtime: Runtime, lease: TurnLease) -> bool:
    """Whether the thread's user spoke (:func:`~taskloom.domain.goals.user_turn`) since
    ``lease`` began, under the goal it ran: what the turn concluded before the user spoke
    must not overrule the user."""
    with runtime.store.read() as tx:
        goal = load_goal(tx, lease.thread_id)[0]
    ran = lease.goal
    return goal is not None and goal.continues(ran.lineage_id) and goal.user_turns != ran.user_turns


def hold_for_user(runtime: Runtime, thread_id: str, lease_s: float) -> str:
    """Take the thread's turn for a user's turn, even from a turn in flight, goal or no goal
    (a user always goes first); the owner token to release it with (:func:`end_user_turn`).
    The turns it went before stay recorded, and hold the thread again after it while they
    run: a scheduler must not start a turn beside one still running."""
    now = runtime.now()
    stamp = now.timestamp()
    with runtime.store.write() as tx:
        doc = tx.load_doc(TURN_KIND, thread_id)
        state: dict[str, Any] = dict(doc.state) if doc else {}
        running = [_only_holder(state)] if _live(state, stamp) else []
        holder = _holder(lease_s, stamp, "user")
        state = {
            **state,
            **holder,
            "displaced": running + _displaced(state, stamp),
        }
        _save(tx, thread_id, doc.version if doc else 0, state, now)
    return str(holder["owner"])


def _only_holder(state: dict[str, Any]) -> Holder:
    return {k: state.get(k) for k in ("owner", "pid", "host", "lease_until", "kind")}


def _released(state: dict[str, Any], owner: str, now: float) -> dict[str, Any] | None:
    """The state once ``owner`` lets go: a turn displaced by a user's turn that still runs
    holds the thread again. ``None`` if ``owner`` holds nothing here any more."""
    displaced = _displaced(state, now)
    if state.get("owner") == owner:
        if displaced:
            return {**state, **displaced[0], "displaced": displaced[1:]}
        return {
            **state,
            "owner": None,
            "pid": None,
            "host": None,
            "lease_until": None,
            "displaced": [],
        }
    if any(h.get("owner") == owner for h in state.get("displaced") or []):
        return {**state, "displaced": [h for h in displaced if h.get("owner") != owner]}
    return None


def end_turn(runtime: Runtime, lease: TurnLease, failures: int) -> bool:
    """Release the turn and record ``failures`` in a row, if ``lease`` still holds it;
    whether it did. A lease taken over since is left to its new holder (a user's turn that
    displaced this one no longer waits for it)."""
    now = runtime.now()
    with runtime.store.write() as tx:
        doc = tx.load_doc(TURN_KIND, lease.thread_id)
        state = _released(dict(doc.state), lease.owner, now.timestamp()) if doc else None
        if doc is None or state is None:
            return False
        held = doc.state.get("owner") == lease.owner
        if held:
            state.update(goal_id=lease.goal.lineage_id, failures=failures)
        _save(tx, lease.thread_id, doc.version, state, now)
    return held


def end_user_turn(runtime: Runtime, thread_id: str, owner: str) -> None:
    """Release a user's turn (:func:`hold_for_user`): the failures in a row start again (a
    user spoke), and a turn it went before that still runs holds the thread again."""
    now = runtime.now()
    with runtime.store.write() as tx:
        doc = tx.load_doc(TURN_KIND, thread_id)
        state = _released(dict(doc.state), owner, now.timestamp()) if doc else None
        if doc is not None and state is not None:
            _save(tx, thread_id, doc.version, {**state, "failures": 0}, now)
