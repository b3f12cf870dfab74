"""SSE from the outbox: every event committed by any process, in id order, resumable.

A stream opened without a cursor (a fresh page), with one whose events retention has pruned,
or with one from another history (:mod:`taskloom.server.cursor`: a restored or another
database), starts with an opening: an ``opening`` event, the current snapshots, each an event at
the outbox head, and an ``opened`` event. The snapshots are read and sent a page at a time, so a
stream costs one page of memory however many boards there are, and its first bytes leave after
the first page. Their frames carry no SSE ``id:`` (their body holds the head); ``opened``, the
first frame with one, carries the stamped head. A client cut off mid-opening therefore
reconnects with the cursor it had (none, or one the outbox does not cover) and gets the whole
opening again, instead of resuming after the head without the snapshots it missed. The stream
then follows live. A ``Last-Event-ID`` that is still covered (and, if stamped, still names the
same event) resumes exactly after it: no gap, no duplicate; ``after=0`` replays every event
still kept. The events of one thread are selected with ``thread``; queue events
(``task_state``) belong to no thread and go to every stream unless ``tasks=0``.

A stream ends (its response completed, not cut) when its ``stop`` event is set: the server is
shutting down. One stopped mid-opening ends without the head's id, so it opens afresh later.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio

from taskloom._pools import STREAMS
from taskloom.domain.errors import TaskloomError
from taskloom.server.cursor import Cursor, stamp_at
from taskloom.server.hub import (
    EventHub,
    Frame,
    opening_end,
    opening_start,
    read_frames,
    to_frame,
)
from taskloom.store.base import Store, Transaction
from taskloom.store.outbox import SnapshotPosition, pruned_through, snapshot_page

RETRY_S = 1.0
"""How long a stream waits before reading again when the database could not answer."""
SNAPSHOT_PAGE = 32
"""The most snapshots a stream reads (and holds) at once while it opens."""


@dataclass(frozen=True, slots=True)
class Opening:
    """Where a stream starts: its cursor, the first page of snapshots, where the rest of
    them are read from (``None``: no more), and whether it opens with them (``fresh``, even
    if there are none: its cursor, the head, is sent with its ``stamp`` once they all are)."""

    cursor: int
    frames: list[Frame]
    rest: SnapshotPosition | None = None
    fresh: bool = False
    stamp: str = ""


def _snapshots(
    store: Store, head: int, thread_id: str | None, start: SnapshotPosition
) -> tuple[list[Frame], SnapshotPosition | None]:
    with store.read() as tx:
        events, rest = snapshot_page(tx, head, thread_id, start, SNAPSHOT_PAGE)
    return [to_frame(e, tagged=False) for e in events], rest


def _covers(tx: Transaction, after: Cursor, head: int) -> bool:
    """Whether the outbox still holds every event after ``after`` and, for a stamped cursor,
    still names by it the event it named when sent (not another database's). A plain ``0``
    covers what is kept, pruned or not."""
    if after.stamp is None and after.id == 0:
        return True
    if not pruned_through(tx) <= after.id <= head:
        return False
    return after.stamp is None or stamp_at(tx, after.id) == after.stamp


def _opening(store: Store, after: Cursor | None, thread_id: str | None) -> Opening:
    """Where a stream starts: right after ``after`` if the outbox still covers it, else (no
    cursor, a pruned one, one past the head or from another history: a restored or another
    database) at the head, with the current snapshots."""
    with store.read() as tx:
        head = tx.event_head()
        if after is not None and _covers(tx, after, head):
            return Opening(after.id, [])
        head_stamp = stamp_at(tx, head)
    frames, rest = _snapshots(store, head, thread_id, (0, None))
    return Opening(head, frames, rest, fresh=True, stamp=head_stamp)


async def open_stream(hub: EventHub, *, after: Cursor | None, thread_id: str | None) -> Opening:
    """The cursor and first opening frames of a stream, read before the response starts, so
    a database that cannot answer is an HTTP error rather than a stream cut short."""
    await hub.start()
    return await STREAMS.run(_opening, hub.store, after, thread_id)


async def _pause(seconds: float, stop: anyio.Event | None) -> None:
    """Sleep ``seconds``, or less if ``stop`` is set meanwhile."""
    if stop is None:
        await asyncio.sleep(seconds)
        return
    with anyio.move_on_after(seconds):
        await stop.wait()


async def event_stream(
    hub: EventHub,
    opened: Opening,
    *,
    thread_id: str | None,
    tasks: bool = True,
    stop: anyio.Event | None = None,
) -> AsyncIterator[bytes]:
    """The frames of an opened stream (:func:`open_stream`): the rest of its opening (its
    snapshots, a page at a time, then ``opened`` with the head's id), then every later
    event. While the database cannot be read the stream stays open (pings go on) and
    catches up afterwards. It ends when ``stop`` is set."""

    def stopped() -> bool:
        return stop is not None and stop.is_set()

    async def send(opened: Opening) -> AsyncIterator[bytes]:
        rest = opened.rest
        if opened.fresh:
            yield opening_start(opened.cursor)
        for frame in opened.frames:
            yield frame.wire
        while rest is not None and not stopped():
            try:
                page, rest = await STREAMS.run(
                    _snapshots, hub.store, opened.cursor, thread_id, rest
                )
            except TaskloomError:
                await _pause(RETRY_S, stop)
                continue
            for frame in page:
                yield frame.wire
        if opened.fresh and rest is None:
            yield opening_end(opened.cursor, opened.stamp)

    def wanted(frame: Frame) -> bool:
        if frame.thread_id is None:
            return tasks
        return thread_id is None or frame.thread_id == thread_id

    async for wire in send(opened):
        yield wire
    cursor = opened.cursor
    while not stopped():
        frames = hub.since(cursor)
        if frames is None:  # behind the shared window: catch up from the table
            try:
                frames, reopened = await STREAMS.run(_catch_up, hub.store, cursor, thread_id)
            except TaskloomError:
                await _pause(RETRY_S, stop)
                continue
            if reopened is not None:
                async for wire in send(reopened):
                    yield wire
                cursor = reopened.cursor
                continue
            if not frames:
                cursor = max(cursor, hub.floor)
                continue
        for frame in frames:
            cursor = frame.id
            if wanted(frame):
                yield frame.wire
        if not frames:
            await hub.wait(cursor, stop)


def _catch_up(
    store: Store, cursor: int, thread_id: str | None
) -> tuple[list[Frame], Opening | None]:
    """The events after ``cursor`` from the table, or, if retention has pruned some of them
    meanwhile (the stream was slow, or fell behind the window), an opening at the head
    instead: a hole in the events would leave the boards they changed stale, with no sign.
    The check follows the read, so a prune that committed before it is always seen (one
    that commits during it only costs an opening the stream did not need). A cursor of 0
    reads from the oldest event kept (``after=0``): nothing before it is owed."""
    frames = read_frames(store, cursor)
    if cursor == 0:
        return frames, None
    with store.read() as tx:
        pruned = pruned_through(tx) > cursor
    if not pruned:
        return frames, None
    return [], _opening(store, None, thread_id)
