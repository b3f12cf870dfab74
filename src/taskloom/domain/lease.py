"""A task under a lease: the claim that takes it, and the row its completion leaves."""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType
from typing import NamedTuple

from taskloom.domain.errors import InvalidInput
from taskloom.domain.queue import Task, TaskStatus, check_ids, check_text

MAX_CLAIM_BATCH = 1_000
"""The most tasks one ``claim_batch`` takes: each is leased at once, and a batch far larger
than a worker gets through within its lease only returns them late."""


class Claim(NamedTuple):
    """A claim as it is written: who claims (``agent``), up to how many tasks, for how many
    seconds (``lease``), of which ``kinds`` (empty: any), the claiming process (``pid``,
    ``None`` when the claim outlives it, and ``host``) and the new lease ``token``."""

    agent: str
    n: int
    lease: float
    kinds: tuple[str, ...]
    pid: int | None
    host: str
    token: str


LEASE_ENDED = MappingProxyType(dict.fromkeys(("pid", "host", "lease_expires_at", "lease_token")))
"""The fields a lease's end clears (the task keeps who claimed it, and when)."""


def completed(held: Task, result: str | None, now: float) -> Task:
    """``held``, a task as its claim returned it, as its completion at ``now`` leaves the
    row. While claimed, a task changes only at its holder's hand (a renewal moves the lease's
    end, which the completion clears), so this is the stored row, with no read-back."""
    task = object.__new__(Task)
    task.__dict__.update(held.__dict__, **LEASE_ENDED)
    ended = {
        "status": TaskStatus.COMPLETED,
        "result": result,
        "completed_at": now,
        "changed_at": now,
    }
    task.__dict__.update(ended)
    return task


def checked_result(result: object) -> str | None:
    """A task's result, checked (:func:`check_text`), with its credentials redacted as a
    failure's error is: a worker command's output is stored, sent in events, shown on the
    panel and handed to the model that waits for it."""
    check_text(result, "a task's result")
    if not isinstance(result, str) or not result:  # None, or empty
        return None if result is None else ""
    from taskloom.domain.redact import redact_text  # its patterns compile on first use

    return redact_text(result)[0]


Completion = tuple[str, str, str | None]
"""A completion under a lease: the task's id, its lease token, and its result."""


def check_completions(completions: object) -> dict[str, Completion]:
    """``done_many``'s ``(task_id, lease_token[, result])`` items, checked, by id in the order
    given: the same completion twice is one, the same task twice with a difference is
    refused."""
    if not isinstance(completions, Iterable):
        raise InvalidInput("done_many takes (task_id, lease_token[, result]) tuples")
    items: dict[str, Completion] = {}
    for item in completions:
        if not isinstance(item, tuple | list) or len(item) not in (2, 3):
            raise InvalidInput("done_many takes (task_id, lease_token[, result]) tuples")
        check_ids(item[0], item[1])
        result = checked_result(item[2] if len(item) == 3 else None)
        entry = (item[0], item[1], result)
        if items.setdefault(item[0], entry) != entry:
            raise InvalidInput(f"task '{item[0]}' is given twice, differently, to done_many")
    return items


def check_held(held: object, items: dict[str, Completion]) -> dict[str, Task]:
    """``held`` by id, when it is one task for each of ``items`` with that item's id and
    lease token, as its claim returned it."""
    tasks = [None] if isinstance(held, Task) or not isinstance(held, Iterable) else list(held)
    by_id = {task.id: task for task in tasks if isinstance(task, Task)}
    if (
        len(by_id) != len(tasks)
        or by_id.keys() != items.keys()
        or any(task.lease_token != items[task_id][1] for task_id, task in by_id.items())
    ):
        raise InvalidInput(
            "held is the tasks being completed, one each, as their claims returned them"
        )
    return by_id
