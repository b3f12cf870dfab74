"""Goal operations made durable: one transaction, version + 1, one ``goal_state`` event.

Goals are documents of kind ``goal`` keyed by thread, like boards. Every method returns a
snapshot ``{thread_id, version, goal}`` where ``goal`` is ``None`` for a thread without one.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from taskloom._runtime import Runtime
from taskloom.domain import goals as ops
from taskloom.domain.common import UNSET, Unset, iso
from taskloom.domain.errors import InvalidInput, InvariantViolation, NotFound
from taskloom.domain.events import GOAL_STATE
from taskloom.domain.goals import Goal, GoalStatus
from taskloom.domain.kinds import GOAL_KIND
from taskloom.domain.threads import check_thread_id
from taskloom.store.base import Transaction

Snapshot = dict[str, Any]
GoalOp = Callable[[Goal | None, datetime], Goal | None]


def load_goal(tx: Transaction, thread_id: str) -> tuple[Goal | None, int]:
    """The thread's goal and its document version, read inside the caller's transaction."""
    doc = tx.load_doc(GOAL_KIND, thread_id)
    if doc is None or doc.state.get("goal") is None:
        return None, 0 if doc is None else doc.version
    return Goal.from_dict(doc.state["goal"]), doc.version


def _snapshot(thread_id: str, version: int, goal: Goal | None) -> Snapshot:
    return {
        "thread_id": thread_id,
        "version": version,
        "goal": goal.to_dict() if goal else None,
        "context": ops.context_block(goal) if goal else None,
    }


def _need(goal: Goal | None) -> Goal:
    if goal is None:
        raise NotFound("this thread has no goal: set one first")
    return goal


class GoalHandle:
    """One thread's goal. Get it with ``tl.goal(thread_id)``."""

    def __init__(self, runtime: Runtime, thread_id: str) -> None:
        self._runtime = runtime
        self.thread_id = check_thread_id(thread_id)

    def _mutate(self, op: GoalOp) -> Snapshot:
        now = self._runtime.now()
        with self._runtime.store.write() as tx:
            goal, version = load_goal(tx, self.thread_id)
            new = op(goal, now)
            if new is goal or new == goal:
                return _snapshot(self.thread_id, version, goal)
            snap = _snapshot(self.thread_id, version + 1, new)
            tx.save_with_event(GOAL_KIND, self.thread_id, version + 1, snap, GOAL_STATE, iso(now))
        return snap

    def get(self) -> Snapshot:
        with self._runtime.store.read() as tx:
            goal, version = load_goal(tx, self.thread_id)
        return _snapshot(self.thread_id, version, goal)

    def goal(self) -> Goal | None:
        with self._runtime.store.read() as tx:
            return load_goal(tx, self.thread_id)[0]

    def set(
        self,
        objective: str,
        *,
        token_budget: int | None = None,
        time_budget_s: float | None = None,
        host: bool = True,
    ) -> Snapshot:
        """Set or replace the goal. Hosts may set any budget; ``host=False`` applies the
        model's rules (it can only keep or lower a budget, never escape budget_limited)."""
        _host(host)
        return self._mutate(
            lambda g, now: ops.set_goal(
                g,
                self.thread_id,
                objective,
                token_budget=token_budget,
                time_budget_s=time_budget_s,
                now=now,
                new_id=self._runtime.new_id,
                host=host,
            )
        )

    def complete(self, evidence: str | None = None, *, host: bool = True) -> Snapshot:
        """Mark the goal complete; ``host=False`` (the model's tool) leaves a paused goal
        alone, so completing it cannot be the model's way round the host's pause."""
        _host(host)
        return self._mutate(lambda g, now: ops.complete(_need(g), evidence, now=now, host=host))

    def block(self, reason: str, *, host: bool = True) -> Snapshot:
        """Mark the goal blocked on a person; ``host=False`` as for :meth:`complete`."""
        _host(host)
        return self._mutate(lambda g, now: ops.block(_need(g), reason, now=now, host=host))

    def pause(self, reason: str | None = None, *, goal_id: str | None = None) -> Snapshot:
        """Host control: stop auto-continuation until resumed; with ``goal_id``, only if that
        goal (or one the model rephrased from it) is still the thread's, as for
        :meth:`suppress`."""

        def op(g: Goal | None, now: datetime) -> Goal:
            goal = _need(g)
            if goal_id is not None and not goal.continues(goal_id):
                return goal
            return ops.pause(goal, now=now, reason=reason)

        return self._mutate(op)

    def resume(self) -> Snapshot:
        """Host control: a paused or blocked goal back to work. A complete goal is refused,
        and so is one out of budget, rather than a success that changes nothing (a user's
        turn on one is fine, :meth:`user_turn`)."""

        def op(g: Goal | None, now: datetime) -> Goal:
            goal = _need(g)
            if goal.status is GoalStatus.COMPLETE:
                raise InvariantViolation("a complete goal cannot be resumed; set a new objective")
            if goal.status is GoalStatus.BUDGET_LIMITED:
                raise InvariantViolation(
                    f"the goal is out of budget ({ops.usage_text(goal.to_dict())}), which resume"
                    " does not lift; raise or remove the budget"
                )
            return ops.resume(goal, now=now)

        return self._mutate(op)

    def user_turn(self) -> Snapshot:
        """A user spoke: resume a paused or blocked goal, lift suppression, stamp activity."""
        return self._mutate(lambda g, now: ops.user_turn(_need(g), now=now))

    def clear(self) -> Snapshot:
        return self._mutate(lambda g, now: None)

    def set_budget(
        self,
        token_budget: int | Unset | None = UNSET,
        *,
        time_budget_s: float | Unset | None = UNSET,
    ) -> Snapshot:
        """Host control: ``None`` removes a budget; a budget not given is left as it is. A
        call that names neither is refused (:class:`InvalidInput`), as the CLI and the tools
        refuse it."""
        if isinstance(token_budget, Unset) and isinstance(time_budget_s, Unset):
            raise InvalidInput("give token_budget or time_budget_s (None removes that budget)")
        return self._mutate(
            lambda g, now: ops.set_budget(
                _need(g), token_budget, now=now, time_budget_s=time_budget_s
            )
        )

    def suppress(
        self, suppressed: bool = True, *, goal_id: str | None = None, user_turns: int | None = None
    ) -> Snapshot:
        """Set continuation suppression; with ``goal_id``, only if that goal is still the
        thread's current one (a turn suppresses the goal it ran, never one set since). A goal
        whose objective the model rephrased is still that goal (:meth:`Goal.continues`). With
        ``user_turns``, only if the goal has had no user turn since it had that many
        (:attr:`Goal.user_turns`): a user who spoke goes before what a turn concluded."""

        if type(suppressed) is not bool:
            raise InvalidInput(f"suppressed is true or false, not {suppressed!r}")

        def op(g: Goal | None, now: datetime) -> Goal:
            goal = _need(g)
            if goal_id is not None and not goal.continues(goal_id):
                return goal
            if user_turns is not None and goal.user_turns != user_turns:
                return goal
            return ops.suppress(goal, suppressed, now=now)

        return self._mutate(op)

    def account_usage(self, goal_id: str, tokens: int = 0, seconds: float = 0.0) -> Snapshot:
        """Charge one turn to the goal if ``goal_id`` is still current (compare-and-set).
        The usage is checked first, so a bad one is refused with or without a goal."""
        ops.check_usage(tokens, seconds)
        applied: list[bool] = []

        def op(g: Goal | None, now: datetime) -> Goal | None:
            if g is None:
                applied.append(False)
                return g
            new, ok = ops.account_usage(g, goal_id, tokens, seconds, now=now)
            applied.append(ok)
            return new

        snap = self._mutate(op)
        return {**snap, "applied": applied[0]}


def _host(host: object) -> None:
    """Refuse a ``host`` that is not ``True`` or ``False``: the text "false" is true to
    Python, and would give a model's call the host's rights."""
    if type(host) is not bool:
        raise InvalidInput(f"host is true or false, not {host!r}")
