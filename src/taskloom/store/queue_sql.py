"""The queue's SQL: every statement that reads or changes tasks, with ``?`` placeholders.

:class:`taskloom.store.tasks.SqlTaskTable` runs them; they are kept apart so they can be read
(and their plans checked, see tests) on their own. A statement that changes tasks returns
them whole (:data:`RETURNING`), read by :meth:`~taskloom.domain.queue.Task.from_row`. The
dialect (``"sqlite"`` or ``"postgres"``) picks the few differences: how a claim reaches its
rows, how a tidy-up skips the rows another transaction holds, and how a statement reads a
batch given as one JSON array.
"""

from __future__ import annotations

import functools

RETURNING = " RETURNING *"
CLEAR_LEASE = "pid = NULL, host = NULL, lease_expires_at = NULL, lease_token = NULL"
"""A lease ended. A completion ends only this: the task keeps who claimed it and when, the
worker that finished it (``list(agent=…, status="completed")``)."""
CLEAR_CLAIM = f"claimed_by = NULL, claimed_at = NULL, {CLEAR_LEASE}"
"""A claim undone: the task goes back to ready, or ends unfinished."""


def deps_met(done: str = "", task: str = "tasks") -> str:
    """The dependencies of ``task`` (the table's name or alias) are all completed (a task
    without any: at once, without a look at ``task_deps``). An unbound dependency by key is
    not; one whose task was pruned is (only finished tasks are pruned, and never one a task
    is blocked by). ``done``: a CTE whose tasks count as completed (a completion in the same
    statement).

    Each subquery also names its outer row outside an equality (tests the ``OR`` around it
    has made already). PostgreSQL then runs it per candidate, through the indexes; otherwise
    it may hash every dependency and every unfinished task once per claim, which costs as
    much as the graph is large."""
    also = f" AND p.id NOT IN (SELECT id FROM {done})" if done else ""
    none = f"{task}.depends_on IS NULL AND {task}.depends_on_keys IS NULL"
    return (
        f"({none} OR NOT EXISTS (SELECT 1"
        f" FROM task_deps AS d WHERE d.task_id = {task}.id AND NOT ({none}) AND"
        " (d.depends_on IS NULL OR EXISTS (SELECT 1 FROM tasks AS p WHERE p.id = d.depends_on"
        f" AND d.depends_on IS NOT NULL AND p.status <> 'completed'{also}))))"
    )


def group_free(done: str = "", swept: bool = False) -> str:
    """No other task of the task's group is in progress (a lapsed lease counts itself out:
    a claim takes it back; ``done``: as for :func:`deps_met`). With ``swept``, as after the
    sweep a claim runs first: a lease run out holds its group no more (parameter: now). A
    claim itself never reads it so: the sweep has not run within its statement, and on
    PostgreSQL the index ``tasks_group_running`` would refuse a second task in progress."""
    also = f" AND g.id NOT IN (SELECT id FROM {done})" if done else ""
    live = " AND g.lease_expires_at > ?" if swept else ""
    return (
        "(tasks.group_key IS NULL OR NOT EXISTS (SELECT 1 FROM tasks AS g WHERE"
        f" g.group_key = tasks.group_key AND g.status = 'in_progress'{live}"
        f" AND g.id <> tasks.id{also}))"
    )


ELIGIBLE = (
    "status = 'ready' AND lease_expires_at IS NULL AND (target_agent IS NULL OR target_agent = ?)"
    " AND (not_before IS NULL OR not_before <= ?) AND (expires_at IS NULL OR expires_at > ?)"
)
"""A claimable task but for its dependencies and group (:func:`deps_met`, :func:`group_free`).
A ready task never holds a lease (every way back to ready clears it); saying so lets SQLite
read its work index, ``(status, lease_expires_at, priority, …)``, in the claim's order."""
FIRST_OF_GROUP = (
    "(group_key IS NULL OR NOT EXISTS (SELECT 1 FROM tasks AS o WHERE o.group_key ="
    " tasks.group_key AND o.status = 'ready' AND o.lease_expires_at IS NULL"
    " AND (o.priority, o.created_at, o.id) < (tasks.priority, tasks.created_at, tasks.id)"
    " AND (o.target_agent IS NULL OR o.target_agent = ?) AND (o.not_before IS NULL OR"
    " o.not_before <= ?) AND (o.expires_at IS NULL OR o.expires_at > ?){kinds}"
    f" AND {deps_met(task='o')}))"
)
"""A batch claim's own rule: a grouped task only if no more urgent task of its group is
eligible (parameters: agent, now, now, then the kinds), so one statement never takes two
tasks of one group. ``{kinds}``: the kinds' test on ``o``."""


