"""A task under a lease: the claim that takes it, and the row its completion leaves."""

from __future__ import annotations

from types import MappingProxyType
from typing import NamedTuple

from taskloom.domain.queue import Task, TaskStatus

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
