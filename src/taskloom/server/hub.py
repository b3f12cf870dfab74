"""One reader of the outbox per server process, fanned out to every SSE client.

Each client polling the events table would cost one query per client per tick; the hub reads
new events once, encodes each frame once, and keeps a window of recent frames that clients
serve themselves from. It reads when woken (a write made through this server, or PostgreSQL's
NOTIFY from any process) and otherwise every ``poll_s`` seconds, which is how changes made by
other processes on SQLite arrive: an indexed ``id > cursor`` range read is cheap enough to run
twenty times a second. A client whose cursor is older than the window catches up from the
table itself, then joins the shared window.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from sse_starlette.event import ServerSentEvent

from taskloom.domain.events import TASK_STATE, Event
from taskloom.store.base import Store

READ_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class Frame:
    """An event ready to send: its id, type, thread, and its SSE bytes, encoded once for
    every client."""

    id: int
    type: str
    thread_id: str | None
    wire: bytes


def to_frame(event: Event) -> Frame:
    """Encode an event for the wire. Lease tokens are capabilities for a worker, not something
    to broadcast to every viewer, so they are blanked here."""
    body = event.to_dict()
    if event.type == TASK_STATE and body["data"].get("lease_token"):
        body["data"] = {**body["data"], "lease_token": None}
    data = json.dumps(body)
    wire = ServerSentEvent(data, event=event.type, id=str(event.id)).encode()
    return Frame(int(event.id or 0), event.type, event.thread_id, wire)


def read_frames(store: Store, after: int, limit: int = READ_LIMIT) -> list[Frame]:
    with store.read() as tx:
        return [to_frame(e) for e in tx.events_after(after, limit=limit)]


class EventHub:
    def __init__(self, store: Store, *, poll_s: float = 0.05, window: int = 4096) -> None:
        self.store = store
        self.poll_s = poll_s
        self.window = window
        self._ids: list[int] = []
        self._frames: list[Frame] = []
        self.floor = 0  # the window holds every event with floor < id <= last
        self.last = 0
        self._tick = asyncio.Event()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._unlisten: Callable[[], None] | None = None
        self._starting: asyncio.Lock | None = None

    async def start(self) -> None:
        """Start reading (idempotent); called by the first client."""
        if self._task is not None:
            return
        self._starting = self._starting or asyncio.Lock()
        async with self._starting:
            if self._task is not None:
                return
            self.floor = self.last = await asyncio.to_thread(self._head)
            loop = asyncio.get_running_loop()

            def wake(_event_id: int) -> None:  # called on the store's listener thread
                loop.call_soon_threadsafe(self._wake.set)

            self._unlisten = await asyncio.to_thread(self.store.listen, wake)
            self._task = asyncio.create_task(self._pump())

    async def stop(self) -> None:
        if self._unlisten is not None:
            await asyncio.to_thread(self._unlisten)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = None

    def poke(self) -> None:
        """Read now: something was just written (call from the event loop)."""
        self._wake.set()

    def since(self, cursor: int) -> list[Frame] | None:
        """Frames after ``cursor`` from the window, or ``None`` if the window starts later."""
        if cursor < self.floor:
            return None
        return self._frames[bisect.bisect_right(self._ids, cursor) :]

    async def wait(self, cursor: int) -> None:
        """Until an event newer than ``cursor`` is in the window."""
        if self.last <= cursor:
            await self._tick.wait()

    def _head(self) -> int:
        with self.store.read() as tx:
            return tx.event_head()

    async def _pump(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)
            self._wake.clear()
            try:
                frames = await asyncio.to_thread(read_frames, self.store, self.last)
            except Exception:  # a database hiccup must not kill every stream: retry next tick
                await asyncio.sleep(self.poll_s)
                continue
            if not frames:
                continue
            self._ids += [f.id for f in frames]
            self._frames += frames
            self.last = frames[-1].id
            if len(self._frames) > self.window:
                cut = len(self._frames) - self.window
                self.floor = self._ids[cut - 1]
                del self._ids[:cut], self._frames[:cut]
            tick, self._tick = self._tick, asyncio.Event()
            tick.set()
            if len(frames) == READ_LIMIT:
                self._wake.set()