def claimable(agent: bool = True) -> str:
    """What a claim could take now, after the sweep it runs first (parameters: now, then with
    ``agent`` the agent, now, now, now once more): the eligible tasks, and those whose lease
    ran out that the sweep makes ready (see :data:`RECLAIM`); without ``agent``, by whichever
    agent each is for. A group whose task in progress has a lease run out is free
    (:func:`group_free` with ``swept``), as it is for the claim after the sweep. Of a group,
    a claim takes the most urgent of these only. What ``ready`` lists and explains and what
    the hooks count and show, which only read: a sweep would write, and create a database
    the hooks must not."""
    target = " AND (target_agent IS NULL OR target_agent = ?)" if agent else ""
    return (
        "(status = 'ready' AND lease_expires_at IS NULL OR status = 'in_progress'"
        f" AND lease_expires_at <= ? AND attempts < max_attempts){target}"
        " AND (not_before IS NULL OR not_before <= ?) AND (expires_at IS NULL OR expires_at > ?)"
        f" AND {deps_met()} AND {group_free(swept=True)}"
    )


URGENCY = "ORDER BY priority, created_at, id"
"""Most urgent first: the claim's order, and every list's."""
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
DEAD_WORKER_SQL = (
    f"{RECLAIM} last_error = 'worker process died' WHERE id = ? AND status = 'in_progress'"
    f" AND lease_token = ?{RETURNING}"
)
"""A dead worker's claim given up, under the lease found dead only (parameters: now five
times, the id, the lease token): on PostgreSQL another worker may have swept and claimed the
task since."""


def picked(dialect: str, pick: str) -> str:
    """``id`` among the tasks ``pick`` (a ``SELECT id …``) selects, on PostgreSQL locking
    them and skipping those another transaction holds. There the pick is an array built once
    (an InitPlan): as the inner side of a join, ``id IN (…)`` runs again for each outer row,
    and each run after the first skips the rows the statement has just changed and goes on
    to the next ones, so a ``LIMIT 1`` eviction would cancel two tasks."""
    if dialect == "postgres":
        return f"id = ANY(ARRAY({pick} FOR UPDATE SKIP LOCKED))"
    return f"id IN ({pick})"


def housekeeping_where(dialect: str, condition: str) -> str:
    """The WHERE clause of a statement that tidies up many tasks (expired leases, expired
    ready tasks). On PostgreSQL it skips the tasks another transaction holds (:func:`picked`):
    such a statement never waits for a row, so it is never part of a deadlock (two of them,
    or one and an add, locking expired tasks in different orders). A task skipped is being
    changed by someone else; the next sweep sees it again if it still needs one."""
    if dialect == "postgres":
        return f" WHERE {picked(dialect, f'SELECT id FROM tasks WHERE {condition}')}"
    return f" WHERE {condition}"


def json_items(dialect: str) -> str:
    """A FROM item: the elements of a JSON array given as one parameter, one row each, as
    ``items.value``. A batch is one parameter however large, so one statement takes it
    whole (no chunks under the backend's limit on parameters)."""
    if dialect == "postgres":
        return "jsonb_array_elements(CAST(? AS jsonb)) AS items(value)"
    return "json_each(?) AS items"


def item(dialect: str, index: int, cast: str = "") -> str:
    """Element ``index`` of an item of :func:`json_items` that is itself an array, as SQL
    text, number or NULL (PostgreSQL reads text: ``cast`` says the type it needs)."""
    if dialect == "postgres":
        text = f"(items.value ->> {index})"
        return f"CAST({text} AS {cast})" if cast else text
    return f"json_extract(items.value, '$[{index}]')"


def key_list(dialect: str) -> str:
    """The texts of a JSON array of texts given as one parameter (``SELECT``-able)."""
    if dialect == "postgres":
        return "SELECT jsonb_array_elements_text(CAST(? AS jsonb))"
    return "SELECT value FROM json_each(?)"


@functools.cache
def sweep_sql(dialect: str) -> str:
    """Expired leases given up (:data:`RECLAIM`). Parameters: now six times. The lease's
    expiry is the task's last error, even after an earlier failure: it is why the task
    moved."""
    where = housekeeping_where(dialect, "status = 'in_progress' AND lease_expires_at <= ?")
    return f"{RECLAIM} last_error = 'lease expired'{where}{RETURNING}"


