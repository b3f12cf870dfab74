"""Leases a model took with ``task_next``, kept alive by the host while the model works.

A model is a poor heartbeat: it forgets ``task_extend``, and a lease that runs out under
work still in progress hands the task to a second agent. So the host renews it: each tool
call an agent makes through ``tl.tools.dispatch`` (the MCP server's calls included) renews
the leases that agent took through this toolbox once a third of each has passed, for the
length it asked for. An agent that stops calling tools for longer than a lease, or whose
host dies, lets its leases run out. Each renewal is the lease token's own ``extend``, fenced
like the model's, so a lease lost meanwhile is dropped, never taken back.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from taskloom.domain.errors import LeaseLost, NotFound, TaskloomError

if TYPE_CHECKING:
    from taskloom.domain.queue import Task
    from taskloom.queue.handle import Queue

log = logging.getLogger("taskloom.tools")


@dataclass(slots=True)
class _Lease:
    agent: str
    token: str
    length: float
    renew_at: float

    @property
    def ends_at(self) -> float:
        """When the lease ends, on this process's monotonic clock."""
        return self.renew_at + self.length * 2 / 3


class HeldLeases:
    """The leases this toolbox's ``task_next`` handed out, by task id."""

    def __init__(self, queue: Queue) -> None:
        self._queue = queue
        self._lock = threading.Lock()
        self._leases: dict[str, _Lease] = {}

    def hold(self, task: Task, agent: str, length: float) -> None:
        """Remember ``task``'s lease (claimed or extended now) to renew on ``agent``'s calls."""
        renew_at = time.monotonic() + length / 3
        with self._lock:
            self._leases[task.id] = _Lease(agent, task.lease_token or "", length, renew_at)

    def drop(self, task_id: str) -> None:
        """Forget ``task_id``'s lease (the task was finished, failed or lost)."""
        with self._lock:
            self._leases.pop(task_id, None)

    def renew(self, agent: str | None) -> None:
        """Renew ``agent``'s leases that are a third through; never raises (a tool call's
        answer does not depend on it)."""
        if not agent:
            return
        now = time.monotonic()
        with self._lock:
            mine = [(i, x) for i, x in self._leases.items() if x.agent == agent]
            # A lease that ran out before this call stays out: the agent was gone that long.
            for task_id, _ in [(i, x) for i, x in mine if now >= x.ends_at]:
                del self._leases[task_id]
        for task_id, lease in mine:
            if not lease.renew_at <= now < lease.ends_at:
                continue
            try:
                self._queue.extend(task_id, lease.token, lease.length)
            except (LeaseLost, NotFound):
                self.drop(task_id)  # finished elsewhere, reclaimed or cancelled
            except TaskloomError as exc:  # a busy database: the next call tries again
                log.warning("could not renew the lease on task %s: %s", task_id, exc)
            else:
                lease.renew_at = time.monotonic() + lease.length / 3
