"""Ready work, explained: what can run now, and for each task that cannot, why.

A task can run now when a claim could take it: ready (or its lease run out, which a claim
takes back first), every dependency completed, its group not held, its ``not_before``
passed, not past its ``expires_at``, and meant for anyone (or the agent asking). Of the
tasks of one group that could run, only the most urgent does: a group runs one at a time.
Pure: the queue reads the tasks, their dependencies and the groups' holders, and asks here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from taskloom.domain.queue import Task, TaskStatus, iso_time, shown_status


class Dep(NamedTuple):
    """One dependency as it stands: the task (``None`` while a dedup key waits for one),
    the key it was named by (if so), and the task's status and title (``None`` for a task
    pruned, which only a finished one is)."""

    task_id: str | None
    key: str | None
    status: str | None
    title: str | None


class Reason(NamedTuple):
    """Why a task cannot run now: a ``code`` (``waiting_on``, ``blocked``, ``group_held``,
    ``group_queued``, ``not_before``, ``reserved_for``, ``expired``, ``no_attempts``), one
    sentence, and the tasks it names."""

    code: str
    text: str
    tasks: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "text": self.text, "tasks": list(self.tasks)}


@dataclass(frozen=True)
class Readiness:
    """``ready``: the tasks that can run now, most urgent first (at most the limit asked
    for); ``count``: how many can in all; ``waiting``: the tasks that cannot, each with its
    reasons, most urgent first (when explained)."""

    ready: list[Task]
    count: int
    waiting: list[tuple[Task, list[Reason]]] = field(default_factory=list)

    def first(self, limit: int) -> tuple[Readiness, bool]:
        """The first ``limit`` tasks of each list, and whether ``waiting`` held more: asked
        for one over the limit, a list cut to it tells "this many cannot run" from "this
        many and more", which ``waiting`` has no count of its own to say."""
        cut = Readiness(self.ready[:limit], self.count, self.waiting[:limit])
        return cut, len(self.waiting) > limit

    def to_dict(self, now: float) -> dict[str, Any]:
        return {
            "count": self.count,
            "ready": [shown_dict(t, now) for t in self.ready],
            "waiting": [
                {**shown_dict(t, now), "why": [r.to_dict() for r in why]} for t, why in self.waiting
            ],
        }


def shown_dict(task: Task, now: float) -> dict[str, Any]:
    """A task as shown to people and scripts: its JSON form (no lease token) with its
    ``state`` (:func:`~taskloom.domain.queue.shown_status`)."""
    return {**task.to_dict(), "state": shown_status(task, now)}


def first_of_groups(rows: Iterable[tuple[str, str | None]]) -> tuple[list[str], dict[str, str]]:
    """Of the tasks a claim could take (``(id, group key)``, most urgent first), those that
    can run now, and for each task of a group that has to wait its turn, the task of its
    group that goes first."""
    first: dict[str, str] = {}
    ready: list[str] = []
    queued: dict[str, str] = {}
    for task_id, group in rows:
        if group is None:
            ready.append(task_id)
        elif group in first:
            queued[task_id] = first[group]
        else:
            first[group] = task_id
            ready.append(task_id)
    return ready, queued


def _dep_text(dep: Dep) -> str:
    if dep.task_id is None:
        return f"key {dep.key!r} (no task holds it yet)"
    return f"task {dep.task_id} ({dep.status})"


def reasons(
    task: Task,
    now: float,
    agent: str | None,
    deps: Sequence[Dep],
    holder: str | None,
    first: str | None = None,
) -> list[Reason]:
    """Why ``task`` cannot run now for ``agent`` (any agent when ``None``): its
    dependencies not completed (``deps``), the task in progress in its group (``holder``),
    the task of its group that goes first (``first``), its schedule and its reservation.
    Empty: it can run now."""
    out: list[Reason] = []
    if task.status is TaskStatus.BLOCKED:
        out.append(Reason("blocked", task.result or "blocked", _blockers(deps)))
    waiting = [d for d in deps if d.task_id is None or d.status not in (None, "completed")]
    # One task named by id and by the key it holds is one task to wait on.
    once: dict[str, Dep] = {}
    for d in waiting:
        once.setdefault(d.task_id or f"key {d.key}", d)
    waiting = list(once.values())
    if waiting and task.status is not TaskStatus.IN_PROGRESS:
        shown = ", ".join(_dep_text(d) for d in waiting)
        ids = tuple(d.task_id for d in waiting if d.task_id is not None)
        out.append(Reason("waiting_on", f"waiting on {shown}", ids))
    if holder is not None and holder != task.id and task.status is not TaskStatus.IN_PROGRESS:
        text = f"group {task.group_key!r} runs one task at a time: task {holder} is in progress"
        out.append(Reason("group_held", text, (holder,)))
    elif first is not None:
        text = f"group {task.group_key!r} runs one task at a time: task {first} goes first"
        out.append(Reason("group_queued", text, (first,)))
    if task.not_before is not None and task.not_before > now:
        out.append(Reason("not_before", f"not before {iso_time(task.not_before)}"))
    if task.expires_at is not None and task.expires_at <= now:
        text = f"expired at {iso_time(task.expires_at)}: canceled at the next sweep"
        out.append(Reason("expired", text))
    if task.target_agent is not None and agent is not None and task.target_agent != agent:
        out.append(Reason("reserved_for", f"reserved for agent {task.target_agent!r}"))
    if task.status is TaskStatus.IN_PROGRESS and task.attempts >= task.max_attempts:
        text = "its lease ran out with no attempts left: it goes dead at the next sweep"
        out.append(Reason("no_attempts", text))
    return out


def _blockers(deps: Sequence[Dep]) -> tuple[str, ...]:
    """The dependencies that block a task: ended unfinished, or blocked themselves."""
    return tuple(
        d.task_id
        for d in deps
        if d.task_id is not None and d.status in ("dead", "canceled", "blocked")
    )


def by_task(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[Dep]]:
    """``deps_of`` rows (``task_id``, ``dep``, ``dep_key``, ``status``, ``title``) grouped
    by task, each task's in order."""
    out: dict[str, list[Dep]] = {}
    for r in rows:
        dep = Dep(r["dep"], r["dep_key"], r["status"], r["title"])
        out.setdefault(str(r["task_id"]), []).append(dep)
    return out