@functools.cache
def expire_sql(dialect: str, returning: bool = True, keys: bool = False) -> str:
    """Cancel the ready tasks whose ``expires_at`` has passed (parameters: now, now, now,
    then with ``keys`` a JSON array of dedup keys): no one may claim them any more, and as
    ready tasks they would hold their dedup key and a place under the cap for ever. Read
    through the ``tasks_expiry`` index, which SQLite has to be told about: without
    statistics it takes the work index and reads every ready task.

    With ``keys``, only the tasks holding those keys: an add frees the keys it is about to
    use. That one waits for a row another transaction holds, rather than skip it, so that it
    sees how the row ends: the add holds its keys' locks, and what holds such a row never
    waits."""
    table = "tasks INDEXED BY tasks_expiry" if dialect == "sqlite" else "tasks"
    condition = "status = 'ready' AND expires_at <= ?"
    if keys:
        where = f" WHERE {condition} AND dedup_key IN ({key_list(dialect)})"
    else:
        where = housekeeping_where(dialect, condition)
    return (
        f"UPDATE {table} SET status = 'canceled', result = '{EXPIRED_RESULT}', completed_at = ?,"
        f" changed_at = ?{where}{RETURNING if returning else ''}"
    )


def sweep_all_sql() -> str:
    """PostgreSQL's sweep as one statement, so a sweep that finds nothing is one round trip
    that wakes no listener: the expired leases (:func:`sweep_sql`), then the expired ready
    tasks (:func:`expire_sql`). Parameters: now nine times."""
    return (
        f"WITH leases AS ({sweep_sql('postgres')}), expired AS ({expire_sql('postgres')})"
        " SELECT * FROM leases UNION ALL SELECT * FROM expired"
    )


COUNT_READY_SQL = "SELECT count(*) AS n FROM tasks WHERE status = 'ready'"
READY_BOUND_SQL = "SELECT n FROM ready_bound"
"""SQLite's bound on the ready tasks: never fewer than are ready (its triggers keep it)."""
SET_READY_BOUND_SQL = "UPDATE ready_bound SET n = ?"


@functools.cache
def evict_sql(dialect: str) -> str:
    """Cancel the least urgent, oldest ready tasks over the active cap. Parameters: now, now,
    how many. On PostgreSQL they are picked under a lock (:func:`picked`), which checks them
    again as they stand: a task picked from the statement's snapshot may have been claimed
    since, and would be cancelled under its worker."""
    pick = (
        "SELECT id FROM tasks WHERE status = 'ready' ORDER BY priority DESC, created_at, id LIMIT ?"
    )
    return (
        "UPDATE tasks SET status = 'canceled', result = 'evicted: queue is at its cap',"
        f" completed_at = ?, changed_at = ? WHERE {picked(dialect, pick)}{RETURNING}"
    )


@functools.lru_cache(maxsize=64)
def claim_sql(dialect: str, n_kinds: int, n: int, guard: str = "", done: str = "") -> str:
    """The claim statement for up to ``n`` tasks. A single claim uses ``= (…)``: SQLite
    runs it several times faster than ``IN (…)``, which a batch claim needs (on
    PostgreSQL an array built once, see :func:`picked`). Parameters:
    agent, pid, host, now, lease expiry, token, now, then the eligibility's agent, now, now
    and the kinds; a batch's (``n > 1``) again for :data:`FIRST_OF_GROUP`. ``guard``: an
    extra condition, ANDed first, and ``done``: a CTE of tasks completed in the same
    statement (see :func:`done_and_claim_sql`).

    ``n`` is written into the statement, not bound: PostgreSQL costs a prepared statement's
    ``LIMIT $n`` as a tenth of the table, so a bound limit makes the generic plan look far
    dearer than the custom ones, and the server plans every claim afresh. With the limit
    written in, the generic plan costs what the custom ones do and is reused."""
    kinds = f" AND kind IN ({', '.join('?' * n_kinds)})" if n_kinds else ""
    graph = f" AND {deps_met(done)} AND {group_free(done)}"
    if n > 1:
        graph += " AND " + FIRST_OF_GROUP.format(kinds=kinds.replace("kind IN", "o.kind IN"))
    # SQLite picks rowids, which the work index holds: the change then goes straight to the
    # row instead of through the id index too.
    key = "rowid" if dialect == "sqlite" else "id"
    pick = f"SELECT {key} FROM tasks WHERE {guard}{ELIGIBLE}{kinds}{graph} {URGENCY} LIMIT {int(n)}"
    if dialect == "sqlite":
        where = f"rowid {'IN' if n > 1 else '='} ({pick})"
    elif n > 1:
        where = picked(dialect, pick)
    else:
        where = f"id = ({pick} FOR UPDATE SKIP LOCKED)"
    return (
        "UPDATE tasks SET status = 'in_progress', claimed_by = ?, pid = ?, host = ?,"
        " claimed_at = ?, lease_expires_at = ?, lease_token = ?, attempts = attempts + 1,"
        f" changed_at = ? WHERE {where}{RETURNING}"
    )


