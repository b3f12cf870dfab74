"""The queue's tasks table over any backend: :class:`SqlTaskTable` runs the statements of
:mod:`taskloom.store.queue_sql` in the store's transactions and reads every row it gets back
with :meth:`Task.from_row`.

SQLite uses it as it is. PostgreSQL overrides how a change runs as a transaction of its own
(one round trip, :mod:`taskloom.store.pg_tasks`) and makes the sweep and a completion plus
the next claim one statement each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from taskloom.domain.lease import Claim, completed
from taskloom.domain.queue import DEFAULT_ROW, NewTask, Task
from taskloom.store import graph_sql as graph
from taskloom.store import queue_sql as sql
from taskloom.store.base import Row, Store, TaskTable, Transaction, encode


class SqlTaskTable(TaskTable):
    """:class:`~taskloom.store.base.TaskTable` in SQL both backends speak (``dialect``
    picks the few statements that differ)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.dialect = store.dialect

    def _change(self, statement: str, params: Sequence[Any]) -> list[Row]:
        """Run one statement that changes tasks as a transaction of its own; its rows."""
        with self.store.write() as tx:
            return tx.query(statement, params)

    def _one(self, statement: str, params: Sequence[Any]) -> Task | None:
        rows = self._change(statement, params)
        return Task.from_row(rows[0]) if rows else None

    # --- steps of the caller's transaction ------------------------------------------------

    def get(self, tx: Transaction, task_id: str) -> Task | None:
        row = tx.query_one(sql.GET_SQL, (task_id,))
        return None if row is None else Task.from_row(row)

    def live(self, tx: Transaction, keys: Sequence[str], now: float) -> dict[str, Task]:
        if not keys:
            return {}
        keys_json = encode(list(keys))
        tx.execute(
            sql.expire_sql(self.dialect, returning=False, keys=True), (now,) * 3 + (keys_json,)
        )
        rows = tx.query(sql.LIVE_SQL.format(keys=sql.key_list(self.dialect)), (keys_json,))
        return {r["dedup_key"]: Task.from_row(r) for r in rows}

    def insert(
        self,
        tx: Transaction,
        tasks: Sequence[tuple[str, NewTask]],
        now: float,
        blocked: Mapping[str, str | None] | None = None,
    ) -> list[Task]:
        if not tasks:
            return []
        blocked = blocked or {}
        rows = [
            (
                task_id,
                t.title,
                t.body,
                t.kind,
                t.priority,
                t.source,
                t.target_agent,
                t.dedup_key,
                t.payload_json,
                now + t.delay_s if t.delay_s else None,
                now + t.ttl_s if t.ttl_s else None,
                t.max_attempts,
                "blocked" if task_id in blocked else "ready",
                blocked.get(task_id),
                t.group_key,
                encode(list(t.depends_on)) if t.depends_on else None,
                encode(list(t.depends_on_keys)) if t.depends_on_keys else None,
                now,
                now,
            )
            for task_id, t in tasks
        ]
        tx.execute_many(sql.INSERT_SQL, rows)
        return [
            Task.from_row({**DEFAULT_ROW, **dict(zip(sql.NEW_COLUMNS, row, strict=True))})
            for row in rows
        ]

    def evict_over(self, tx: Transaction, cap: int, now: float) -> list[Task]:
        over = self.count_ready(tx, cap) - cap
        if over <= 0:
            return []
        return [Task.from_row(r) for r in tx.query(sql.evict_sql(self.dialect), (now, now, over))]

    def count_ready(self, tx: Transaction, cap: int) -> int:
        """The ready tasks, counted once more than ``cap`` may be ready; until then, the
        bound SQLite's triggers keep, which a claim never writes. A count lowers the bound to
        what stays ready after the tasks over the cap are evicted."""
        bound = count(tx, sql.READY_BOUND_SQL)
        if bound <= cap:
            return bound
        ready = count(tx, sql.COUNT_READY_SQL)
        tx.execute(sql.SET_READY_BOUND_SQL, (min(ready, cap),))
        return ready

    def holder(self, tx: Transaction, dedup_key: str) -> str | None:
        row = tx.query_one(sql.HOLDER_SQL, (dedup_key,))
        return None if row is None else str(row["id"])

    def requeue(self, tx: Transaction, task_id: str, now: float) -> Task | None:
        row = tx.query_one(sql.REQUEUE_SQL, (now, task_id))
        return None if row is None else Task.from_row(row)

    def host_claims(self, tx: Transaction, host: str, now: float) -> list[tuple[str, int, str]]:
        rows = tx.query(sql.HOST_CLAIMS_SQL, (now, host))
        return [(str(r["id"]), int(r["pid"]), str(r["lease_token"])) for r in rows]

    def reclaim_dead(self, tx: Transaction, task_id: str, token: str, now: float) -> Task | None:
        row = tx.query_one(sql.DEAD_WORKER_SQL, (*(now,) * 5, task_id, token))
        return None if row is None else Task.from_row(row)

    def prune(self, tx: Transaction, before: float, now: float) -> int:
        tx.execute(sql.expire_sql(self.dialect, returning=False), (now, now, now))
        if self.dialect == "postgres":
            tx.query_one(sql.PRUNE_LOCK_SQL, (before,))
        tx.execute(sql.PRUNE_EVENTS_SQL, (before, before))
        tx.execute(sql.PRUNE_DEPS_SQL, (before, before))
        return tx.execute(sql.PRUNE_TASKS_SQL, (before, before))

    # --- the work graph ---------------------------------------------------------------------

    def statuses(self, tx: Transaction, ids: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        if not ids:
            return {}
        rows = tx.query(graph.statuses_sql(self.dialect), (encode(list(ids)),))
        return {str(r["id"]): (str(r["status"]), r["result"]) for r in rows}

    def key_tasks(
        self, tx: Transaction, keys: Sequence[str]
    ) -> dict[str, tuple[str, str, str | None]]:
        if not keys:
            return {}
        out: dict[str, tuple[str, str, str | None]] = {}
        for r in tx.query(graph.key_tasks_sql(self.dialect), (encode(list(keys)),)):
            out.setdefault(str(r["dedup_key"]), (str(r["id"]), str(r["status"]), r["result"]))
        return out

    def insert_deps(
        self, tx: Transaction, rows: Sequence[tuple[str, int, str | None, str | None]]
    ) -> None:
        if rows:
            tx.execute(graph.insert_deps_sql(self.dialect), (encode(list(rows)),))

    def waiting_keys(self, tx: Transaction, keys: Sequence[str]) -> list[str]:
        if not keys:
            return []
        statement = graph.WAITING_KEYS_SQL.format(keys=sql.key_list(self.dialect))
        return [str(r["dep_key"]) for r in tx.query(statement, (encode(list(keys)),))]

    def bind_key(self, tx: Transaction, key: str, task_id: str) -> list[str]:
        return [str(r["task_id"]) for r in tx.query(graph.BIND_KEY_SQL, (task_id, key, key))]

    def reaches_itself(self, tx: Transaction, task_id: str) -> bool:
        return tx.query_one(graph.reaches_itself_sql(self.dialect), (task_id, task_id)) is not None

    def around(self, tx: Transaction, ids: Sequence[str]) -> list[Row]:
        return tx.query(graph.around_sql(self.dialect), (encode(list(ids)),)) if ids else []

    def set_blocked(self, tx: Transaction, reasons: Mapping[str, str | None], now: float) -> None:
        if not reasons:
            return
        rows = [[i, "ready" if why is None else "blocked", why] for i, why in reasons.items()]
        tx.execute(graph.restatus_sql(self.dialect), (encode(rows), now))

    def blocks_others(self, tx: Transaction, task_id: str) -> bool:
        return tx.query_one(graph.HAS_BLOCKED_SQL, (task_id,)) is not None

    def deps_of(self, tx: Transaction, ids: Sequence[str]) -> list[Row]:
        return tx.query(graph.deps_of_sql(self.dialect), (encode(list(ids)),)) if ids else []

    def holders(self, tx: Transaction, groups: Sequence[str], now: float) -> dict[str, str]:
        if not groups:
            return {}
        rows = tx.query(graph.holders_sql(self.dialect), (encode(list(groups)), now))
        return {str(r["group_key"]): str(r["id"]) for r in rows}

    def get_many(self, tx: Transaction, ids: Sequence[str]) -> list[Task]:
        if not ids:
            return []
        statement = f"{sql.GET_MANY_SQL}{sql.key_list(self.dialect)})"
        found = {r["id"]: Task.from_row(r) for r in tx.query(statement, (encode(list(ids)),))}
        return [found[i] for i in ids if i in found]

    def ready_rows(
        self,
        tx: Transaction,
        agent: str | None,
        now: float,
        kinds: Sequence[str],
        limit: int | None = None,
        *,
        grouped: bool = False,
    ) -> list[tuple[str, str | None]]:
        params = (*_claimable(agent, now), *kinds, *(() if limit is None else (limit,)))
        limited = limit is not None
        statement = graph.ready_sql(agent is not None, len(kinds), limited, grouped)
        rows = tx.query(statement, params)
        return [(str(r["id"]), r["group_key"]) for r in rows]

    def waiting(
        self, tx: Transaction, agent: str | None, now: float, kinds: Sequence[str], limit: int
    ) -> list[Task]:
        params = (now, *_claimable(agent, now), *kinds, limit)
        rows = tx.query(graph.waiting_sql(agent is not None, len(kinds)), params)
        return [Task.from_row(r) for r in rows]

    def find(
        self,
        tx: Transaction,
        *,
        status: str | None,
        agent: str | None,
        kinds: Sequence[str] | None,
        limit: int,
        now: float,
    ) -> list[Task]:
        params: list[Any] = []
        if status is not None:
            params.append(now if status in sql.SHOWN_AS else status)
        params += [] if agent is None else [agent, agent]
        params += [*(kinds or ()), limit]
        statement = sql.list_sql(status, agent is not None, len(kinds or ()))
        return [Task.from_row(r) for r in tx.query(statement, params)]

    def counts(self, tx: Transaction, now: float) -> dict[str, int]:
        return {str(r["status"]): int(r["n"]) for r in tx.query(sql.COUNTS_SQL, (now,))}

    def lapsed(self, tx: Transaction, now: float) -> list[Task]:
        return [Task.from_row(r) for r in tx.query(sql.LAPSED_SQL, (now,))]

    def poisoned(self, tx: Transaction, attempts: int) -> list[Task]:
        return [Task.from_row(r) for r in tx.query(sql.POISONED_SQL, (attempts,))]

    def ids_in(self, tx: Transaction, status: str) -> list[str]:
        return [str(r["id"]) for r in tx.query(sql.IDS_IN_SQL, (status,))]

    def claimable_count(
        self, tx: Transaction, agent: str | None, now: float, kinds: Sequence[str] = ()
    ) -> int:
        statement = graph.claimable_count_sql(agent is not None, len(kinds))
        row = tx.query_one(statement, (*_claimable(agent, now), *kinds))
        return int(row["n"]) if row else 0

    def seen(self, tx: Transaction, agent: str) -> str | None:
        row = tx.query_one(sql.SEEN_SQL, (agent,))
        return None if row is None else str(row["digest"])

    def see(self, tx: Transaction, agent: str, digest: str, now: float) -> bool:
        return tx.execute(sql.SEE_SQL, (agent, digest, now)) > 0

    def unsee(self, tx: Transaction, agent: str) -> None:
        tx.execute(sql.UNSEE_SQL, (agent,))

    # --- one transaction each ---------------------------------------------------------------

    def claim(self, claim: Claim, now: float) -> list[Task]:
        rows = self._change(claim_sql(self.dialect, claim), claim_params(claim, now))
        tasks = [Task.from_row(r) for r in rows]
        # A statement that changes several rows returns them in no promised order.
        return (
            sorted(tasks, key=lambda t: (t.priority, t.created_at, t.id)) if claim.n > 1 else tasks
        )

    def sweep(self, now: float) -> list[Task]:
        with self.store.write() as tx:
            rows = tx.query(sql.sweep_sql(self.dialect), (now,) * 6)
            rows += tx.query(sql.expire_sql(self.dialect), (now,) * 3)
        return [Task.from_row(r) for r in rows]

    def done(self, task_id: str, token: str, result: str | None, now: float) -> Task | None:
        return self._one(sql.DONE_SQL, (now, now, result, task_id, token))

    def done_and_claim(
        self,
        task_id: str,
        token: str,
        result: str | None,
        claim: Claim,
        now: float,
        held: Task | None = None,
    ) -> tuple[Task | None, list[Task]]:
        params = (now, now, result, task_id, token)
        with self.store.write() as tx:
            done = tx.query(sql.DONE_SQL if held is None else sql.DONE_HELD_SQL, params)
            claimed = (
                tx.query(claim_sql(self.dialect, claim), claim_params(claim, now)) if done else []
            )
        if not done:
            return None, []
        task = Task.from_row(done[0]) if held is None else completed(held, result, now)
        return task, [Task.from_row(r) for r in claimed]

    def done_many(
        self,
        items: Sequence[tuple[str, str, str | None]],
        now: float,
        held: Mapping[str, Task] | None = None,
    ) -> list[Task]:
        params = (encode(list(items)), now, now)
        if held is None:
            return [Task.from_row(r) for r in self._change(sql.done_many_sql(self.dialect), params)]
        rows = self._change(sql.done_many_sql(self.dialect, ids_only=True), params)
        results = {task_id: result for task_id, _, result in items}
        return [completed(held[r["id"]], results[r["id"]], now) for r in rows]

    def fail(
        self, task_id: str, token: str, error: str, now: float, *, retry: bool, delay: float
    ) -> Task | None:
        params = (error, now, now, delay, now + delay, task_id, token)
        return self._one(sql.fail_sql(retry), params)

    def release(self, task_id: str, token: str, now: float) -> Task | None:
        return self._one(sql.RELEASE_SQL, (now, task_id, token))

    def extend(self, task_id: str, token: str, until: float, now: float) -> Task | None:
        return self._one(sql.EXTEND_SQL, (until, now, task_id, token))

    def cancel(
        self, task_id: str, reason: str | None, now: float, *, ready_only: bool
    ) -> Task | None:
        return self._one(sql.cancel_sql(ready_only), (reason, now, now, task_id))


def claim_sql(dialect: str, claim: Claim) -> str:
    """The statement of ``claim``."""
    return sql.claim_sql(dialect, len(claim.kinds), claim.n)


def claim_params(claim: Claim, now: float) -> tuple[Any, ...]:
    """The parameters of :func:`claim_sql` at ``now``."""
    agent = claim.agent
    lease_end = now + claim.lease
    params = (
        agent,
        claim.pid,
        claim.host,
        now,
        lease_end,
        claim.token,
        now,
        agent,
        now,
        now,
        *claim.kinds,
    )
    if claim.n > 1:  # the batch's own rule on groups (sql.FIRST_OF_GROUP)
        return (*params, agent, now, now, *claim.kinds)
    return params


def count(tx: Transaction, statement: str) -> int:
    """The ``n`` of a statement that counts, in one row."""
    row = tx.query_one(statement)
    return int(row["n"]) if row else 0


def _claimable(agent: str | None, now: float) -> tuple[object, ...]:
    """The parameters of :func:`~taskloom.store.queue_sql.claimable`."""
    return (now, *(() if agent is None else (agent,)), now, now, now)
