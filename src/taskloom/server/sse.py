"""SSE from the outbox: every event committed by any process, in id order, resumable.

A stream opened without a cursor (a fresh page), or with one whose events retention has
pruned, starts with the current snapshots tagged with the outbox head, then follows live. A
``Last-Event-ID`` that is still covered resumes exactly after it: no gap, no duplicate. The
events of one thread are selected with ``thread``; queue events (``task_state``) belong to no
thread and go to every stream unless ``tasks=0``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from taskloom.domain.errors import TaskloomError
from taskloom.outbox import fresh_snapshots, pruned_through
from taskloom.server.hub import EventHub, Frame, read_frames, to_frame
from taskloom.store.base import Store

RETRY_S = 1.0
"""How long a stream waits before reading again when the database could not answer."""


def _opening(store: Store, after: int | None, thread_id: str | None) -> tuple[int, list[Frame]]:
    """Where a stream starts: right after ``after`` if the outbox still covers it, else (no
    cursor, a pruned one, or one past the head: another database's, after a restore) at the
    head, with the current snapshots."""
    if after is not None:
        with store.read() as tx:
            head = tx.event_head()
            if pruned_through(tx) <= after <= head:
                return after, []
    with store.read() as tx:
        head, events = fresh_snapshots(tx, thread_id)
    return head, [to_frame(e) for e in events]


async def open_stream(
    hub: EventHub, *, after: int | None, thread_id: str | None
) -> tuple[int, list[Frame]]:
    """The cursor and opening frames of a stream, read before the response starts, so a
    database that cannot answer is an HTTP error rather than a stream cut short."""
    await hub.start()
    return await asyncio.to_thread(_opening, hub.store, after, thread_id)


async def event_stream(
    hub: EventHub,
    opened: tuple[int, list[Frame]],
    *,
    thread_id: str | None,
    tasks: bool = True,
) -> AsyncIterator[bytes]:
    """The frames of an opened stream (:func:`open_stream`), then every later one. While the
    database cannot be read the stream stays open (pings go on) and catches up afterwards."""
    cursor, opening = opened
    for frame in opening:
        yield frame.wire

    def wanted(frame: Frame) -> bool:
        if frame.thread_id is None:
            return tasks
        return thread_id is None or frame.thread_id == thread_id

    while True:
        frames = hub.since(cursor)
        if frames is None:  # behind the shared window: catch up from the table
            try:
                frames = await asyncio.to_thread(read_frames, hub.store, cursor)
            except TaskloomError:
                await asyncio.sleep(RETRY_S)
                continue
            if not frames:
                cursor = max(cursor, hub.floor)
                continue
        for frame in frames:
            cursor = frame.id
            if wanted(frame):
                yield frame.wire
        if not frames:
            await hub.wait(cursor)
