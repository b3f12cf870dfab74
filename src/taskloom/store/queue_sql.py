"""The queue's SQL: every statement that changes tasks, built once per shape and cached.

Kept apart from :class:`taskloom.queue.handle.Queue` so the statements can be read (and their plans
checked, see tests) on their own. Each returns the tasks it changed the dialect's way
(:data:`RETURNING`), read back by :data:`READ_TASK`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from taskloom.domain.errors import InvalidInput
from taskloom.domain.queue import (
    FIELD_NAMES,
    PACKED_FIELDS,
    TIME_FIELDS,
    NewTask,
    Task,
    check_agent,
    check_kinds,
    check_seconds,
)

CLEAR_LEASE = "pid = NULL, host = NULL, lease_expires_at = NULL, lease_token = NULL"
"""A lease ended. A completion ends only this: the task keeps who claimed it and when, the
worker that finished it (``list(agent=…, status="completed")``)."""
CLEAR_CLAIM = f"claimed_by = NULL, claimed_at = NULL, {CLEAR_LEASE}"
"""A claim undone: the task goes back to ready, or ends unfinished."""
ELIGIBLE = (
    "status = 'ready' AND lease_expires_at IS NULL AND (target_agent IS NULL OR target_agent = ?)"
    " AND (not_before IS NULL OR not_before <= ?) AND (expires_at IS NULL OR expires_at > ?)"
)
"""A claimable task. A ready task never holds a lease (every way back to ready clears it);
saying so lets SQLite read its work index, ``(status, lease_expires_at, priority, …)``, in
the claim's order."""
CLAIMABLE = (
    "(status = 'ready' AND lease_expires_at IS NULL OR status = 'in_progress'"
    " AND lease_expires_at <= ? AND attempts < max_attempts)"
    " AND (target_agent IS NULL OR target_agent = ?)"
    " AND (not_before IS NULL OR not_before <= ?) AND (expires_at IS NULL OR expires_at > ?)"
)
"""What an agent could claim now (parameters: now, agent, now, now): the :data:`ELIGIBLE`
tasks, and those whose lease ran out that a claim's sweep would make ready first (see
:data:`RECLAIM`). What the hooks count and show, which only read: a sweep would write, and
create a database the hooks must not."""


def returning_sql(dialect: str, table: str = "") -> str:
    """How a statement that changes tasks returns them: SQLite packs each into one JSON text,
    its payload and its times (:meth:`Task.from_packed`), PostgreSQL names the columns
    (:meth:`Task.from_values`). ``table``: a qualifier for the columns (``"tasks."``)."""
    if dialect == "postgres":
        return f" RETURNING {', '.join(table + name for name in FIELD_NAMES)}"
    packed = ", ".join(table + name for name in PACKED_FIELDS)
    times = ", ".join(table + name for name in TIME_FIELDS)
    return f" RETURNING json_array({packed}), {table}payload, {times}"


RETURNING = {dialect: returning_sql(dialect) for dialect in ("sqlite", "postgres")}
READ_TASK = {"sqlite": Task.from_packed, "postgres": Task.from_values}
PAYLOAD_AT = {"sqlite": 1, "postgres": FIELD_NAMES.index("payload")}
"""Where a returned row (as :data:`READ_TASK` reads it) holds the payload's stored text."""
EXPIRED_RESULT = "expired: its expires_at passed before it was done"
RECLAIM = (
    "UPDATE tasks SET status = CASE WHEN attempts >= max_attempts THEN 'dead'"
    " WHEN expires_at <= ? THEN 'canceled' ELSE 'ready' END,"
    " completed_at = CASE WHEN attempts >= max_attempts OR expires_at <= ? THEN ? END,"
    " result = CASE WHEN attempts < max_attempts AND expires_at <= ?"
    f" THEN '{EXPIRED_RESULT}' ELSE result END, changed_at = ?, {CLEAR_CLAIM},"
)
"""A leased task given up (its lease ran out, its worker died): back to ready, or dead once
``max_attempts`` is reached, or canceled if its own ``expires_at`` has passed meanwhile (as
:func:`expire_sql` would, and in this statement: PostgreSQL's one-statement sweep,
:func:`sweep_all_sql`, reads one snapshot, where a task this sets ready is not yet ready).
Parameters: now five times; the caller adds ``last_error`` and the WHERE clause."""


