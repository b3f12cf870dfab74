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

from taskloom.outbox import fresh_snapshots, pruned_through
from taskloom.server.hub import EventHub, Frame, read_frames, to_frame
from taskloom.store.base import Store


def _opening(store: Store, after: int | None, thread_id: str | None) -> tuple[int, list[Frame]]:
    if after is not None:
        with store.read() as tx:
            if after >= pruned_through(tx):
                return after, []
    with store.read() as tx:
        head, events = fresh_snapshots(tx, thread_id)
    return head, [to_frame(e) for e in events]


async def event_stream(
    hub: EventHub,
    *,
    after: int | None,
    thread_id: str | None,
    tasks: bool = True,
) -> AsyncIterator[bytes]:
    await hub.start()
    cursor, opening = await asyncio.to_thread(_opening, hub.store, after, thread_id)
    for frame in opening:
        yield frame.wire

    def wanted(frame: Frame) -> bool:
        if frame.thread_id is None:
            return tasks
        return thread_id is None or frame.thread_id == thread_id

    while True:
        frames = hub.since(cursor)
        if frames is None:  # behind the shared window: catch up from the table
            frames = await asyncio.to_thread(read_frames, hub.store, cursor)
            if not frames:
                cursor = max(cursor, hub.floor)
                continue
        for frame in frames:
            cursor = frame.id
            if wanted(frame):
                yield frame.wire
        if not frames:
            await hub.wait(cursor)
