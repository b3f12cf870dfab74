"""SSE from the outbox: every event committed by any process, in id order, resumable.

The stream polls the events table (a cheap indexed range read) every ``poll_s`` seconds, so a
change made by another process (the CLI, an agent, another server) reaches every client
without a broker. ``Last-Event-ID`` resumes exactly after that id: no gap, no duplicate.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from taskloom.client import Taskloom


async def event_stream(
    tl: Taskloom, *, after: int, thread_id: str | None, poll_s: float = 0.1
) -> AsyncIterator[dict[str, Any]]:
    last = after
    while True:
        events = await asyncio.to_thread(_read, tl, last, thread_id)
        for event in events:
            last = int(event.id or last)
            yield {"id": str(event.id), "event": event.type, "data": json.dumps(event.to_dict())}
        if not events:
            await asyncio.sleep(poll_s)


def _read(tl: Taskloom, after: int, thread_id: str | None) -> list[Any]:
    with tl.store.read() as tx:
        return tx.events_after(after, thread_id=thread_id, limit=500)