def picked(dialect: str, pick: str) -> str:
    """``id`` among the tasks ``pick`` (a ``SELECT id …``) selects, on PostgreSQL locking
    them and skipping those another transaction holds. There the pick is an array built once
    (an InitPlan): as the inner side of a join, ``id IN (…)`` would run again for each outer
    row, each run after the first skipping the rows the statement had just changed and going
    on to the next ones, so a ``LIMIT 1`` eviction would cancel two tasks."""
    if dialect == "postgres":
        return f"id = ANY(ARRAY({pick} FOR UPDATE SKIP LOCKED))"
    return f"id IN ({pick})"


def housekeeping_where(dialect: str, condition: str) -> str:
    """The WHERE clause of a statement that tidies up many tasks (expired leases, expired
    ready tasks). On PostgreSQL it skips the tasks another transaction holds (:func:`picked`):
    such a statement never waits for a row, so it is never part of a deadlock. Two of them,
    or one and an add, locking expired tasks in different orders would deadlock, failing the
    caller's add or claim. A task skipped is being changed by someone else; the next sweep sees
    it again if it still needs one."""
    if dialect == "postgres":
        return f" WHERE {picked(dialect, f'SELECT id FROM tasks WHERE {condition}')}"
    return f" WHERE {condition}"


@functools.lru_cache(maxsize=8)
def sweep_sql(dialect: str) -> str:
    """Expired leases given up (:data:`RECLAIM`). Parameters: now six times. The lease's
    expiry is the task's last error, even after an earlier failure: it is why the task
    moved."""
    picked = housekeeping_where(dialect, "status = 'in_progress' AND lease_expires_at <= ?")
    return f"{RECLAIM} last_error = 'lease expired'{picked}{RETURNING[dialect]}"


@functools.lru_cache(maxsize=16)
def expire_sql(dialect: str, returning: bool = True, n_keys: int = 0) -> str:
    """Cancel the ready tasks whose ``expires_at`` has passed (parameters: now, now, now,
    then ``n_keys`` dedup keys): no one may claim them any more, and as ready tasks they
    would hold their dedup key and a place under the cap for ever. Read through the
    ``tasks_expiry`` index, which SQLite has to be told about: without statistics it would
    pick the work index and read every ready task, on every add with a dedup key.

    With ``n_keys``, only the tasks holding those keys: an add frees the keys it is about to
    use. That one waits for a row another transaction holds, rather than skip it, so that it
    sees how the row ends: the add holds its keys' locks, and what holds such a row never
    waits."""
    table = "tasks INDEXED BY tasks_expiry" if dialect == "sqlite" else "tasks"
    condition = "status = 'ready' AND expires_at <= ?"
    if n_keys:
        picked = f" WHERE {condition} AND dedup_key IN ({', '.join('?' * n_keys)})"
    else:
        picked = housekeeping_where(dialect, condition)
    return (
        f"UPDATE {table} SET status = 'canceled', result = '{EXPIRED_RESULT}', completed_at = ?,"
        f" changed_at = ?{picked}"
    ) + (RETURNING[dialect] if returning else "")


@functools.lru_cache(maxsize=8)
def evict_sql(dialect: str) -> str:
    """Cancel the least urgent, oldest ready tasks over the active cap. Parameters: now, now,
    how many. On PostgreSQL they are picked under a lock (:func:`picked`), which checks them
    again as they stand: a task picked from the statement's snapshot may have been claimed
    since, and must not be cancelled under its worker."""
    pick = (
        "SELECT id FROM tasks WHERE status = 'ready' ORDER BY priority DESC, created_at, id LIMIT ?"
    )
    return (
        "UPDATE tasks SET status = 'canceled', result = 'evicted: queue is at its cap',"
        f" completed_at = ?, changed_at = ? WHERE {picked(dialect, pick)}{RETURNING[dialect]}"
    )


def sweep_all_sql() -> str:
    """PostgreSQL's sweep as one statement, so a sweep that finds nothing is one round trip
    that wakes no listener: the expired leases (:func:`sweep_sql`), then the expired ready
    tasks (:func:`expire_sql`). Parameters: now nine times."""
    return (
        f"WITH leases AS ({sweep_sql('postgres')}), expired AS ({expire_sql('postgres')})"
        " SELECT * FROM leases UNION ALL SELECT * FROM expired"
    )


