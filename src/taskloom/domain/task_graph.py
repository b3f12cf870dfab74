"""The queue's work graph: dependencies between tasks and mutual-exclusion groups, as rules.

A task may depend on other tasks, named by id (tasks that exist) or by dedup key (the task
holding that key, now or once one is added). It is claimable only once every dependency is
completed. A dependency that ends dead or canceled blocks its dependents, and theirs, with
the reason (status ``blocked``); a requeue of it, or a new task taking its dedup key,
releases them. A task may name a ``group_key``: at most one task of a group is in progress
at any moment.

A batch of tasks (``Queue.add_many``, ``taskloom tasks add --from``) may name its own tasks
by client-chosen references (``ref``) and depend on them (``after``), forward or back: the
batch is checked as a graph before anything is written, so a cycle or a reference to no
task is refused with the task named.

Pure: what the store answers (statuses, holders) comes in as arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from taskloom.domain.common import storable_size, visible_id
from taskloom.domain.errors import InvalidInput
from taskloom.domain.text import chain

MAX_DEPS = 100
"""The most dependencies one task names (ids and keys together)."""
MAX_GROUP_BYTES = 200
MAX_REF_BYTES = 200
MAX_KEY_BYTES = 512
"""A dependency's dedup key: as long as a dedup key may be."""
ENDED_UNFINISHED = ("dead", "canceled")
"""A dependency in one of these blocks its dependents."""


def _trimmed_key(value: object, name: str, blank: str = "") -> str | None:
    """A key given as ``name``, trimmed, or ``None`` for none; blank text is refused (with
    ``blank`` added to the message)."""
    if value is None:
        return None
    if type(value) is not str:
        raise InvalidInput(f"'{name}' must be text")
    key = value.strip()
    if not key:
        raise InvalidInput(f"'{name}', when given, must not be blank{blank}")
    return key


def check_group_key(value: object) -> str | None:
    """A group key: visible text of at most :data:`MAX_GROUP_BYTES` bytes, or ``None``."""
    key = _trimmed_key(value, "group_key")
    if key is None:
        return None
    if storable_size(key, "'group_key'") > MAX_GROUP_BYTES:
        raise InvalidInput(f"'group_key' is longer than {MAX_GROUP_BYTES} bytes")
    return visible_id(key, "'group_key'")


def check_dedup_key(value: object) -> str | None:
    """A dedup key, trimmed as a group key is: ``" k "`` and ``"k"`` are one key. ``None``
    means no dedup; a blank key is refused."""
    return _trimmed_key(value, "dedup_key", " (leave it out for none)")


def _texts(value: object, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise InvalidInput(f"'{name}' must be a list of text")
    for item in value:
        if type(item) is not str:
            raise InvalidInput(f"'{name}' must be a list of non-blank text")
        if not item.strip():
            raise InvalidInput(f"'{name}' must not be blank (leave a blank one out)")
    return list(dict.fromkeys(value))  # the same one twice is one


def check_dep_ids(value: object) -> tuple[str, ...]:
    """``depends_on``: task ids (printable ASCII, as taskloom makes them)."""
    ids = _texts(value, "depends_on")
    for task_id in ids:
        if not (task_id.isascii() and task_id.isprintable()):
            raise InvalidInput(f"'depends_on' names {task_id!r}, which is not a task id")
    return tuple(ids)


def check_dep_keys(value: object) -> tuple[str, ...]:
    """``depends_on_keys``: dedup keys, each at most :data:`MAX_KEY_BYTES` bytes, trimmed
    (:func:`check_dedup_key`)."""
    keys = list(dict.fromkeys(key.strip() for key in _texts(value, "depends_on_keys")))
    for key in keys:
        if storable_size(key, "a dependency's dedup key") > MAX_KEY_BYTES:
            raise InvalidInput(f"'depends_on_keys' holds a key longer than {MAX_KEY_BYTES} bytes")
    return tuple(keys)


def check_ref(value: object) -> str | None:
    """A batch's own name for one of its tasks (``ref``)."""
    if value is None:
        return None
    if type(value) is not str or not value.strip():
        raise InvalidInput("'ref' must be non-blank text")
    if storable_size(value, "'ref'") > MAX_REF_BYTES:
        raise InvalidInput(f"'ref' is longer than {MAX_REF_BYTES} bytes")
    return value


def check_after(value: object) -> tuple[str, ...]:
    """``after``: the refs of tasks of the same batch this one depends on."""
    return tuple(_texts(value, "after"))


def check_count(ids: Sequence[str], keys: Sequence[str], after: Sequence[str]) -> None:
    if len(ids) + len(keys) + len(after) > MAX_DEPS:
        raise InvalidInput(f"a task depends on at most {MAX_DEPS} others")


def batch_edges(refs: Sequence[str | None], after: Sequence[Sequence[str]]) -> list[list[int]]:
    """For each task of a batch, the positions of the batch's tasks it names in ``after``.
    Refused (naming the task by its position from 1, as ``task N: …``): a ref given twice,
    an ``after`` naming no ref of the batch, a task after itself."""
    where: dict[str, int] = {}
    for at, ref in enumerate(refs):
        if ref is None:
            continue
        if ref in where:
            raise InvalidInput(f"task {at + 1}: 'ref' {ref!r} is also task {where[ref] + 1}'s")
        where[ref] = at
    edges = []
    for at, names in enumerate(after):
        found = []
        for name in names:
            if name not in where:
                raise InvalidInput(f"task {at + 1}: 'after' names {name!r}, no task of this batch")
            if where[name] == at:
                raise InvalidInput(f"task {at + 1}: 'after' names the task itself")
            found.append(where[name])
        edges.append(found)
    return edges


def topological(edges: Sequence[Sequence[int]]) -> list[int]:
    """The positions of a batch with each after every one it depends on (``edges[i]``: the
    positions ``i`` depends on), or :class:`InvalidInput` naming a cycle from its first task
    (``task N: …``)."""
    order: list[int] = []
    state = [0] * len(edges)  # 0 unseen, 1 on the path, 2 done
    for root in range(len(edges)):
        if state[root]:
            continue
        path = [root]
        stack = [iter(edges[root])]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                done = path.pop()
                state[done] = 2
                order.append(done)
            elif state[nxt] == 1:  # named from its first task in the batch
                loop = path[path.index(nxt) :]
                first = loop.index(min(loop))
                cycle = [*loop[first:], *loop[:first], loop[first]]
                shown = chain([f"task {n + 1}" for n in cycle], " -> ")
                raise InvalidInput(f"task {cycle[0] + 1}: its dependencies make a cycle ({shown})")
            elif state[nxt] == 0:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(edges[nxt]))
    return order


