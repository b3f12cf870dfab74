"""One reader of the outbox per server process, fanned out to every SSE client.

Each client polling the events table would cost one query per client per tick; the hub reads
new events once, encodes each frame once, and keeps a window of recent frames that clients
serve themselves from. It reads when woken (a write made through this server, or PostgreSQL's
NOTIFY from any process) and otherwise every :data:`POLL_S`, which is how changes made by
other processes on SQLite arrive: an indexed ``id > cursor`` range read is cheap enough to run
forty times a second. Where the database wakes it, the hub polls only every
:data:`PUSHED_POLL_S`, as a safety net, so several servers on one PostgreSQL do not each query
it forty times a second while idle; its LISTEN is in place before it reads the head it starts
from, so no commit falls between the two. A client whose cursor is older than the window
catches up from the table itself, then joins the shared window.

The window is bounded by frame count and by total bytes: one event can be a whole board
(hundreds of KB for a big one), so a count alone would let memory grow with event size. Reads
from the table are sized the same way, in batches that grow only while the frames are small.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass

import anyio
from sse_starlette.event import ServerSentEvent

from taskloom._pools import STREAMS
from taskloom.domain.events import TASK_STATE, Event
from taskloom.server.cursor import stamp, wire_id
from taskloom.store.base import Store

POLL_S = 0.025
"""How often a hub reads when nothing can wake it (SQLite)."""
PUSHED_POLL_S = 2.0
"""How often a hub woken by its database reads anyway: for a writer that died between its
commit and its notification, or a change made by hand."""
LISTEN_READY_S = 5.0
"""How long a starting hub waits for its LISTEN to be in place (past it, it polls)."""
READ_LIMIT = 1000
"""The most frames one read returns."""
READ_BYTES = 8 * 1024 * 1024
"""About the most wire bytes one read returns (it stops after the batch that passes this)."""
FIRST_BATCH = 16
"""The first batch of a read: frame sizes are unknown until some have been seen."""
WINDOW_FRAMES = 4096
WINDOW_BYTES = 32 * 1024 * 1024
OPENING = "opening"
OPENED = "opened"
"""The SSE event types that start and end an opening (see :mod:`taskloom.server.sse`)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """An event ready to send: its id, type, thread, and its SSE bytes, encoded once for
    every client."""

    id: int
    type: str
    thread_id: str | None
    wire: bytes


def to_frame(event: Event, *, tagged: bool = True) -> Frame:
    """Encode an event for the wire, with its stamped id (:mod:`taskloom.server.cursor`) as
    the SSE ``id:`` unless not ``tagged`` (its body has the id all the same). Lease tokens are
    capabilities for a worker, not something to broadcast to every viewer, so they are
    blanked here."""
    body = event.to_dict()
    if event.type == TASK_STATE and body["data"].get("lease_token"):
        body["data"] = {**body["data"], "lease_token": None}
    data = json.dumps(body)
    event_id = int(event.id or 0)
    sse_id = None
    if tagged:
        sse_id = wire_id(event_id, stamp(event_id, event.type, event.thread_id, event.created_at))
    wire = ServerSentEvent(data, event=event.type, id=sse_id).encode()
    return Frame(event_id, event.type, event.thread_id, wire)


def opening_start(head: int) -> bytes:
    """The ``opening`` event that starts every opening: the snapshots that follow (each at
    ``head``) replace what the client shows, whatever their versions, since they may come
    from another history than the one it showed."""
    return ServerSentEvent(json.dumps({"head": head}), event=OPENING).encode()


def opening_end(head: int, head_stamp: str) -> bytes:
    """The ``opened`` event that ends a whole opening, with the stamped head as its SSE
    ``id:``: the first id the stream sets, which the client resumes from after a reconnect;
    what the opening did not send is not in this database."""
    data = json.dumps({"head": head})
    return ServerSentEvent(data, event=OPENED, id=wire_id(head, head_stamp)).encode()


def read_frames(
    store: Store, after: int, limit: int = READ_LIMIT, max_bytes: int = READ_BYTES
) -> list[Frame]:
    """Frames after ``after``, in id order: at most ``limit`` of them and about ``max_bytes``."""
    return _read(store, after, limit, max_bytes)[0]


