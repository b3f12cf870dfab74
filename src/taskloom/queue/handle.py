"""The multi-agent work queue: atomic claims under a lease, fenced by a lease token.

Here the SQL does the work. A claim is one ``UPDATE … RETURNING`` whose WHERE picks the most
urgent eligible ready task (priority, then age), so two claimers can never get the same task:
SQLite serialises writers (``BEGIN IMMEDIATE``), PostgreSQL skips rows another claimer holds
(``FOR UPDATE SKIP LOCKED``). Each claim issues a new random ``lease_token``; ``done``,
``fail``, ``release`` and ``extend`` only apply with the current token, so a worker whose lease
was reclaimed cannot complete or fail the task afterwards (``LeaseLost``). Every change appends
a ``task_state`` event in the same transaction.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from taskloom._runtime import HOST, current_pid, new_token, utcnow
from taskloom.domain.errors import InvalidInput, LeaseLost, NotFound
from taskloom.domain.queue import (
    INT_RANGE,
    MAX_ERROR_BYTES,
    TERMINAL,
    NewTask,
    Task,
    TaskStatus,
    check_agent,
    check_cap,
    check_ids,
    check_kinds,
    check_requeue,
    check_seconds,
    check_text,
    completed_task,
    cut_bytes,
    new_task,
)
from taskloom.queue import doctor, surfacing
from taskloom.queue.waiting import Waiting
from taskloom.store.base import Transaction, Values
from taskloom.store.queue_sql import (
    ADD_CHUNK,
    CLEAR_CLAIM,
    DONE,
    DONE_MANY_CHUNK,
    LIVE_KEY,
    PAYLOAD_AT,
    READ_TASK,
    RECLAIM,
    RETURNING,
    ClaimPlan,
    claim_plan,
    done_and_claim_sql,
    done_many_sql,
    evict_sql,
    expire_sql,
    fenced_sql,
    insert_sql,
    requeue_sql,
    sweep_all_sql,
    sweep_sql,
)

if TYPE_CHECKING:
    from taskloom.client import Taskloom

T = TypeVar("T")
MAX_LIMIT = 2**63 - 1
"""The largest ``list`` limit: the largest integer either backend's LIMIT takes."""
HELD_MAX = 1_000
"""How many claimed tasks a queue remembers for its completions (see ``Queue.done``)."""
SWEEP_EVERY_S = 1.0
"""How often (at most) a process's claims also return expired leases to ready."""
COUNT_EVERY_S = 1.0
"""How long a process trusts its count of ready tasks when far below the cap."""
_STATUSES = tuple(s.value for s in TaskStatus)
DONE_HELD = fenced_sql("sqlite", DONE, returning=False)
"""SQLite's completion of a task this queue holds: the id back is all it needs."""
Held = tuple[Task, str]
"""A task this queue claimed, and its payload's stored text."""