def blocked_reason(task_id: str, status: str) -> str:
    """What a blocked task's ``result`` says: the dependency (direct or further up) that
    ended unfinished. The database's trigger writes the same text."""
    return f"blocked: task {task_id}, which it depends on, is {status}"


def new_statuses(
    order: Sequence[int],
    deps: Sequence[Sequence[str]],
    known: Mapping[str, tuple[str, str | None]],
    ids: Sequence[str | None],
) -> dict[int, str | None]:
    """The blocked tasks of a batch about to be added, each with its reason (the others
    start ready). ``order``: positions in dependency order; ``deps[i]``: the ids task ``i``
    depends on (the batch's own among them, by ``ids``); ``known``: each existing
    dependency's ``(status, result)``. A task is blocked by a dependency that ended dead or
    canceled, or by one that is blocked itself (its reason carried on)."""
    blocked: dict[int, str | None] = {}
    reason_of: dict[str, str] = {}
    for at in order:
        for dep in deps[at]:
            if dep in reason_of:
                blocked[at] = reason_of[dep]
                break
            status, result = known.get(dep, ("ready", None))
            if status in ENDED_UNFINISHED:
                blocked[at] = blocked_reason(dep, status)
                break
            if status == "blocked":
                blocked[at] = result
                break
        own = ids[at]
        if at in blocked and own is not None:
            reason_of[own] = blocked[at] or ""
    return blocked


def restatus(
    order: Sequence[str],
    deps: Mapping[str, Sequence[tuple[str, str, str | None]]],
) -> dict[str, str | None]:
    """Blocked or not, again, for tasks whose dependencies changed (a requeue, a key taken
    by a new task): ``order`` their ids, each after those it depends on; ``deps[id]``: each
    dependency's ``(id, status, result)`` as stored. The answer: each task's reason to stay
    blocked, or ``None`` to be ready."""
    out: dict[str, str | None] = {}
    for task_id in order:
        reason = None
        for dep, status, result in deps.get(task_id, ()):
            if dep in out:
                if out[dep] is not None:
                    reason = out[dep]
                    break
                continue
            if status in ENDED_UNFINISHED:
                reason = blocked_reason(dep, status)
                break
            if status == "blocked":
                reason = result
                break
        out[task_id] = reason
    return out


def order_within(ids: Sequence[str], edges: Sequence[tuple[str, str]]) -> list[str]:
    """``ids`` with each after those of them it depends on (``edges``: ``(task, dependency)``
    pairs); a cycle among them (which adds refuse) leaves them in the order given."""
    index = {task_id: n for n, task_id in enumerate(ids)}
    inner: list[list[int]] = [[] for _ in ids]
    for task_id, dep in edges:
        if task_id in index and dep in index:
            inner[index[task_id]].append(index[dep])
    try:
        return [ids[n] for n in topological(inner)]
    except InvalidInput:
        return list(ids)


def deps_json(values: Sequence[str]) -> list[Any] | None:
    """A task's dependency list as stored: ``None`` for none (the claim's fast path)."""
    return list(values) if values else None
