"""Where the servers and the async API run blocking store calls: thread pools of their own.

``asyncio.to_thread`` uses the loop's default pool, ``min(32, cpus + 4)`` threads: six on a
two-core machine. Six calls waiting for SQLite's write lock (held by another process for a few
seconds) would take all six, and every other request, MCP session and live stream would wait
behind them, reads included. Requests get a pool large enough for a crowd of waiting writers,
and the live streams' reads a pool of their own, so a stuck writer never stops the panel's
updates. ``tl.aio`` has a pool of its own for the same reason: a crowd of its calls waiting for
the write lock neither holds up its reads nor takes the loop's default pool from the program's
other blocking calls (``asyncio.to_thread``, name lookups).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class Pool:
    """A named thread pool, started on first use; :meth:`run` is ``asyncio.to_thread`` on it."""

    def __init__(self, workers: int, name: str) -> None:
        self.workers = workers
        self.name = name
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _get(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix=self.name)
            return self._executor

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
        return await loop.run_in_executor(self._get(), call)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """``fn`` started on the pool, in a copy of the caller's context."""
        return self._get().submit(contextvars.copy_context().run, fn, *args, **kwargs)


REQUESTS = Pool(64, "taskloom-request")
"""HTTP API requests, MCP tool calls and resource reads."""
STREAMS = Pool(8, "taskloom-stream")
"""The live streams' reads (openings, catch-ups, the event hub): what keeps the panel moving."""
ASYNC_API = Pool(64, "taskloom-aio")
"""Every call of ``tl.aio`` (the async API) and of the async goal loop and tick."""
