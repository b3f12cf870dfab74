"""Waiting for a task to end: how long to pause between looks, and when to give up.

Shared by :meth:`taskloom.queue.handle.Queue.wait`, which sleeps, and the async twin
(``tl.aio.queue.wait``), which awaits, so that waiting in asyncio holds no thread: a wait
run on a worker thread would keep it for as long as the task runs, and a handful of them
would stall every other ``tl.aio`` call of the process.
"""

from __future__ import annotations

import math
import time

from taskloom.domain.errors import WaitTimeout
from taskloom.domain.queue import Task, check_seconds

FIRST_PAUSE_S, LONGEST_PAUSE_S = 0.05, 1.0
"""The first pause between looks, and the longest (each pause doubles the last): short work
answers at once, and a long wait costs a read a second."""


class Waiting:
    """One wait for ``task_id``: call :meth:`pause` after each look at a task not yet ended."""

    def __init__(self, task_id: str, timeout: float | None) -> None:
        self.task_id = task_id
        self.limit = None if timeout is None else check_seconds(timeout, "timeout")
        self.deadline = math.inf if self.limit is None else time.monotonic() + self.limit
        self.next_pause = FIRST_PAUSE_S

    def pause(self, task: Task) -> float:
        """Seconds to wait before looking again at ``task``, which has not ended; raises
        :class:`~taskloom.errors.WaitTimeout` once the timeout has run out."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise WaitTimeout(
                f"task {self.task_id} is still {task.status.value} after {self.limit:g} s"
            )
        pause, self.next_pause = (
            min(self.next_pause, left),
            min(2 * self.next_pause, LONGEST_PAUSE_S),
        )
        return pause