def fenced(change: str, returning: str = RETURNING) -> str:
    """``change`` (an ``UPDATE … SET …``) applied only under the caller's lease. Parameters:
    the change's, then the task id and the lease token."""
    return f"{change} WHERE id = ? AND status = 'in_progress' AND lease_token = ?{returning}"


COMPLETE = (
    "UPDATE tasks SET status = 'completed', completed_at = ?, changed_at = ?,"
    " result = {result}, " + CLEAR_LEASE
)
"""A completion's SET clause; ``{result}``: the result's SQL expression."""
DONE_SQL = fenced(COMPLETE.format(result="?"))
"""Parameters: now, now, the result, the id, the lease token."""
DONE_HELD_SQL = fenced(COMPLETE.format(result="?"), " RETURNING id")
""":data:`DONE_SQL` for a caller that holds the task as claimed, and so knows the row a
completion leaves (:func:`taskloom.domain.lease.completed`): only whether it matched.
Every column returned costs the driver a conversion and a description entry."""
RELEASE_SQL = fenced(
    f"UPDATE tasks SET status = 'ready', attempts = attempts - 1, changed_at = ?, {CLEAR_CLAIM}"
)
"""Parameters: now, the id, the lease token."""
EXTEND_SQL = fenced("UPDATE tasks SET lease_expires_at = ?, changed_at = ?")
"""Parameters: the lease's new end, now, the id, the lease token."""


@functools.cache
def fail_sql(retry: bool) -> str:
    """A failure: back to ready while attempts remain (with ``retry``), else dead.
    Parameters: the error, now, now, the retry delay, now plus that delay, the id, the
    lease token."""
    status = (
        "CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'ready' END" if retry else "'dead'"
    )
    return fenced(
        f"UPDATE tasks SET status = {status}, last_error = ?, changed_at = ?,"
        f" completed_at = CASE WHEN {status} = 'dead' THEN ? ELSE NULL END,"
        f" not_before = CASE WHEN {status} = 'ready' AND ? > 0 THEN ? ELSE not_before END,"
        f" {CLEAR_CLAIM}"
    )


@functools.cache
def cancel_sql(ready_only: bool) -> str:
    """Cancel a task not finished (only a ready one with ``ready_only``), ending any lease
    (the database then blocks the tasks that depend on it).
    Parameters: the reason, now, now, the id."""
    only = "status = 'ready'" if ready_only else "status IN ('ready', 'in_progress', 'blocked')"
    return (
        "UPDATE tasks SET status = 'canceled', result = ?, completed_at = ?, changed_at = ?,"
        f" {CLEAR_CLAIM} WHERE id = ? AND {only}{RETURNING}"
    )


@functools.cache
def done_many_sql(dialect: str, *, ids_only: bool = False) -> str:
    """Complete many tasks in one statement, each fenced by its own lease token. Parameters:
    a JSON array of ``[id, token, result]``, then now, now. Only the fenced matches change,
    and they are returned (on PostgreSQL ``RETURNING *`` would add the batch's columns), or
    with ``ids_only`` only their ids, for a caller that holds the tasks as claimed.

    Each task is found by its id: on PostgreSQL through an id array built once (the
    planner, guessing the batch's size, would rather hash-join every task in progress); on
    SQLite the unary ``+`` keeps the status test off the work index, from which SQLite
    would walk every task in progress and scan the batch for each."""
    batch = (
        f"SELECT {item(dialect, 0)} AS id, {item(dialect, 1)} AS token,"
        f" {item(dialect, 2)} AS result FROM {json_items(dialect)}"
    )
    if dialect == "postgres":
        where = "tasks.id = ANY(ARRAY(SELECT id FROM b)) AND tasks.status = 'in_progress'"
        returning = " RETURNING tasks.*"
    else:
        where = "+tasks.status = 'in_progress'"
        returning = RETURNING
    if ids_only:
        returning = " RETURNING tasks.id"
    return (
        f"WITH b AS MATERIALIZED ({batch}) {COMPLETE.format(result='b.result')} FROM b"
        f" WHERE {where} AND tasks.id = b.id AND tasks.lease_token = b.token{returning}"
    )


