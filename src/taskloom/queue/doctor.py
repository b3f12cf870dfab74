"""What ``taskloom doctor`` looks for in the queue: tasks that need someone to act.

Lapsed tasks hold a lease that has run out (stuck ones, long over); orphaned ones were
claimed by a process of this host that has died; poisoned ones keep coming back ready after
many attempts; dead ones used up theirs; blocked ones wait for a dependency that ended dead
or canceled. :meth:`taskloom.queue.handle.Queue.doctor` checks the arguments and asks here;
whether a claiming process still runs is asked here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from taskloom._runtime import HOST, alive
from taskloom.domain.queue import Task
from taskloom.store.base import Store, TaskTable, Transaction


def orphaned(tasks: TaskTable, tx: Transaction, now: float) -> dict[str, str]:
    """The tasks claimed by processes of this host (as :func:`taskloom._runtime.host_name`
    says) that have died, with the lease token of that claim: their leases may run for hours
    yet, but no one will finish them. A lease already over is not counted: the task is
    stuck, or due back at the next claim, whoever held it."""
    return {
        task_id: token for task_id, pid, token in tasks.host_claims(tx, HOST, now) if not alive(pid)
    }


def examine(
    store: Store,
    now: Callable[[], float],
    reclaim: Callable[[], list[Task]],
    fix: bool,
    stuck_after_s: float,
    poisoned_at: int,
) -> dict[str, Any]:
    """The doctor's report (each list in id order, the same on both backends). With
    ``fix``, ``reclaim`` the lapsed and orphaned tasks, then cancel the poisoned ready ones
    (those just reclaimed included, so one run is enough). What is fixed is what the report
    lists, so ``doctor`` and ``doctor --fix`` agree: a lapsed lease is listed as
    ``lease_expired`` however recently it ran out."""
    tasks = store.tasks
    at = now()
    with store.read() as tx:
        lapsed = tasks.lapsed(tx, at)
        orphans = orphaned(tasks, tx, at)
    fixed = [t.id for t in reclaim()] if fix else []
    with store.read() as tx:
        poisoned = tasks.poisoned(tx, poisoned_at)
        dead = sorted(tasks.ids_in(tx, "dead"))
        blocked = sorted(tasks.ids_in(tx, "blocked"))
    if fix:
        for task in poisoned:
            # Only while still ready: a worker may have claimed it since it was listed.
            why = f"doctor: poisoned after {task.attempts} attempts"
            canceled = tasks.cancel(task.id, why, now(), ready_only=True)
            if canceled is not None and task.id not in fixed:
                fixed.append(task.id)
    return {
        "lease_expired": [t.id for t in lapsed],
        "stuck": [t.id for t in lapsed if (t.lease_expires_at or 0) < at - stuck_after_s],
        "orphaned": sorted(orphans),
        "poisoned": [t.id for t in poisoned],
        "dead": dead,
        "blocked": blocked,
        "fixed": sorted(fixed),
    }