@functools.lru_cache(maxsize=64)
def claim_sql(dialect: str, n_kinds: int, n: int, guard: str = "") -> str:
    """The claim statement for up to ``n`` tasks. A single claim uses ``= (…)``: SQLite
    runs it several times faster than ``IN (…)``, which a batch claim needs (on
    PostgreSQL an array built once, see :func:`picked`). Parameters:
    agent, pid, host, now, lease expiry, token, now, then the eligibility's agent, now, now
    and the kinds. ``guard``: an extra condition, ANDed first (see :func:`done_and_claim_sql`).

    ``n`` is written into the statement, not bound: PostgreSQL costs a prepared statement's
    ``LIMIT $n`` as a tenth of the table, so a claim's generic plan would look a hundred
    times dearer than its custom plans and the server would plan every claim afresh. With
    the limit written in, the generic plan costs what the custom ones do and is reused."""
    kinds = f" AND kind IN ({', '.join('?' * n_kinds)})" if n_kinds else ""
    # SQLite picks rowids, which the work index holds: the change then goes straight to the
    # row instead of through the id index too (a B-tree less to read again each time
    # another process has committed in between).
    key = "rowid" if dialect == "sqlite" else "id"
    pick = (
        f"SELECT {key} FROM tasks WHERE {guard}{ELIGIBLE}{kinds}"
        f" ORDER BY priority, created_at, id LIMIT {int(n)}"
    )
    if dialect == "sqlite":
        where = f"rowid {'IN' if n > 1 else '='} ({pick})"
    elif n > 1:
        where = picked(dialect, pick)
    else:
        where = f"id = ({pick} FOR UPDATE SKIP LOCKED)"
    return (
        "UPDATE tasks SET status = 'in_progress', claimed_by = ?, pid = ?, host = ?,"
        " claimed_at = ?, lease_expires_at = ?, lease_token = ?, attempts = attempts + 1,"
        f" changed_at = ? WHERE {where}{RETURNING[dialect]}"
    )


COMPLETE = (
    "UPDATE tasks SET status = 'completed', completed_at = ?, changed_at = ?,"
    " result = {result}, " + CLEAR_LEASE
)
"""A completion's SET clause; ``{result}``: the result's SQL expression."""
DONE = COMPLETE.format(result="?")


@functools.lru_cache(maxsize=32)
def fenced_sql(dialect: str, change: str, returning: bool = True) -> str:
    """``change`` (an ``UPDATE … SET …``) applied only under the caller's lease. Parameters:
    the change's, then the task id and the lease token. Without ``returning`` the statement
    returns only the id: enough when the caller knows what the change leaves."""
    fence = f"{change} WHERE id = ? AND status = 'in_progress' AND lease_token = ?"
    return fence + (RETURNING[dialect] if returning else " RETURNING id")


MAX_CLAIM_BATCH = 1_000
"""The most tasks one ``claim_batch`` takes: each is leased at once, and a batch far larger
than a worker gets through within its lease only returns them late."""


class ClaimPlan(NamedTuple):
    """A claim's checked arguments, and its statement."""

    agent: str
    sql: str
    lease: float
    kinds: tuple[str, ...]
    bind_process: bool


def claim_plan(
    dialect: str,
    agent_id: object,
    n: object,
    lease: object,
    kinds: object,
    bind_process: object,
) -> ClaimPlan:
    """A claim's arguments checked, and its statement, remembered for the arguments as
    given: a worker claims with the same ones all day, and checking them again on every
    claim would be a large share of the Python a claim plus completion runs."""
    key = tuple(kinds) if isinstance(kinds, list) else kinds
    if not (key is None or isinstance(key, str | tuple)):  # refused there, never remembered
        return _checked_claim.__wrapped__(dialect, agent_id, n, lease, kinds, bind_process)
    try:
        return _checked_claim(dialect, agent_id, n, lease, key, bind_process)
    except TypeError:  # an argument that cannot be remembered (a list of lists): check it now
        return _checked_claim.__wrapped__(dialect, agent_id, n, lease, key, bind_process)


@functools.lru_cache(maxsize=64, typed=True)
def _checked_claim(
    dialect: str,
    agent_id: object,
    n: object,
    lease: object,
    kinds: object,
    bind_process: object,
) -> ClaimPlan:
    agent = check_agent(agent_id, "an agent id to claim for")
    if type(n) is not int or not 1 <= n <= MAX_CLAIM_BATCH:
        raise InvalidInput(
            f"a batch claim takes a whole number of tasks, from 1 to {MAX_CLAIM_BATCH}"
        )
    seconds = check_seconds(lease, "a lease", positive=True)
    checked = () if kinds is None else tuple(check_kinds(kinds))
    if type(bind_process) is not bool:
        raise InvalidInput(f"bind_process is true or false, not {bind_process!r}")
    return ClaimPlan(agent, claim_sql(dialect, len(checked), n), seconds, checked, bind_process)


