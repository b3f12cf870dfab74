"""What ``taskloom doctor`` looks for in the queue: tasks that need someone to act.

Stuck tasks hold a lease long over; orphaned ones were claimed by a process of this host that
has died; poisoned ones keep coming back ready after many attempts; dead ones used up theirs.
Reads only: :meth:`taskloom.queue.handle.Queue.doctor` decides what to fix, under the queue's rules.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskloom._runtime import HOST, alive
from taskloom.domain.queue import Task
from taskloom.store.base import Row, Transaction


def tasks(rows: Sequence[Row]) -> list[Task]:
    return [Task.from_row(r) for r in rows]


def orphaned(tx: Transaction, now: float) -> dict[str, str]:
    """The tasks claimed by processes of this host (as :func:`taskloom._runtime.host_name`
    says) that have died, with the lease token of that claim: their leases may run for hours
    yet, but no one will finish them. A lease already over is not counted: the task is
    stuck, or due back at the next claim, whoever held it."""
    # The condition on ``lease_expires_at`` lets PostgreSQL read the lease index instead of
    # the whole table.
    mine = tx.query(
        "SELECT id, pid, lease_token FROM tasks WHERE status = 'in_progress'"
        " AND lease_expires_at >= ? AND host = ?",
        (now, HOST),
    )
    dead = (r for r in mine if r["pid"] and not alive(int(r["pid"])))
    return {str(r["id"]): str(r["lease_token"]) for r in dead}


def stuck(tx: Transaction, now: float, stuck_after_s: float) -> list[Task]:
    """In-progress tasks whose lease ended over ``stuck_after_s`` ago: no claim has run
    since to take them back (each claim sweeps expired leases first), so no worker is
    running."""
    return tasks(
        tx.query(
            "SELECT * FROM tasks WHERE status = 'in_progress' AND lease_expires_at < ? ORDER BY id",
            (now - stuck_after_s,),
        )
    )


def poisoned(tx: Transaction, poisoned_at: int) -> list[Task]:
    """Ready tasks already tried ``poisoned_at`` times or more."""
    return tasks(
        tx.query(
            "SELECT * FROM tasks WHERE status = 'ready' AND attempts >= ? ORDER BY id",
            (poisoned_at,),
        )
    )


def dead(tx: Transaction) -> list[Task]:
    """Tasks that used up their attempts (``taskloom tasks requeue`` runs them again)."""
    return tasks(tx.query("SELECT * FROM tasks WHERE status = 'dead' ORDER BY id"))
