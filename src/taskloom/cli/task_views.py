"""``taskloom tasks list|show|stats|ready``: the queue as people and scripts read it, and a
task's line as every ``tasks`` command prints it.

A task in progress whose lease has run out is shown as ``lease_expired`` (its JSON keeps the
stored ``status`` and adds ``state``): no one holds it any more, and the next claim takes it.
"""

from __future__ import annotations

import json
import time
from typing import Annotated

import typer

from taskloom.cli.common import (
    MAX_LIMIT,
    DbOption,
    JsonOption,
    agent_flag,
    check_range,
    err,
    open_existing,
    open_listing,
    print_json,
    print_text,
)
from taskloom.domain.errors import InvalidInput
from taskloom.domain.queue import SHOWN_STATUSES, Task, TaskStatus, iso_time, shown_status
from taskloom.domain.readiness import shown_dict
from taskloom.domain.text import counted
from taskloom.queue.handle import Queue


def line(task: Task, now: float | None = None) -> str:
    """A task on one line: id, status as shown, priority, kind, title, who holds it, and
    what keeps it from being claimed by anyone at once that the row itself says (``tasks
    next`` answers "no task ready" while the list shows one): meant for one agent, not
    before a time, in a group, after other tasks, blocked."""
    now = time.time() if now is None else now
    state = shown_status(task, now)
    who = f" @{task.claimed_by}" if task.claimed_by else ""
    text = f"{task.id}  [{state}] p{task.priority} {task.kind}: {task.title}{who}"
    if task.status is TaskStatus.BLOCKED:
        return f"{text}  ({task.result})"
    if task.status is not TaskStatus.READY:
        return text
    notes = [f"for {task.target_agent}"] if task.target_agent else []
    if task.not_before is not None and task.not_before > now:
        notes.append(f"not before {iso_time(task.not_before)}")
    if task.group_key:
        notes.append(f"group {task.group_key}")
    after = [*task.depends_on, *(f"key {k}" for k in task.depends_on_keys)]
    if after:
        notes.append(f"after {', '.join(after)}")
    return f"{text}  ({'; '.join(notes)})" if notes else text


def one(task: Task, as_json: bool, *, with_token: bool = False, must_arrive: bool = False) -> None:
    """One task, as a line (and its token, when the caller holds it) or as JSON."""
    if as_json:
        data = {**task.to_dict(with_token=with_token), "state": shown_status(task, time.time())}
        print_json(data, must_arrive=must_arrive)
        return
    print_text(line(task), must_arrive=must_arrive)
    if with_token:
        print_text(f"lease token: {task.lease_token}", must_arrive=must_arrive)


