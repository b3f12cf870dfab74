"""The SQL of the queue's work graph: dependencies (``task_deps``) and what ``ready``
explains. The claim's own tests (:func:`~taskloom.store.queue_sql.deps_met`,
:func:`~taskloom.store.queue_sql.group_free`) and the trigger that blocks the dependents of a
task ending dead or canceled (in the schema, ``0001_schema.sql``) live with the statements they
belong to.
"""

from __future__ import annotations

import functools

from taskloom.store.queue_sql import LIVE, URGENCY, claimable, item, json_items, key_list


@functools.cache
def insert_deps_sql(dialect: str) -> str:
    """Add dependencies in one statement. Parameter: a JSON array of ``[task id, position,
    depends on (an id, or null), dedup key (or null)]``."""
    return (
        "INSERT INTO task_deps (task_id, position, depends_on, dep_key)"
        f" SELECT {item(dialect, 0)}, {item(dialect, 1, 'integer')}, {item(dialect, 2)},"
        f" {item(dialect, 3)} FROM {json_items(dialect)}"
    )


@functools.cache
def statuses_sql(dialect: str) -> str:
    """The status and result of each of a JSON array of task ids (the parameter). On
    PostgreSQL the rows are locked (``FOR SHARE``) until the add that reads them commits: a
    task they depend on cannot end meanwhile, so the trigger that blocks its dependents
    finds the new ones."""
    lock = " FOR SHARE" if dialect == "postgres" else ""
    return f"SELECT id, status, result FROM tasks WHERE id IN ({key_list(dialect)}){lock}"


@functools.cache
def key_tasks_sql(dialect: str) -> str:
    """The tasks holding, or once holding, each of a JSON array of dedup keys (the
    parameter), the live holder of each key first, then the newest (see
    :func:`~taskloom.domain.task_graph.new_statuses`); locked on PostgreSQL as
    :func:`statuses_sql`'s."""
    lock = " FOR SHARE" if dialect == "postgres" else ""
    return (
        "SELECT dedup_key, id, status, result FROM tasks"
        f" WHERE dedup_key IN ({key_list(dialect)})"
        f" ORDER BY dedup_key, CASE WHEN {LIVE} THEN 0 ELSE 1 END, created_at DESC, id DESC{lock}"
    )


WAITING_KEYS_SQL = (
    "SELECT DISTINCT dep_key FROM task_deps WHERE dep_key IN ({keys}) AND (depends_on IS NULL"
    " OR depends_on IN (SELECT id FROM tasks WHERE status IN ('dead', 'canceled')))"
)
"""Which of a JSON array of dedup keys some task waits for unbound, or bound to a task that
ended unfinished; ``{keys}``: :func:`key_list`."""
BIND_KEY_SQL = (
    "UPDATE task_deps SET depends_on = ? WHERE dep_key = ? AND (depends_on IS NULL"
    " OR depends_on IN (SELECT id FROM tasks WHERE status IN ('dead', 'canceled')"
    " AND dedup_key = ?)) RETURNING task_id"
)
"""A new task taking a dedup key takes over the dependencies on it that wait unbound or on
a task with the key that ended unfinished (parameters: the new task's id, the key, the key);
the tasks that depend on it now."""


def step(dialect: str) -> str:
    """The recursive step of a walk downstream (``down``): the dependents of the tasks
    found so far, as ``d.task_id``. On PostgreSQL each is one index lookup (a lateral
    subquery that ``OFFSET 0`` keeps from being flattened): as a join, the planner may read
    the whole of ``task_deps`` at every step, and a walk down a long chain then takes time
    in the square of its length."""
    if dialect == "postgres":
        return (
            "SELECT d.task_id FROM down CROSS JOIN LATERAL (SELECT task_id FROM task_deps"
            " WHERE depends_on = down.id OFFSET 0) AS d"
        )
    return "SELECT d.task_id FROM task_deps AS d JOIN down ON d.depends_on = down.id"


@functools.cache
def reaches_itself_sql(dialect: str) -> str:
    """Whether a task depends on itself through others (parameters: its id twice)."""
    return (
        "WITH RECURSIVE down(id) AS (SELECT task_id FROM task_deps WHERE depends_on = ?"
        f" UNION {step(dialect)}) SELECT id FROM down WHERE id = ? LIMIT 1"
    )


@functools.cache
def around_sql(dialect: str) -> str:
    """Each ready or blocked task of a JSON array of ids (the parameter) and the tasks
    downstream of them: ``task_id``, its ``own_status`` and ``own_result``, and each of its
    dependencies, ``dep`` (null while a key is unbound), one row each.

    On PostgreSQL the tasks are read through an id array built once from the walk: as a
    join, the planner (which cannot guess how far a walk goes) may read the whole walk
    again for each task, which costs the square of a long chain's length."""
    found = "down JOIN tasks AS t ON t.id = down.id"
    where = ""
    if dialect == "postgres":
        found, where = "tasks AS t", " t.id = ANY(ARRAY(SELECT id FROM down)) AND"
    return (
        f"WITH RECURSIVE down(id) AS ({key_list(dialect)} UNION {step(dialect)})"
        " SELECT t.id AS task_id, t.status AS own_status, t.result AS own_result,"
        f" d.depends_on AS dep FROM {found} LEFT JOIN task_deps AS d ON d.task_id = t.id"
        f" WHERE{where} t.status IN ('ready', 'blocked') ORDER BY t.id, d.position"
    )


