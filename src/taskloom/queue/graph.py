"""The queue's work graph inside its transactions: the dependencies of tasks being added,
the dedup keys they take over, blocked tasks released (or blocked anew) when what they wait
for changes, and what can run now, explained. The rules are
:mod:`taskloom.domain.task_graph`'s and :mod:`taskloom.domain.readiness`'s; the SQL is the
store's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from taskloom.domain.errors import InvalidInput, NotFound
from taskloom.domain.queue import TERMINAL, NewTask, Task, shown_status
from taskloom.domain.readiness import Readiness, Reason, by_task, first_of_groups, reasons
from taskloom.domain.task_graph import new_statuses, order_within, restatus, topological
from taskloom.domain.text import shown_id
from taskloom.store.base import TaskTable, Transaction

Label = Callable[[int], str]
"""How an error names a task of the batch by its position: ``"task 3: "``, or ``""`` for
a task added alone."""
DepRow = tuple[str, int, str | None, str | None]


class Plan:
    """The dependencies of the new tasks of a batch, resolved to ids: what to store for
    each (``tasks``, by position), the rows of ``task_deps`` (``rows``), and which start
    blocked, with the reason (``blocked``, by id)."""

    def __init__(self) -> None:
        self.tasks: dict[int, NewTask] = {}
        self.rows: list[DepRow] = []
        self.blocked: dict[str, str | None] = {}


def lock(tx: Transaction, tasks: Sequence[NewTask | Task]) -> None:
    """Take the locks an add (or a requeue) of ``tasks`` holds until it commits
    (PostgreSQL; SQLite serialises writers already), in one order for every writer: the
    graph's own when the tasks both take a dedup key and depend on others, the only change
    that can close a cycle through keys (two such changes at once could each close half of
    one); then one per dedup key they take or wait for, so racing adds of one key take
    turns."""
    keys = {t.dedup_key for t in tasks if t.dedup_key is not None}
    if keys and any(t.depends_on or t.depends_on_keys for t in tasks):
        tx.lock("graph")
    for key in sorted(keys.union(k for t in tasks for k in t.depends_on_keys)):
        tx.lock("dedup", key)


def plan(
    table: TaskTable,
    tx: Transaction,
    tasks: Sequence[NewTask],
    ids: Sequence[str],
    fresh: Sequence[int],
    after: Sequence[Sequence[int]],
    label: Label,
) -> Plan:
    """Resolve the dependencies of the batch's new tasks (positions ``fresh``; ``ids``: the
    id each position answers with, a new one or the live task its dedup key found;
    ``after``: the positions each names by ref). Refused, naming the task: a dependency on
    no task, on itself, or a cycle among the new tasks."""
    out = Plan()
    new = {ids[at]: at for at in fresh}
    named = sorted({i for at in fresh for i in tasks[at].depends_on} - set(new))
    known = table.statuses(tx, named)
    for at in fresh:
        for task_id in tasks[at].depends_on:
            if task_id not in known:
                raise InvalidInput(
                    f"{label(at)}depends on task '{shown_id(task_id)}', which does not exist"
                )
    holders = {t.dedup_key: ids[at] for at, t in enumerate(tasks) if t.dedup_key is not None}
    wanted = sorted({k for at in fresh for k in tasks[at].depends_on_keys} - set(holders))
    for key, (task_id, status, result) in table.key_tasks(tx, wanted).items():
        holders[key] = task_id
        known[task_id] = (status, result)
    known.update(table.statuses(tx, sorted(set(holders.values()) - set(new) - set(known))))
    deps: list[list[str]] = [[] for _ in tasks]
    inner: list[list[int]] = [[] for _ in tasks]
    for at in fresh:
        task, own = tasks[at], ids[at]
        on = [*task.depends_on, *(ids[n] for n in after[at])]
        keyed = [(holders.get(key), key) for key in task.depends_on_keys]
        on = list(dict.fromkeys([*on, *(h for h, _ in keyed if h is not None)]))
        if own in on:
            raise InvalidInput(f"{label(at)}depends on itself (through its own dedup key)")
        deps[at] = on
        inner[at] = [new[d] for d in on if d in new]
        rows: list[DepRow] = [(own, n, d, None) for n, d in enumerate(task.depends_on)]
        rows += [(own, len(rows) + n, ids[m], None) for n, m in enumerate(after[at])]
        rows += [(own, len(rows) + n, h, key) for n, (h, key) in enumerate(keyed)]
        out.rows += rows
        named_ids = tuple(dict.fromkeys([*task.depends_on, *(ids[n] for n in after[at])]))
        out.tasks[at] = task._replace(depends_on=named_ids)
    try:
        order = topological(inner)
    except InvalidInput as exc:
        raise InvalidInput(_relabel(str(exc), label)) from None
    own_ids: list[str | None] = [ids[at] if at in out.tasks else None for at in range(len(tasks))]
    blocked = new_statuses([at for at in order if at in out.tasks], deps, known, own_ids)
    out.blocked = {ids[at]: reason for at, reason in blocked.items()}
    return out


def _relabel(message: str, label: Label) -> str:
    """A cycle found among positions, said as the caller names tasks."""
    head, _, rest = message.partition(": ")
    at = int(head.split()[1]) - 1
    return f"{label(at)}{rest}" if label(at) else rest


def take_keys(
    table: TaskTable,
    tx: Transaction,
    keyed: Sequence[tuple[int, str, str]],
    now: float,
    label: Label,
) -> None:
    """New tasks taking dedup keys (``(position, id, key)``) take over the dependencies
    that wait for those keys, unbound or bound to a task that ended unfinished; the tasks
    that depend on them are then blocked or released as they now stand. A cycle this would
    close is refused."""
    waiting = set(table.waiting_keys(tx, [key for _, _, key in keyed]))
    moved: list[str] = []
    for at, task_id, key in keyed:
        if key not in waiting:
            continue
        dependents = table.bind_key(tx, key, task_id)
        if dependents and table.reaches_itself(tx, task_id):
            raise InvalidInput(
                f"{label(at)}its dependencies make a cycle: task {dependents[0]} waits for its"
                f" dedup key {key!r}"
            )
        moved += dependents
    if moved:
        settle(table, tx, moved, now)


def requeued(table: TaskTable, tx: Transaction, task: Task, now: float) -> None:
    """A task back to ready (a requeue): holding its dedup key again, it takes over the
    dependencies on that key as a new task taking it does (:func:`take_keys`, which refuses
    a cycle it would close); then it and the tasks downstream are blocked or released."""
    if task.dedup_key is not None:
        take_keys(table, tx, [(0, task.id, task.dedup_key)], now, lambda at: "")
    settle(table, tx, [task.id], now)


def settle(table: TaskTable, tx: Transaction, ids: Sequence[str], now: float) -> None:
    """Block or release the ready and blocked tasks among ``ids`` and downstream of them,
    as their dependencies now stand: the walk is one statement, and so is the change,
    however many tasks it covers."""
    rows = table.around(tx, list(dict.fromkeys(ids)))
    if not rows:
        return
    # The dependencies as they stand, held until the transaction ends (PostgreSQL): one
    # ending dead meanwhile would find its dependent still blocked, and not block it again.
    stand = table.statuses(tx, sorted({str(r["dep"]) for r in rows if r["dep"] is not None}))
    deps: dict[str, list[tuple[str, str, str | None]]] = {}
    own: dict[str, tuple[str, str | None]] = {}
    for r in rows:
        task_id = str(r["task_id"])
        own[task_id] = (str(r["own_status"]), r["own_result"])
        deps.setdefault(task_id, [])
        if r["dep"] in stand:
            deps[task_id].append((str(r["dep"]), *stand[r["dep"]]))
    edges = [(task_id, dep) for task_id, on in deps.items() for dep, _, _ in on]
    changed = {
        task_id: reason
        for task_id, reason in restatus(order_within(list(deps), edges), deps).items()
        if own[task_id] != ("ready" if reason is None else "blocked", reason)
    }
    table.set_blocked(tx, changed, now)


def _urgency(task: Task) -> tuple[int, float, str]:
    return (task.priority, task.created_at, task.id)


MAX_READ = 2**31
"""The most rows :func:`first_ready` asks for at once; past it, all of them."""


def first_ready(
    table: TaskTable,
    tx: Transaction,
    agent: str | None,
    now: float,
    kinds: Sequence[str],
    n: int,
) -> list[str]:
    """The ids of the first ``n`` tasks ``agent`` could claim now, one per group, most urgent
    first: read a few rows, and more while groups repeat, not the whole backlog."""
    limit: int | None = 4 * n
    while True:
        if limit is not None and limit > MAX_READ:
            limit = None
        rows = table.ready_rows(tx, agent, now, kinds, limit)
        ids, _ = first_of_groups(rows)
        if len(ids) >= n or limit is None or len(rows) < limit:
            return ids[:n]
        limit *= 4


def readiness(
    table: TaskTable,
    tx: Transaction,
    agent: str | None,
    now: float,
    kinds: Sequence[str],
    explain: bool,
    limit: int,
) -> Readiness:
    """:meth:`Queue.ready <taskloom.queue.handle.Queue.ready>`'s answer, read in ``tx``: a
    count and the first ``limit`` tasks (:func:`first_ready`); with ``explain``, the tasks
    that wait, each with why (a task queued behind its group's first: from the grouped
    tasks alone)."""
    total = table.claimable_count(tx, agent, now, kinds)
    ready = table.get_many(tx, first_ready(table, tx, agent, now, kinds, limit) if total else [])
    if not explain:
        return Readiness(ready, total)
    _, queued = first_of_groups(table.ready_rows(tx, agent, now, kinds, grouped=True))
    held = table.waiting(tx, agent, now, kinds, limit)
    held += table.get_many(tx, list(queued)[:limit])
    held = sorted(held, key=_urgency)[:limit]
    deps = by_task(table.deps_of(tx, [t.id for t in held]))
    holders = table.holders(tx, sorted({t.group_key for t in held if t.group_key}), now)
    waiting = []
    for task in held:
        holder = holders.get(task.group_key) if task.group_key else None
        why = reasons(task, now, agent, deps.get(task.id, []), holder, queued.get(task.id))
        if why:
            waiting.append((task, why))
    return Readiness(ready, total, waiting)


def why(
    table: TaskTable, tx: Transaction, task_id: str, agent: str | None, now: float
) -> list[Reason]:
    """Why one task cannot run now (:meth:`Queue.why <taskloom.queue.handle.Queue.why>`)."""
    task = table.get(tx, task_id)
    if task is None:
        raise NotFound(f"task '{shown_id(task_id)}' not found")
    if task.status in TERMINAL or shown_status(task, now) == "in_progress":
        return []
    deps = by_task(table.deps_of(tx, [task_id])).get(task_id, [])
    holder = first = None
    if task.group_key is not None:
        holder = table.holders(tx, [task.group_key], now).get(task.group_key)
        rows = table.ready_rows(tx, agent, now, (), grouped=True)
        first = first_of_groups(r for r in rows if r[1] == task.group_key)[1].get(task_id)
    return reasons(task, now, agent, deps, holder, first)