@functools.lru_cache(maxsize=16)
def done_and_claim_sql(n_kinds: int) -> str:
    """PostgreSQL's completion plus next claim as one statement: the claim only runs if the
    fenced completion matched, and reads the task completed as completed (the statement's
    snapshot predates it), so its dependents and the next task of its group may be the one
    claimed. Parameters: :data:`DONE_SQL`'s, then the claim's. Each row is ``step``
    (``done`` or ``next``) followed by the task's columns."""
    claim = claim_sql("postgres", n_kinds, 1, "EXISTS (SELECT 1 FROM done) AND ", "done")
    return (
        f"WITH done AS ({DONE_SQL}), next AS ({claim})"
        " SELECT 'done' AS step, * FROM done UNION ALL SELECT 'next' AS step, * FROM next"
    )


NEW_COLUMNS = (
    "id",
    "title",
    "body",
    "kind",
    "priority",
    "source",
    "target_agent",
    "dedup_key",
    "payload",
    "not_before",
    "expires_at",
    "max_attempts",
    "status",
    "result",
    "group_key",
    "depends_on",
    "depends_on_keys",
    "created_at",
    "changed_at",
)
"""The columns a new task is written with; the rest take their defaults."""
INSERT_SQL = (
    f"INSERT INTO tasks ({', '.join(NEW_COLUMNS)}) VALUES ({', '.join('?' * len(NEW_COLUMNS))})"
)
"""Add one task (run once per task in one batch): :data:`NEW_COLUMNS`' values in order."""


GET_SQL = "SELECT * FROM tasks WHERE id = ?"
GET_MANY_SQL = "SELECT * FROM tasks WHERE id IN ("
"""Tasks by id, followed by a :func:`key_list` of them and a closing parenthesis."""
LIVE = "status IN ('ready', 'in_progress', 'blocked')"
"""A task that holds its dedup key (what ``tasks_dedup`` allows one of per key)."""
LIVE_SQL = f"SELECT * FROM tasks WHERE {LIVE} AND dedup_key IN ({{keys}})"
"""The live tasks holding one of a JSON array of dedup keys (what ``tasks_dedup`` allows one
of each); ``{keys}``: :func:`key_list`."""
HOLDER_SQL = f"SELECT id FROM tasks WHERE dedup_key = ? AND {LIVE}"
"""The live task holding a dedup key, if any."""
REQUEUE_SQL = (
    "UPDATE tasks SET status = 'ready', attempts = 0, not_before = NULL, result = NULL,"
    f" completed_at = NULL, changed_at = ?, {CLEAR_CLAIM}"
    f" WHERE id = ? AND status IN ('dead', 'canceled'){RETURNING}"
)
"""A dead (or canceled) task back to ready with its attempts at zero and nothing holding it
back; ``last_error`` stays. Parameters: now, the task's id."""
_OLD = "status IN ('completed', 'canceled', 'dead') AND completed_at < ?"
_KEPT = (
    "WITH RECURSIVE kept(id) AS (SELECT d.depends_on FROM tasks AS p"
    " JOIN task_deps AS d ON d.depends_on = p.id JOIN tasks AS w ON w.id = d.task_id"
    f" WHERE p.status IN ('dead', 'canceled') AND w.id NOT IN (SELECT id FROM tasks WHERE {_OLD})"
    " UNION SELECT d.depends_on FROM kept JOIN task_deps AS d ON d.task_id = kept.id"
    " JOIN tasks AS p ON p.id = d.depends_on WHERE p.status IN ('dead', 'canceled'))"
)
"""The dead and canceled tasks upstream of a task that stays (not finished before a time,
the parameter), through dead and canceled tasks only: a blocked task is blocked by one, and
a canceled one may be requeued, blocked again by its own. Deleting the dependencies of
the tasks finished before that time leaves the answer as it was."""
_FINISHED = f"{_OLD} AND (status = 'completed' OR id NOT IN ({_KEPT} SELECT id FROM kept))"
"""Finished before a time (the parameter), and not kept (:data:`_KEPT`)."""
PRUNE_LOCK_SQL = (
    "SELECT count(*) AS n FROM (SELECT id FROM tasks WHERE status IN ('dead', 'canceled')"
    " AND completed_at < ? ORDER BY id FOR UPDATE) AS locked"
)
"""PostgreSQL: lock the dead and canceled tasks finished before a time (the parameter), the
ones a prune keeps only while a task depends on them, before the prune decides. An add that
makes a task depend on one holds it ``FOR SHARE`` until it commits, so the prune's next
statements, each reading what is committed when it starts, see the new dependent."""
PRUNE_EVENTS_SQL = (
    f"DELETE FROM events WHERE task_id IN (SELECT id FROM tasks WHERE {_FINISHED})"
    " AND id < (SELECT MAX(id) FROM events)"
)
"""The events of the tasks finished before a time (the parameter, twice); the newest event
stays, whatever it is: event ids are cursors and must never be reused."""
PRUNE_DEPS_SQL = f"DELETE FROM task_deps WHERE task_id IN (SELECT id FROM tasks WHERE {_FINISHED})"
PRUNE_TASKS_SQL = f"DELETE FROM tasks WHERE {_FINISHED}"
COUNTS_SQL = (
    "SELECT shown AS status, count(*) AS n FROM (SELECT CASE WHEN status = 'in_progress'"
    " AND lease_expires_at <= ? THEN 'lease_expired' ELSE status END AS shown FROM tasks)"
    " AS t GROUP BY shown"
)
"""How many tasks there are of each status shown (parameter: now), a lapsed lease told
apart from one that runs."""
SHOWN_AS = {
    "ready": "(status = 'ready' OR status = 'in_progress' AND lease_expires_at <= ?)",
    "in_progress": "status = 'in_progress' AND lease_expires_at > ?",
    "lease_expired": "status = 'in_progress' AND lease_expires_at <= ?",
}
"""A status filter as shown (parameter: now): a lapsed lease is listed with the ready tasks,
which is what a claim makes of it, and as itself; not as in progress."""