def list_(
    status: Annotated[
        str | None,
        typer.Option(help=f"Filter by status: {', '.join(SHOWN_STATUSES)}.", show_default=False),
    ] = None,
    agent: Annotated[str | None, typer.Option(help="Claimed by or targeted at.")] = None,
    kind: Annotated[list[str] | None, typer.Option(help="Only these kinds (repeat).")] = None,
    limit: Annotated[int, typer.Option(help="At most this many.")] = 50,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """List tasks, most urgent first, and how many more --limit left out.

    That count is the last line (with --json, a line on stderr, the list staying a list).
    A task whose lease ran out is lease_expired, and listed with the ready ones (the next
    claim takes it).

    Example: taskloom tasks list --status ready
    """
    check_range(limit, "--limit", 0, MAX_LIMIT)
    status = None if status is None else status.strip()  # as the queue reads it
    if status == "":  # the queue reads "" as no filter: a script's unset variable listed all
        raise InvalidInput(
            f"--status, when given, must not be empty (one of: {', '.join(SHOWN_STATUSES)})"
        )
    if agent is not None and not agent.strip():  # likewise
        raise InvalidInput("--agent, when given, must not be empty")
    queue = open_listing(db).queue
    tasks = queue.list(status=status, agent=agent, kinds=kind, limit=limit + 1)  # any more?
    shown = tasks[:limit]
    left = _left_out(queue, status, bool(agent or kind), limit) if len(tasks) > limit else 0
    now = time.time()
    if as_json:
        print_json([shown_dict(t, now) for t in shown])
        if left:
            err.print(_json_note(limit, left), markup=False)
        return
    lines = [line(t, now) for t in shown]
    if left:
        lines.append(f"… and {'' if left < 0 else f'{left:,} '}more (use --limit)")
    print_text("\n".join(lines) or "(no tasks)")


def _json_note(shown: int, left: int) -> str:
    """The stderr line of a JSON list cut short (a script reads the list, a person this)."""
    if left < 0:
        return f"{counted(shown, 'task')} shown and more exist; use --limit"
    return f"{shown:,} of {shown + left:,} tasks shown; use --limit"


def _left_out(queue: Queue, status: str | None, narrowed: bool, shown: int) -> int:
    """How many tasks a list cut short by its limit left out, or -1 for "some" under
    --agent or --kind (``narrowed``), which the counts per status do not count by."""
    if narrowed:
        return -1
    counts = queue.stats()
    total = counts["ready"] + counts["lease_expired"] if status == "ready" else None
    return max((total or counts[status or "total"]) - shown, 1)  # max: tasks pruned meanwhile


def show(
    task_id: Annotated[str, typer.Argument(help="Task id.")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print one task: its line, attempts, schedule, claim, graph, body, payload and result.

    A task that cannot run now says why.

    Example: taskloom tasks show 0193…
    """
    queue = open_existing(db).queue
    task = queue.get(task_id)
    why = queue.why(task_id)
    now = time.time()
    if as_json:
        print_json({**shown_dict(task, now), "why": [r.to_dict() for r in why]})
        return
    print_text(line(task, now))
    claim = None
    if task.claimed_at is not None:
        process = f" (pid {task.pid} on {task.host})" if task.pid is not None else ""
        claim = f"{iso_time(task.claimed_at)} by {task.claimed_by}{process}"
    lease = iso_time(task.lease_expires_at)
    if lease is not None and shown_status(task, now) == "lease_expired":
        lease += " (ran out: no one holds it, and the next claim takes it)"
    details = {
        "attempts": f"{task.attempts} of {task.max_attempts}",
        "for": task.target_agent,
        "source": task.source,
        "dedup key": task.dedup_key,
        "group": task.group_key,
        "depends on": ", ".join(task.depends_on) or None,
        "depends on keys": ", ".join(task.depends_on_keys) or None,
        "created": iso_time(task.created_at),
        "not before": iso_time(task.not_before),
        "expires": iso_time(task.expires_at),
        "claimed": claim,
        "lease expires": lease,
        "completed": iso_time(task.completed_at),
        "body": task.body or None,
        "payload": json.dumps(task.payload, ensure_ascii=False) if task.payload else None,
        "result": task.result,
        "last_error": task.last_error,
    }
    for name, value in details.items():
        if value is not None:
            print_text(f"{name}: {value}")
    for reason in why:
        if reason.code != "blocked":  # the line says it already
            print_text(f"why not now: {reason.text}")


def stats(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Counts per status (a lapsed lease as lease_expired, apart from in_progress).

    Example: taskloom tasks stats
    """
    counts = open_listing(db).queue.stats()
    if as_json:
        print_json(counts)
    else:
        print_text("  ".join(f"{status} {n:,}" for status, n in counts.items()))


def ready(
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="For this agent (default: any agent).",
            show_default=False,
            callback=agent_flag,
        ),
    ] = None,
    kind: Annotated[list[str] | None, typer.Option(help="Only these kinds (repeat).")] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Also list what cannot run now, and why.")
    ] = False,
    limit: Annotated[int, typer.Option(help="At most this many of each.")] = 50,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """What can run now, most urgent first; with --explain, what cannot and why.

    A task cannot run while it waits on tasks not completed, is blocked by one that ended
    dead or canceled, another task of its group is in progress (or goes first), its not
    before time is ahead, or it is reserved for another agent. Either list cut short by
    --limit says so (with --json, on stderr: count holds every ready task).

    Example: taskloom tasks ready --explain
    """
    check_range(limit, "--limit", 0, MAX_LIMIT)
    # One over the limit: whether more tasks cannot run than are shown.
    asked = open_listing(db).queue.ready(agent, kinds=kind, explain=explain, limit=limit + 1)
    found, more_waiting = asked.first(limit)
    now = time.time()
    more = found.count - len(found.ready)
    if as_json:  # the JSON keeps its shape; what --limit left out is said on stderr
        print_json(found.to_dict(now))
        if more:
            note = f"{len(found.ready):,} of {found.count:,} ready tasks shown; use --limit"
            err.print(note, markup=False)
        if more_waiting:
            cut = counted(len(found.waiting), "task")
            err.print(f"{cut} not ready shown and more exist; use --limit", markup=False)
        return
    lines = [line(t, now) for t in found.ready]
    head = f"{found.count:,} ready" + (f" ({more:,} more not shown; use --limit)" if more else "")
    lines.insert(0, head)
    if explain:
        shown = len(found.waiting)
        lines.append(
            f"{shown:,} not ready shown, and more (use --limit)"
            if more_waiting
            else f"{shown:,} not ready"
        )
        for task, why in found.waiting:
            lines.append(line(task, now))
            lines += [f"    {r.text}" for r in why if r.code != "blocked"]
    print_text("\n".join(lines))