ADD_CHUNK = 200
"""Tasks per statement in :meth:`Queue.add_many` (fourteen parameters each)."""
DONE_MANY_CHUNK = 200
"""Completions per statement in :meth:`Queue.done_many` (three parameters each)."""


@functools.lru_cache(maxsize=64)
def done_many_sql(dialect: str, n: int, returning_tasks: bool = True) -> str:
    """Complete ``n`` tasks in one statement, each fenced by its own lease token. Parameters:
    now, now, then ``(id, token, result)`` per task. Only the fenced matches are returned
    (just their ids without ``returning_tasks``)."""
    rows = ", ".join(["(?, ?, ?)"] * n)
    # Columns qualified: ``b`` has an id and a result too.
    returning = returning_sql(dialect, "tasks.") if returning_tasks else " RETURNING tasks.id"
    return (
        f"{COMPLETE.format(result='b.result')} FROM (SELECT column1 AS id, column2 AS token,"
        f" column3 AS result FROM (VALUES {rows}) AS v) AS b WHERE tasks.id = b.id"
        f" AND tasks.status = 'in_progress' AND tasks.lease_token = b.token{returning}"
    )


@functools.lru_cache(maxsize=16)
def done_and_claim_sql(n_kinds: int, returning: bool = True) -> str:
    """PostgreSQL's completion plus next claim as one statement: the claim only runs if the
    fenced completion matched. Parameters: the completion's, then the claim's. Each row is
    ``step`` (``done`` or ``next``) followed by the task's columns; without ``returning``
    (the caller knows what the completion leaves) one row: whether the completion matched,
    then the next task's columns (all null if there was none)."""
    claim = claim_sql("postgres", n_kinds, 1, "EXISTS (SELECT 1 FROM done) AND ")
    columns = ", ".join(FIELD_NAMES)
    with_ = f"WITH done AS ({fenced_sql('postgres', DONE, returning)}), next AS ({claim})"
    if not returning:
        return (
            f"{with_} SELECT (SELECT count(*) FROM done) AS done, next.* FROM (SELECT 1) AS one"
            " LEFT JOIN next ON true"
        )
    return (
        f"{with_} SELECT 'done' AS step, {columns} FROM done"
        f" UNION ALL SELECT 'next' AS step, {columns} FROM next"
    )


INSERT = (
    "INSERT INTO tasks (id, title, body, kind, priority, source, target_agent, dedup_key,"
    " payload, created_at, not_before, expires_at, max_attempts, changed_at) VALUES "
)


def insert_sql(
    fresh: Sequence[tuple[str, NewTask]], now: float, dialect: str
) -> tuple[str, list[Any]]:
    """One ``INSERT`` of ``fresh`` tasks (id, checked task) returning them the dialect's way
    (``RETURNING``), and its parameters."""
    params: list[Any] = []
    for task_id, t in fresh:
        not_before = now + t.delay_s if t.delay_s else None
        expires_at = now + t.ttl_s if t.ttl_s else None
        params += [task_id, t.title, t.body, t.kind, t.priority, t.source, t.target_agent]
        params += [t.dedup_key, t.payload_json, now, not_before, expires_at, t.max_attempts, now]
    values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(fresh))
    return f"{INSERT}{values}{RETURNING[dialect]}", params


LIVE_KEY = "SELECT id FROM tasks WHERE dedup_key = ? AND status IN ('ready', 'in_progress')"
"""The live task holding a dedup key, if any (what ``tasks_dedup`` allows one of)."""


@functools.lru_cache(maxsize=4)
def requeue_sql(dialect: str) -> str:
    """A dead task back to ready with its attempts at zero and nothing holding it back;
    ``last_error`` stays. Parameters: now, the task's id."""
    return (
        "UPDATE tasks SET status = 'ready', attempts = 0, not_before = NULL,"
        f" completed_at = NULL, changed_at = ?, {CLEAR_CLAIM}"
        f" WHERE id = ? AND status = 'dead'{RETURNING[dialect]}"
    )