@functools.cache
def restatus_sql(dialect: str) -> str:
    """Tasks blocked again, or released, in one statement however many (parameters: a JSON
    array of ``[id, status, result]``, then now): only a ready or blocked task changes, and
    each writes its own event (the database's trigger, once per row).

    Each task is found by its id, as :func:`~taskloom.store.queue_sql.done_many_sql` finds
    its: on PostgreSQL through an id array built once, on SQLite with the status test kept
    off the work index."""
    batch = (
        f"SELECT {item(dialect, 0)} AS id, {item(dialect, 1)} AS status,"
        f" {item(dialect, 2)} AS result FROM {json_items(dialect)}"
    )
    if dialect == "postgres":
        where = "tasks.id = ANY(ARRAY(SELECT id FROM b)) AND tasks.status IN ('ready', 'blocked')"
    else:
        where = "+tasks.status IN ('ready', 'blocked')"
    return (
        f"WITH b AS MATERIALIZED ({batch}) UPDATE tasks SET status = b.status,"
        f" result = b.result, changed_at = ? FROM b WHERE {where} AND tasks.id = b.id"
    )


@functools.cache
def deps_of_sql(dialect: str) -> str:
    """The dependencies of each of a JSON array of task ids (the parameter), as they stand:
    ``task_id``, ``dep`` (null while a key is unbound), ``dep_key``, and the dependency's
    ``status``, ``title`` and ``claimed_by`` (null for a task pruned)."""
    return (
        "SELECT d.task_id, d.depends_on AS dep, d.dep_key, p.status, p.title, p.claimed_by"
        " FROM task_deps AS d LEFT JOIN tasks AS p ON p.id = d.depends_on"
        f" WHERE d.task_id IN ({key_list(dialect)}) ORDER BY d.task_id, d.position"
    )


@functools.cache
def holders_sql(dialect: str) -> str:
    """The task in progress under a live lease of each of a JSON array of group keys
    (parameters: the array, now). A lease run out holds its group no more: a claim sweeps
    it back first."""
    return (
        "SELECT group_key, id FROM tasks WHERE status = 'in_progress'"
        f" AND group_key IN ({key_list(dialect)}) AND lease_expires_at > ?"
    )


def _kinds(n_kinds: int) -> str:
    return f" AND kind IN ({', '.join('?' * n_kinds)})" if n_kinds else ""


def ready_sql(agent: bool, n_kinds: int, limited: bool = False, grouped: bool = False) -> str:
    """What a claim could take now, after its sweep, most urgent first, ``id`` and
    ``group_key`` only (parameters: :func:`~taskloom.store.queue_sql.claimable`'s, then the
    kinds, then with ``limited`` the most rows); with ``grouped``, of the tasks in a group."""
    limit = " LIMIT ?" if limited else ""
    where = ("group_key IS NOT NULL AND " if grouped else "") + claimable(agent) + _kinds(n_kinds)
    return f"SELECT id, group_key FROM tasks WHERE {where} {URGENCY}{limit}"


def claimable_count_sql(agent: bool, n_kinds: int) -> str:
    """How many of :func:`ready_sql`'s tasks a claim could take, one per group: each task
    without a group, and each group once (parameters: :func:`ready_sql`'s)."""
    return (
        "SELECT count(*) - count(group_key) + count(DISTINCT group_key) AS n"
        f" FROM tasks WHERE {claimable(agent)}{_kinds(n_kinds)}"
    )


def waiting_sql(agent: bool, n_kinds: int) -> str:
    """The ready and blocked tasks and the lapsed leases that :func:`ready_sql` leaves out,
    most urgent first (parameters: now, :func:`~taskloom.store.queue_sql.claimable`'s, the
    kinds, the limit): what ``ready --explain`` explains."""
    return (
        "SELECT * FROM tasks WHERE (status IN ('ready', 'blocked') OR status = 'in_progress'"
        f" AND lease_expires_at <= ?) AND NOT ({claimable(agent)}){_kinds(n_kinds)}"
        f" {URGENCY} LIMIT ?"
    )


HAS_BLOCKED_SQL = (
    "SELECT 1 AS n FROM task_deps AS d JOIN tasks AS w ON w.id = d.task_id"
    " WHERE d.depends_on = ? AND w.status = 'blocked' LIMIT 1"
)
"""Whether a task blocks another (parameter: its id)."""