def _read(store: Store, after: int, limit: int, max_bytes: int) -> tuple[list[Frame], bool]:
    """Frames after ``after`` and whether a read stopped by a limit may have left more.

    Each batch is its own short read; the next batch doubles at most, and only as far as the
    largest frame seen so far still fits in what is left of ``max_bytes``, so a run of large
    events is read a few at a time instead of ``limit`` at once."""
    frames: list[Frame] = []
    size = largest = 0
    want = min(FIRST_BATCH, limit)
    while True:
        with store.read() as tx:
            got = [to_frame(e) for e in tx.events_after(after, limit=want)]
        frames += got
        if len(got) < want:
            return frames, False
        for frame in got:
            size += len(frame.wire)
            largest = max(largest, len(frame.wire))
        after = got[-1].id
        want = min(2 * want, limit - len(frames), (max_bytes - size) // largest)
        if want < 1:
            return frames, True


class EventHub:
    def __init__(
        self,
        store: Store,
        *,
        poll_s: float | None = None,
        window: int = WINDOW_FRAMES,
        window_bytes: int = WINDOW_BYTES,
    ) -> None:
        """``poll_s``: how often to read when not woken (``None``: :data:`POLL_S`, or
        :data:`PUSHED_POLL_S` where the database wakes the hub). ``window`` frames and
        ``window_bytes`` of their wire bytes at most stay in memory (the oldest go first; the
        newest frame stays even if it alone is larger)."""
        if window < 1 or window_bytes < 1:
            raise ValueError("the hub's window needs room for at least one frame")
        if poll_s is not None and not poll_s > 0:
            raise ValueError("the hub's poll interval must be more than 0 seconds")
        self.store = store
        self.poll_s = poll_s or POLL_S
        self._chosen_poll = poll_s
        self.window = window
        self.window_bytes = window_bytes
        self._ids: list[int] = []
        self._frames: list[Frame] = []
        self._bytes = 0
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
            loop = asyncio.get_running_loop()
            listening = asyncio.Event()

            def wake(_event_id: int) -> None:  # called on the store's listener thread
                loop.call_soon_threadsafe(self._wake.set)

            def ready() -> None:
                loop.call_soon_threadsafe(listening.set)

            self._unlisten = await STREAMS.run(self.store.listen, wake, ready=ready)
            try:
                if self._unlisten is not None:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(listening.wait(), LISTEN_READY_S)
                    if listening.is_set():  # else it polls as often as where nothing wakes it
                        self.poll_s = self._chosen_poll or PUSHED_POLL_S
                self.floor = self.last = await STREAMS.run(self._head)
            except BaseException:
                # The database could not be read (an outage): the next client starts again,
                # so this start's listener goes, or each attempt would leave one behind.
                await self._stop_listening()
                raise
            self._task = asyncio.create_task(self._pump())

    async def _stop_listening(self) -> None:
        unlisten, self._unlisten = self._unlisten, None
        if unlisten is not None:
            await STREAMS.run(unlisten)

    async def stop(self) -> None:
        await self._stop_listening()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = None

    def poke(self) -> None:
        """Read now: something was just written (call from the event loop)."""
        self._wake.set()

    @property
    def held_bytes(self) -> int:
        """The wire bytes of the frames in the window."""
        return self._bytes

    @property
    def held_frames(self) -> int:
        return len(self._frames)

    def since(self, cursor: int) -> list[Frame] | None:
        """Frames after ``cursor`` from the window, or ``None`` if the window starts later."""
        if cursor < self.floor:
            return None
        return self._frames[bisect.bisect_right(self._ids, cursor) :]

    async def wait(self, cursor: int, stop: anyio.Event | None = None) -> None:
        """Until an event newer than ``cursor`` is in the window, or ``stop`` is set."""
        if self.last > cursor:
            return
        if stop is None:
            await self._tick.wait()
            return
        waits = [asyncio.ensure_future(self._tick.wait()), asyncio.ensure_future(stop.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    def _head(self) -> int:
        with self.store.read() as tx:
            return tx.event_head()

    async def _pump(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)
            self._wake.clear()
            try:
                frames, more = await STREAMS.run(
                    _read, self.store, self.last, READ_LIMIT, READ_BYTES
                )
            except Exception:  # a database hiccup must not kill every stream: retry next tick
                await asyncio.sleep(self.poll_s)
                continue
            if not frames:
                continue
            self._ids += [f.id for f in frames]
            self._frames += frames
            self._bytes += sum(len(f.wire) for f in frames)
            self.last = frames[-1].id
            self._trim()
            tick, self._tick = self._tick, asyncio.Event()
            tick.set()
            if more:
                self._wake.set()

    def _trim(self) -> None:
        """Drop the oldest frames until the window fits both limits (keeping the newest)."""
        cut, held, size = 0, len(self._frames), self._bytes
        while held - cut > 1 and (held - cut > self.window or size > self.window_bytes):
            size -= len(self._frames[cut].wire)
            cut += 1
        if cut:
            self.floor = self._ids[cut - 1]
            self._bytes = size
            del self._ids[:cut], self._frames[:cut]
