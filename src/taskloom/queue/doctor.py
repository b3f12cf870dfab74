"""What ``taskloom doctor`` looks for in the queue: tasks that need someone to act.

Stuck tasks hold a lease long over; orphaned ones were claimed by a process of this host that
has died; poisoned ones keep coming back ready after many attempts; dead ones used up theirs.
:meth:`taskloom.queue.handle.Queue.doctor` reads them and decides what to fix, under the
queue's rules; whether a claiming process still runs is asked here.
"""

from __future__ import annotations

from taskloom._runtime import HOST, alive
from taskloom.store.base import TaskTable, Transaction


def orphaned(tasks: TaskTable, tx: Transaction, now: float) -> dict[str, str]:
    """The tasks claimed by processes of this host (as :func:`taskloom._runtime.host_name`
    says) that have died, with the lease token of that claim: their leases may run for hours
    yet, but no one will finish them. A lease already over is not counted: the task is
    stuck, or due back at the next claim, whoever held it."""
    return {
        task_id: token for task_id, pid, token in tasks.host_claims(tx, HOST, now) if not alive(pid)
    }