class Queue:
    """``tl.queue``: tasks shared by every agent on the database.

    Each change of a task is one statement, and the database's trigger appends the task's
    ``task_state`` event in that same statement (see the store's schema).
    """

    def __init__(self, tl: Taskloom, *, max_active: int = 10_000) -> None:
        self._tl = tl
        self._max_active = check_cap(max_active)
        self._sweep_due = 0.0
        # The tasks this queue claimed and still holds, by id, with their lease token and their
        # payload's text: a completion under the same lease then knows the task it leaves and
        # needs only the id back (see done).
        self._held: dict[str, tuple[str, Task, str]] = {}
        self._held_lock = threading.Lock()
        # The ready count this process trusts (see _make_room): the cap it was counted
        # for, the room left under it, and when to count again.
        self._counted_cap = self._max_active
        self._room = 0
        self._count_due = 0.0

    @property
    def max_active(self) -> int:
        """The most ready tasks the queue holds (in-progress work is not counted); an add
        over it evicts the least urgent, oldest ready ones (never in-progress work)."""
        return self._max_active

    @max_active.setter
    def max_active(self, value: int) -> None:
        self._max_active = check_cap(value)  # -1 would cancel every ready task

    def _now(self) -> float:
        clock = self._tl.now
        return time.time() if clock is utcnow else clock().timestamp()

    def _claimed(self, rows: list[Values]) -> list[Task]:
        """The tasks a claim returned, remembered with their payload's text (at most
        :data:`HELD_MAX`, oldest forgotten first)."""
        dialect = self._tl.store.dialect
        read, at = READ_TASK[dialect], PAYLOAD_AT[dialect]
        tasks = []
        with self._held_lock:
            held = self._held
            for row in rows:
                task = read(row)
                held[task.id] = (task.lease_token or "", task, row[at])
                tasks.append(task)
            while len(held) > HELD_MAX:
                del held[next(iter(held))]
        return tasks

    def _holding(self, task_id: str, token: str) -> Held | None:
        """The task this queue claimed, and its payload's text, if ``token`` is that claim's
        lease; forgotten either way, as the caller is finishing or changing the task."""
        with self._held_lock:
            entry = self._held.pop(task_id, None)
        return entry[1:] if entry is not None and entry[0] == token else None

    # --- adding -------------------------------------------------------------------------------

    def add(
        self,
        title: str,
        *,
        body: str = "",
        kind: str = "task",
        priority: int = 100,
        source: str | None = None,
        target_agent: str | None = None,
        dedup_key: str | None = None,
        payload: Mapping[str, Any] | None = None,
        delay_s: float | None = None,
        ttl_s: float | None = None,
        max_attempts: int = 3,
    ) -> tuple[Task, bool]:
        """Enqueue a task. With a ``dedup_key`` already live, return that task and ``False``."""
        fields = {
            "title": title,
            "body": body,
            "kind": kind,
            "priority": priority,
            "source": source,
            "target_agent": target_agent,
            "dedup_key": dedup_key,
            "payload": payload,
            "delay_s": delay_s,
            "ttl_s": ttl_s,
            "max_attempts": max_attempts,
        }
        return self._add([new_task(fields)])[0]

    def add_many(self, tasks: Iterable[Mapping[str, Any]]) -> list[tuple[Task, bool]]:
        """Enqueue many tasks in one transaction: each a mapping of :meth:`add`'s arguments
        (``title`` required), answered in order like :meth:`add`.

        Every task is checked before anything is written, so one bad task adds none (the
        error names it by position). A ``dedup_key`` already live, or repeated within the
        batch, answers the live (or first) task and ``False``. A producer with a plan of
        hundreds of tasks pays for one commit, not hundreds.
        """
        if isinstance(tasks, Mapping | str | bytes) or not isinstance(tasks, Iterable):
            raise InvalidInput("add_many takes a list of tasks, each a mapping of add's arguments")
        checked = []
        for n, fields in enumerate(tasks, 1):
            try:
                checked.append(new_task(fields))
            except InvalidInput as exc:
                raise InvalidInput(f"task {n}: {exc}") from None
        if len(checked) > self.max_active:
            raise InvalidInput(
                f"{len(checked)} tasks are more than the queue's cap of {self.max_active}"
            )
        return self._add(checked)

    def _add(self, tasks: list[NewTask]) -> list[tuple[Task, bool]]:
        if not tasks:
            return []
        now = self._now()
        keys = sorted({t.dedup_key for t in tasks if t.dedup_key})
        if not keys and len(tasks) <= ADD_CHUNK and self._has_room(now, len(tasks)):
            return self._insert_only(tasks, now)
        first: dict[str, int] = {}  # dedup key -> position of its first new task
        with self._tl.store.write() as tx:
            for each in keys:  # PostgreSQL: racing adds of one key take turns (in key order)
                tx.lock("dedup", each)
            for chunk in _chunks(keys, ADD_CHUNK):  # an expired task no longer holds its key
                sql = expire_sql(tx.dialect, returning=False, n_keys=len(chunk))
                tx.execute(sql, (now, now, now, *chunk))
            live = {
                r["dedup_key"]: Task.from_row(r)
                for chunk in _chunks(keys, ADD_CHUNK)
                for r in tx.query(
                    "SELECT * FROM tasks WHERE status IN ('ready', 'in_progress')"
                    f" AND dedup_key IN ({', '.join('?' * len(chunk))})",
                    chunk,
                )
            }
            fresh = []
            for at, task in enumerate(tasks):
                key = task.dedup_key
                if key is None or (key not in live and first.setdefault(key, at) == at):
                    fresh.append((self._tl.new_id(), task))
            dialect = tx.dialect
            rows = [
                r for c in _chunks(fresh, ADD_CHUNK) for r in tx.query(*insert_sql(c, now, dialect))
            ]
            evicted = self._make_room(tx, now, len(fresh))
        read = READ_TASK[dialect]
        added = {t.id: t for t in (read(tuple(r.values())) for r in rows)}
        # A new task less urgent than everything in a full queue is evicted at once.
        added.update((i, t) for i, t in evicted.items() if i in added)
        new = iter(added[task_id] for task_id, _ in fresh)
        answers: list[tuple[Task, bool]] = []
        for at, task in enumerate(tasks):
            key = task.dedup_key
            if key is not None and key in live:
                answers.append((live[key], False))
            elif key is not None and first[key] != at:
                answers.append((answers[first[key]][0], False))
            else:
                answers.append((next(new), True))
        return answers

    def _insert_only(self, tasks: list[NewTask], now: float) -> list[tuple[Task, bool]]:
        """:meth:`_add` when there is no dedup key to look up and the room under the cap is
        known (:meth:`_has_room`): the insert is the whole change, one statement and so one
        transaction of its own (on SQLite without ``BEGIN IMMEDIATE`` and ``COMMIT``, on
        PostgreSQL one round trip instead of three)."""
        fresh = [(self._tl.new_id(), task) for task in tasks]
        dialect = self._tl.store.dialect
        rows, _ = self._tl.store.write_chain(*insert_sql(fresh, now, dialect))
        self._room -= len(fresh)
        added = {t.id: t for t in map(READ_TASK[dialect], rows)}
        return [(added[task_id], True) for task_id, _ in fresh]

    def _has_room(self, now: float, n: int) -> bool:
        """Whether this process's last count of ready tasks, under the current cap, is recent
        and leaves room for ``n`` more with a tenth of the cap to spare (see
        :meth:`_make_room`)."""
        cap = self.max_active
        return self._counted_cap == cap and self._room - n >= cap // 10 and now < self._count_due

    def _make_room(self, tx: Transaction, now: float, n: int = 1) -> dict[str, Task]:
        """Enforce the active cap once ``n`` tasks were added: cancel the least urgent, oldest
        ready tasks over it, the new ones among them (a task less urgent than everything in a
        full queue is the one evicted). Returns the tasks evicted, by id.

        Counting ready tasks costs in proportion to the backlog (more than the insert, for a
        large one), so a process counts only when its last count left a
        tenth of the cap or less, or is over :data:`COUNT_EVERY_S` old; in between, its own
        adds use up the room it counted (claims only make more). Producers in *other*
        processes can overshoot the cap until the next count, which evicts the excess.
        """
        cap = self.max_active
        if n == 0:
            return {}
        if self._has_room(now, n):
            self._room -= n
            return {}
        row = tx.query_one("SELECT count(*) AS n FROM tasks WHERE status = 'ready'")
        ready = int(row["n"] if row else 0)  # these adds included
        self._counted_cap, self._count_due = cap, now + COUNT_EVERY_S
        self._room = max(cap - ready, 0)
        if ready <= cap:
            return {}
        rows = tx.query(evict_sql(tx.dialect), (now, now, ready - cap))
        read = READ_TASK[tx.dialect]
        return {t.id: t for t in (read(tuple(r.values())) for r in rows)}

    # --- claiming -----------------------------------------------------------------------------

    def claim(
        self,
        agent_id: str,
        *,
        lease: float = 300.0,
        kinds: str | Sequence[str] | None = None,
        bind_process: bool = True,
    ) -> Task | None:
        """Take the most urgent eligible task for ``agent_id``, or ``None`` if there is none.

        ``bind_process``: record this process, so that if it dies the task returns to ready
        before its lease ends (:meth:`reclaim`, ``taskloom doctor --fix``). Pass ``False``
        when the claim is meant to outlive the process, as ``taskloom tasks next`` does for
        the agent that runs it: only the lease then says when the work is abandoned.
        """
        batch = self.claim_batch(agent_id, 1, lease=lease, kinds=kinds, bind_process=bind_process)
        return batch[0] if batch else None

    def claim_batch(
        self,
        agent_id: str,
        n: int,
        *,
        lease: float = 300.0,
        kinds: str | Sequence[str] | None = None,
        bind_process: bool = True,
    ) -> list[Task]:
        """Take up to ``n`` tasks in one statement, most urgent first (``bind_process`` as
        for :meth:`claim`).

        Expired leases go back to ready first, at most once a second per process (and always
        before an empty answer), so a busy queue does not pay for the sweep on every claim.
        """
        plan = claim_plan(self._tl.store.dialect, agent_id, n, lease, kinds, bind_process)
        sql = plan.sql
        params, swept = self._claim_statement(plan, self._now())
        if not self._tl.store.exists():
            return []
        rows = self._retry_after_sweep(self._write_rows(sql, params), swept, sql, params)
        tasks = self._claimed(rows)
        return sorted(tasks, key=lambda t: (t.priority, t.created_at, t.id)) if n > 1 else tasks

    def _claim_statement(self, plan: ClaimPlan, now: float) -> tuple[list[Any], bool]:
        """A claim's parameters at ``now`` for its checked arguments (``claim_plan``); sweeps
        expired leases first when one is due (the second value says whether it did)."""
        agent, _, lease, kinds, bind_process = plan
        swept = now >= self._sweep_due
        if swept:
            self._sweep(now)
        pid = current_pid() if bind_process else None
        params = [agent, pid, HOST, now, now + lease, new_token(), now, agent, now, now, *kinds]
        return params, swept

    def _retry_after_sweep(
        self, claimed: list[Values], swept: bool, sql: str, params: Sequence[Any]
    ) -> list[Values]:
        """An empty claim that ran without a sweep sweeps and tries once more, so an expired
        lease never waits behind an empty answer."""
        if claimed or swept or not self._sweep(self._now()):
            return claimed
        return self._write_rows(sql, params)

    def _sweep(self, now: float) -> list[Task]:
        """Return expired leases to ready (or dead once ``max_attempts`` is reached), and
        cancel the ready tasks whose ``expires_at`` has passed."""
        self._sweep_due = now + SWEEP_EVERY_S
        store = self._tl.store
        if not store.exists():
            return []
        if store.dialect == "postgres":
            rows = self._write_rows(sweep_all_sql(), (now,) * 9)
        else:
            with store.write() as tx:
                rows = [tuple(r.values()) for r in tx.query(sweep_sql("sqlite"), (now,) * 6)]
                rows += [tuple(r.values()) for r in tx.query(expire_sql("sqlite"), (now,) * 3)]
        read = READ_TASK[store.dialect]
        return [read(r) for r in rows]

    def _write_rows(self, sql: str, params: Sequence[Any]) -> list[Values]:
        """Run one statement that changes tasks as its own transaction; its rows."""
        return self._tl.store.write_chain(sql, params)[0]

    def _write(self, sql: str, params: Sequence[Any]) -> list[Task]:
        """:meth:`_write_rows` for a statement with this dialect's ``RETURNING``: the tasks."""
        read = READ_TASK[self._tl.store.dialect]
        return [read(r) for r in self._write_rows(sql, params)]

    # --- finishing (all fenced by the lease token) ---------------------------------------------

    def _fenced(
        self, task_id: str, token: str, change: str, params: Sequence[Any], *, hold: bool = False
    ) -> Task:
        """``change`` under the caller's lease; with ``hold`` the lease goes on and the task is
        remembered again."""
        check_ids(task_id, token)
        self._holding(task_id, token)
        sql = fenced_sql(self._tl.store.dialect, change)
        rows = self._write_rows(sql, (*params, task_id, token))
        if not rows:
            self._lease_lost(task_id)
        return self._claimed(rows)[0] if hold else READ_TASK[self._tl.store.dialect](rows[0])

    def _lease_lost(self, task_id: str) -> NoReturn:
        status = self._status(task_id)
        if status == "in_progress":
            raise LeaseLost(
                f"lease on task '{task_id}' is no longer yours (status: in_progress): it is"
                " held under another lease token, a newer claim's or the token given is wrong"
            )
        raise LeaseLost(
            f"lease on task '{task_id}' is no longer yours (status: {status}): the lease ended"
            " (the task was finished, failed, released or canceled, or its lease ran out and it"
            " was reclaimed)"
        )

    def _status(self, task_id: str) -> str:
        with self._tl.store.read() as tx:
            current = tx.query_one("SELECT status FROM tasks WHERE id = ?", (task_id,))
        if current is None:
            raise NotFound(f"task '{task_id}' not found")
        return str(current["status"])

    def done(self, task_id: str, lease_token: str, result: str | None = None) -> Task:
        check_ids(task_id, lease_token)
        check_text(result, "a task's result")
        now = self._now()
        held = self._holding(task_id, lease_token)
        if held is None:
            return self._fenced(task_id, lease_token, DONE, (now, now, result))
        sql = fenced_sql(self._tl.store.dialect, DONE, returning=False)
        if not self._write_rows(sql, (now, now, result, task_id, lease_token)):
            self._lease_lost(task_id)
        return completed_task(*held, now, result)

    def done_many(
        self, completions: Iterable[tuple[str, str] | tuple[str, str, str | None]]
    ) -> tuple[list[Task], list[str]]:
        """Complete many tasks in one transaction, each fenced by its own lease token:
        ``completions`` holds ``(task_id, lease_token)`` or ``(task_id, lease_token, result)``.

        A worker that claims with :meth:`claim_batch` acknowledges the batch with one commit
        instead of one per task. A lost lease does not undo the others: the answer is the
        completed tasks and the ids whose lease was no longer theirs (nothing changed for
        those), in the order given.
        """
        items: dict[str, tuple[str, str, str | None]] = {}
        if not isinstance(completions, Iterable):
            raise InvalidInput("done_many takes (task_id, lease_token[, result]) tuples")
        for item in completions:
            if not isinstance(item, tuple | list) or len(item) not in (2, 3):
                raise InvalidInput("done_many takes (task_id, lease_token[, result]) tuples")
            result = item[2] if len(item) == 3 else None
            check_ids(item[0], item[1])
            check_text(result, "a task's result")
            entry = (item[0], item[1], result)
            if items.setdefault(item[0], entry) != entry:  # the same one twice is one
                raise InvalidInput(f"task '{item[0]}' is given twice, differently, to done_many")
        if not items:
            return [], []
        now = self._now()
        dialect = self._tl.store.dialect
        todo = list(items.values())
        held = {t[0]: self._holding(t[0], t[1]) for t in todo}
        known = {i: row for i, row in held.items() if row is not None}
        ids_only = len(known) == len(held)  # every task is one this queue holds
        statements = [
            (done_many_sql(dialect, len(c), not ids_only), [now, now, *(v for t in c for v in t)])
            for c in _chunks(todo, DONE_MANY_CHUNK)
        ]
        if len(statements) == 1:
            rows, _ = self._tl.store.write_chain(*statements[0])
        else:
            with self._tl.store.write() as tx:
                rows = [tuple(r.values()) for sql, ps in statements for r in tx.query(sql, ps)]
        if ids_only:
            tasks = [completed_task(*known[r[0]], now, items[r[0]][2]) for r in rows]
        else:
            tasks = [READ_TASK[dialect](r) for r in rows]
        done = {t.id: t for t in tasks}
        return [done[i] for i in items if i in done], [i for i in items if i not in done]

    def done_and_claim(
        self,
        task_id: str,
        lease_token: str,
        agent_id: str,
        *,
        result: str | None = None,
        lease: float = 300.0,
        kinds: str | Sequence[str] | None = None,
    ) -> tuple[Task, Task | None]:
        """Complete a task and claim the agent's next one in the same transaction: a worker
        loop pays for one commit per task instead of two. If the lease was lost, nothing is
        claimed and ``LeaseLost`` is raised, exactly as from :meth:`done`."""
        check_ids(task_id, lease_token)
        check_text(result, "a task's result")
        dialect = self._tl.store.dialect
        plan = claim_plan(dialect, agent_id, 1, lease, kinds, True)
        claim = plan.sql
        now = self._now()
        claim_params, swept = self._claim_statement(plan, now)
        done_params = (now, now, result, task_id, lease_token)
        held = self._holding(task_id, lease_token)
        if dialect == "postgres":
            done, nxt = self._done_and_claim_pg(held, done_params, claim_params, len(plan.kinds))
        elif held is not None:  # the worker's usual case: only whether the completion matched
            ids, nxt = self._tl.store.write_chain(DONE_HELD, done_params, claim, claim_params)
            done = completed_task(*held, now, result) if ids else None
        else:
            fenced = fenced_sql(dialect, DONE)
            rows, nxt = self._tl.store.write_chain(fenced, done_params, claim, claim_params)
            done = READ_TASK[dialect](rows[0]) if rows else None
        if done is None:
            self._lease_lost(task_id)
        if not nxt:
            nxt = self._retry_after_sweep(nxt, swept, claim, claim_params)
        claimed = self._claimed(nxt)
        return done, claimed[0] if claimed else None

    def _done_and_claim_pg(
        self, held: Held | None, done_params: tuple[Any, ...], claim_params: list[Any], kinds: int
    ) -> tuple[Task | None, list[Values]]:
        """PostgreSQL's :meth:`done_and_claim`: one statement (see ``done_and_claim_sql``)."""
        sql = done_and_claim_sql(kinds, returning=held is None)
        rows, _ = self._tl.store.write_chain(sql, (*done_params, *claim_params))
        if held is None:
            done = [Task.from_values(r[1:]) for r in rows if r[0] == "done"]
            return (done[0] if done else None), [r[1:] for r in rows if r[0] == "next"]
        matched = completed_task(*held, done_params[0], done_params[2]) if rows[0][0] else None
        return matched, [rows[0][1:]] if rows[0][1] is not None else []

    def fail(
        self,
        task_id: str,
        lease_token: str,
        error: str,
        *,
        retry: bool = True,
        retry_delay: float = 0.0,
    ) -> Task:
        """Record a failure: back to ready while attempts remain (and ``retry``), else dead.

        ``retry_delay``: seconds before the task may be claimed again (its ``not_before``);
        without one the next claim may retry it at once, and an outage of a minute uses up
        its attempts in moments. A long ``error`` (a whole traceback) is cut to its first
        :data:`MAX_ERROR_BYTES` bytes, not refused: refusing it would lose the failure."""
        check_text(error, "a failure's error", required=True, limit=None)
        retry_delay = check_seconds(retry_delay, "retry_delay")
        status = (
            "CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'ready' END" if retry else "'dead'"
        )
        now = self._now()
        return self._fenced(
            task_id,
            lease_token,
            f"UPDATE tasks SET status = {status}, last_error = ?, changed_at = ?,"
            f" completed_at = CASE WHEN {status} = 'dead' THEN ? ELSE NULL END,"
            f" not_before = CASE WHEN {status} = 'ready' AND ? > 0 THEN ? ELSE not_before END,"
            f" {CLEAR_CLAIM}",
            (cut_bytes(error, MAX_ERROR_BYTES), now, now, retry_delay, now + retry_delay),
        )

    def release(self, task_id: str, lease_token: str) -> Task:
        """Give the task back untouched (the attempt does not count)."""
        return self._fenced(
            task_id,
            lease_token,
            f"UPDATE tasks SET status = 'ready', attempts = attempts - 1, changed_at = ?,"
            f" {CLEAR_CLAIM}",
            (self._now(),),
        )

    def extend(self, task_id: str, lease_token: str, lease: float = 300.0) -> Task:
        """Renew the lease: it now ends ``lease`` seconds from now."""
        lease = check_seconds(lease, "a lease", positive=True)
        now = self._now()
        return self._fenced(
            task_id,
            lease_token,
            "UPDATE tasks SET lease_expires_at = ?, changed_at = ?",
            (now + lease, now),
            hold=True,
        )

    def cancel(self, task_id: str, reason: str | None = None) -> Task:
        """Cancel a task that is not finished, claimed or not (its worker's lease ends)."""
        check_ids(task_id)
        check_text(reason, "a cancel reason")
        tasks = self._cancel(task_id, reason, "status IN ('ready', 'in_progress')")
        if not tasks:
            raise InvalidInput(f"task '{task_id}' is already {self._status(task_id)}")
        return tasks[0]

    def _cancel(self, task_id: str, reason: str | None, only_if: str) -> list[Task]:
        now = self._now()
        return self._write(
            "UPDATE tasks SET status = 'canceled', result = ?, completed_at = ?, changed_at = ?,"
            f" {CLEAR_CLAIM} WHERE id = ? AND {only_if}{RETURNING[self._tl.store.dialect]}",
            (reason, now, now, task_id),
        )

    # --- recovery -----------------------------------------------------------------------------

    def reclaim(self) -> list[Task]:
        """Return expired leases, and claims by dead processes on this host, to ready (or dead
        once ``max_attempts`` is reached)."""
        now = self._now()
        out = self._sweep(now)
        with self._tl.store.write() as tx:
            for task_id, token in doctor.orphaned(tx, now).items():
                # Under the lease found dead only: on PostgreSQL another worker may have
                # swept and claimed the task since (SQLite holds its lock throughout).
                out += doctor.tasks(
                    tx.query(
                        f"{RECLAIM} last_error = 'worker process died' WHERE id = ?"
                        " AND status = 'in_progress' AND lease_token = ? RETURNING *",
                        (*(now,) * 5, task_id, token),
                    )
                )
        return out

    def requeue(self, task_id: str) -> Task:
        """Put a dead task back to ready with no attempts used (the dead-letter redrive, once
        whatever killed it is fixed); its last error stays for the next worker to read.
        Refused as :func:`~taskloom.domain.queue.check_requeue` says, changing nothing. The
        active cap applies as to an add."""
        check_ids(task_id)
        now = self._now()
        with self._tl.store.write() as tx:
            row = tx.query_one("SELECT * FROM tasks WHERE id = ?", (task_id,))
            if row is None:
                raise NotFound(f"task '{task_id}' not found")
            task, holder = Task.from_row(row), None
            if task.dedup_key is not None and task.status is TaskStatus.DEAD:
                tx.lock("dedup", task.dedup_key)  # as an add of the key takes it
                holder = tx.query_one(LIVE_KEY, (task.dedup_key,))
            check_requeue(task, now, None if holder is None else str(holder["id"]))
            rows = tx.query(requeue_sql(tx.dialect), (now, task_id))
            if not rows:  # PostgreSQL: requeued (or pruned) by another transaction meanwhile
                raise InvalidInput(f"task '{task_id}' is no longer dead: it changed meanwhile")
            requeued = READ_TASK[tx.dialect](tuple(rows[0].values()))
            evicted = self._make_room(tx, now)
        return evicted.get(task_id, requeued)

    def prune(self, older_than_s: float = 7 * 86400) -> int:
        """Delete finished tasks older than the retention window, and their events: a task's
        events cannot be read whole without its row (they are left out of reads), so they
        would only take space until the event log's own retention (``taskloom serve``). The
        newest event stays, whatever it is: event ids are cursors and must never be reused."""
        older_than_s = check_seconds(older_than_s, "the retention window")
        now = self._now()
        old = "status IN ('completed', 'canceled', 'dead') AND completed_at < ?"
        with self._tl.store.write() as tx:
            tx.execute(expire_sql(tx.dialect, returning=False), (now, now, now))
            tx.execute(
                f"DELETE FROM events WHERE task_id IN (SELECT id FROM tasks WHERE {old})"
                " AND id < (SELECT MAX(id) FROM events)",
                (now - older_than_s,),
            )
            return tx.execute(f"DELETE FROM tasks WHERE {old}", (now - older_than_s,))

    # --- reading ------------------------------------------------------------------------------

    def get(self, task_id: str) -> Task:
        check_ids(task_id)
        with self._tl.store.read() as tx:
            row = tx.query_one("SELECT * FROM tasks WHERE id = ?", (task_id,))
        if row is None:
            raise NotFound(f"task '{task_id}' not found")
        return Task.from_row(row)

    def wait(self, task_id: str, timeout: float | None = None) -> Task:
        """The task once it has ended: completed (its ``result``), dead (its ``last_error``)
        or canceled. Looks every 50 ms at first, then less often, at most a second apart
        (:mod:`taskloom.queue.waiting`). ``timeout``: give up after this many seconds with
        :class:`~taskloom.errors.WaitTimeout` (by default, wait for as long as it takes)."""
        waiting = Waiting(task_id, timeout)
        while (task := self.get(task_id)).status not in TERMINAL:
            time.sleep(waiting.pause(task))
        return task

    def list(
        self,
        *,
        status: str | None = None,
        agent: str | None = None,
        kinds: str | Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[Task]:
        """Tasks, most urgent first: of one ``status``, claimed by or meant for ``agent``,
        of one of ``kinds`` (a kind or a list, as a claim takes them)."""
        where, params = ["1 = 1"], []
        if type(limit) is not int or not 0 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be a whole number from 0 to {MAX_LIMIT}")
        if status:
            if status not in _STATUSES:
                raise InvalidInput(f"unknown status '{status}' (one of: {', '.join(_STATUSES)})")
            where.append("status = ?")
            params.append(status)
        if agent:
            agent = check_agent(agent, "the agent to list for")
            where.append("(claimed_by = ? OR target_agent = ?)")
            params += [agent, agent]
        if kinds is not None:
            checked = check_kinds(kinds)
            where.append(f"kind IN ({', '.join('?' * len(checked))})")
            params += checked
        with self._tl.store.read() as tx:
            rows = tx.query(
                f"SELECT * FROM tasks WHERE {' AND '.join(where)}"
                " ORDER BY priority, created_at, id LIMIT ?",
                (*params, limit),
            )
        return [Task.from_row(r) for r in rows]

    def stats(self) -> dict[str, int]:
        counts = {s.value: 0 for s in TaskStatus}
        with self._tl.store.read() as tx:
            for row in tx.query("SELECT status, count(*) AS n FROM tasks GROUP BY status"):
                counts[row["status"]] = int(row["n"])
        counts["total"] = sum(counts.values())
        return counts

    def ready_count(self, agent_id: str) -> int:
        """How many tasks ``agent_id`` could claim now (a lease run out included: a claim
        takes it back first): the count :meth:`surface` shows."""
        return surfacing.ready_count(self._tl.store, check_agent(agent_id), self._now())

    def unsee(self, agent_id: str) -> None:
        """Forget the block ``agent_id`` last saw, so :meth:`surface` shows it again: for a
        hook that could not deliver it (a closed stdout, a full disk)."""
        surfacing.unsee(self._tl.store, check_agent(agent_id))

    def surface(self, agent_id: str, *, claim: str = "") -> str | None:
        """The ready-task block for ``agent_id``, or ``None`` if nothing changed since the
        agent last saw it (the cursor lives in the database, shared by every process).
        ``claim``: how the block tells the agent to claim a task (default: the CLI command,
        :func:`~taskloom.domain.queue.claim_command`)."""
        agent_id = check_agent(agent_id)
        if type(claim) is not str:
            raise InvalidInput(
                f"claim must be text (how to claim a task), not {type(claim).__name__}"
            )
        return surfacing.surface(self._tl.store, agent_id, self._now(), claim)

    def doctor(
        self, *, fix: bool = False, stuck_after_s: float = 3600, poisoned_at: int = 5
    ) -> dict[str, Any]:
        """Find stuck (lease long expired), orphaned (claimed by a process of this host that
        has died), poisoned (many attempts) and dead tasks. With ``fix``, reclaim stuck and
        orphaned ones, then cancel the poisoned ready ones (those just reclaimed included, so
        one run is enough); live leases are never touched."""
        stuck_after_s = check_seconds(stuck_after_s, "stuck_after_s")
        if type(poisoned_at) is not int or not 1 <= poisoned_at <= INT_RANGE[1]:
            raise InvalidInput(f"poisoned_at must be a whole number from 1 to {INT_RANGE[1]}")
        now = self._now()
        with self._tl.store.read() as tx:
            stuck = doctor.stuck(tx, now, stuck_after_s)
            orphaned = doctor.orphaned(tx, now)
        fixed = [t.id for t in self.reclaim()] if fix else []
        with self._tl.store.read() as tx:
            poisoned = doctor.poisoned(tx, poisoned_at)
            dead = doctor.dead(tx)
        if fix:
            for task in poisoned:
                # Only while still ready: a worker may have claimed it since it was listed.
                why = f"doctor: poisoned after {task.attempts} attempts"
                if self._cancel(task.id, why, "status = 'ready'") and task.id not in fixed:
                    fixed.append(task.id)
        return {  # each list in id order, the same on both backends
            "stuck": [t.id for t in stuck],
            "orphaned": sorted(orphaned),
            "poisoned": [t.id for t in poisoned],
            "dead": [t.id for t in dead],
            "fixed": sorted(fixed),
        }


def _chunks(items: Sequence[T], size: int) -> list[Sequence[T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


__all__ = ["TERMINAL", "Queue"]