def list_sql(status: str | None, agent: bool, n_kinds: int) -> str:
    """Tasks most urgent first, of one status (as :data:`SHOWN_AS` says, else stored),
    claimed by or meant for one agent, of one of ``n_kinds`` kinds (each filter with its
    parameters, in that order, when asked: a status's is now, or the status), then the
    limit."""
    where = ["1 = 1"]
    if status:
        where.append(SHOWN_AS.get(status, "status = ?"))
    if agent:
        where.append("(claimed_by = ? OR target_agent = ?)")
    if n_kinds:
        where.append(f"kind IN ({', '.join('?' * n_kinds)})")
    return f"SELECT * FROM tasks WHERE {' AND '.join(where)} {URGENCY} LIMIT ?"


HOST_CLAIMS_SQL = (
    "SELECT id, pid, lease_token FROM tasks WHERE status = 'in_progress'"
    " AND lease_expires_at >= ? AND host = ? AND pid IS NOT NULL"
)
"""The live claims of processes of one host (parameters: now, the host). The condition on
``lease_expires_at`` lets PostgreSQL read the lease index instead of the whole table."""
POISONED_SQL = "SELECT * FROM tasks WHERE status = 'ready' AND attempts >= ? ORDER BY id"
IDS_IN_SQL = "SELECT id FROM tasks WHERE status = ? ORDER BY id"
LAPSED_SQL = (
    "SELECT * FROM tasks WHERE status = 'in_progress' AND lease_expires_at <= ? ORDER BY id"
)
"""The tasks whose lease has run out (the parameter: now), as the sweep finds them."""
SEEN_SQL = "SELECT digest FROM agent_cursors WHERE agent_id = ?"
SEE_SQL = (
    "INSERT INTO agent_cursors (agent_id, digest, updated_at) VALUES (?, ?, ?)"
    " ON CONFLICT (agent_id) DO UPDATE SET digest = excluded.digest,"
    " updated_at = excluded.updated_at WHERE agent_cursors.digest <> excluded.digest"
)
"""Set an agent's cursor, only if it changes: of two hooks racing for one agent, one shows
the block."""
UNSEE_SQL = "DELETE FROM agent_cursors WHERE agent_id = ?"
