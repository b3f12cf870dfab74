"""The queue's tasks table on PostgreSQL: a change the queue makes on its own is one
statement on an autocommit connection, its own transaction in one round trip (``BEGIN`` and
``COMMIT`` would be two more); the sweep and a completion plus the next claim are one
statement each for the same reason.

Groups: a claim takes a grouped task only if no task of its group is in progress, as its
statement's snapshot shows. Two claims racing for one group each see the other's task still
ready; the second to write then meets the unique index ``tasks_group_running`` (at most one
task of a group in progress), waits for the first to commit, and fails having changed
nothing. It is run again, on a snapshot that shows the first's claim, and takes another
task or none. So the database, not a check after the claim, keeps a group to one task in
progress, and a claim stays one statement.

Two completions that each claim the next task of the other's group can each wait for the
other to commit, on that index: PostgreSQL then aborts one statement (a deadlock), which has
changed nothing, and it is run again as a lost race is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from taskloom.domain.errors import StoreBusy, StoreError
from taskloom.domain.lease import Claim
from taskloom.domain.queue import Task
from taskloom.store import queue_sql as sql
from taskloom.store.base import Row, Store, Transaction
from taskloom.store.tasks import SqlTaskTable, claim_params, count

Autocommit = Callable[[str, Sequence[Any]], list[Row]]
"""Runs one statement as a transaction of its own and answers its rows."""
GROUP_INDEX = "tasks_group_running"
GROUP_RETRIES = 20
"""How often a claim that lost a race for a group is run again: each loss is another
claim's win, so running out means twenty claimers won in turn, and the database is busy."""


def _lost_group_race(exc: StoreError) -> bool:
    """Whether a statement failed having changed nothing because another one won a race: a
    claim of the same group (the index), or any deadlock (the statement aborted whole)."""
    cause = exc.__cause__
    if isinstance(cause, psycopg.errors.DeadlockDetected):
        return True
    return isinstance(cause, psycopg.errors.UniqueViolation) and (
        cause.diag.constraint_name == GROUP_INDEX
    )


class PgTaskTable(SqlTaskTable):
    def __init__(self, store: Store, autocommit: Autocommit) -> None:
        super().__init__(store)
        self._autocommit = autocommit

    def _change(self, statement: str, params: Sequence[Any]) -> list[Row]:
        """The statement run; a claim that lost a race for a group, run again."""
        for _ in range(GROUP_RETRIES):
            try:
                return self._autocommit(statement, params)
            except StoreError as exc:
                if not _lost_group_race(exc):
                    raise
        raise StoreBusy(
            f"database is busy: {GROUP_RETRIES} claims in a row lost a race for a group"
        )

    def count_ready(self, tx: Transaction, cap: int) -> int:
        """Counted on every add: a row that each add (and each failure back to ready)
        updated would make concurrent adds take turns."""
        return count(tx, sql.COUNT_READY_SQL)

    def sweep(self, now: float) -> list[Task]:
        return [Task.from_row(r) for r in self._change(sql.sweep_all_sql(), (now,) * 9)]

    def done_and_claim(
        self,
        task_id: str,
        token: str,
        result: str | None,
        claim: Claim,
        now: float,
        held: Task | None = None,
    ) -> tuple[Task | None, list[Task]]:
        """One statement, which returns the completed row whether or not ``held`` is given."""
        statement = sql.done_and_claim_sql(len(claim.kinds))
        rows = self._change(
            statement, (now, now, result, task_id, token, *claim_params(claim, now))
        )
        done, claimed = None, []
        for row in rows:
            step = row.pop("step")
            if step == "done":
                done = Task.from_row(row)
            else:
                claimed.append(Task.from_row(row))
        return done, claimed
