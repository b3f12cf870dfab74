"""The queue's tasks table on PostgreSQL: a change the queue makes on its own is one
statement on an autocommit connection, its own transaction in one round trip (``BEGIN`` and
``COMMIT`` would be two more); the sweep and a completion plus the next claim are one
statement each for the same reason."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from taskloom.domain.queue import Claim, Task
from taskloom.store import queue_sql as sql
from taskloom.store.base import Row, Store
from taskloom.store.tasks import SqlTaskTable, claim_params

Autocommit = Callable[[str, Sequence[Any]], list[Row]]
"""Runs one statement as a transaction of its own and answers its rows."""


class PgTaskTable(SqlTaskTable):
    def __init__(self, store: Store, autocommit: Autocommit) -> None:
        super().__init__(store)
        self._autocommit = autocommit

    def _change(self, statement: str, params: Sequence[Any]) -> list[Row]:
        return self._autocommit(statement, params)

    def sweep(self, now: float) -> list[Task]:
        return [Task.from_row(r) for r in self._change(sql.sweep_all_sql(), (now,) * 9)]

    def done_and_claim(
        self, task_id: str, token: str, result: str | None, claim: Claim, now: float
    ) -> tuple[Task | None, list[Task]]:
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
