"""Surfacing: the block of ready tasks a prompt hook adds to an agent's context.

The block is shown only when what it shows changed since the agent last saw it (how many
tasks it could claim, and which come first), judged by a digest kept per agent in the
database (``agent_cursors``), so every process and every hook of an agent shares one cursor.
Its cost is a count of the backlog, in the database, and a read of its first tasks. Reads
only, but for the cursor: a hook must not create a database, claim, or sweep, and must answer
at once, as it holds the user's prompt: the cursor is written only if the lock is had within
:data:`CURSOR_WAIT_S`.
:class:`taskloom.queue.handle.Queue` exposes this as ``surface``.
"""

from __future__ import annotations

import hashlib

from taskloom.domain.errors import StoreBusy
from taskloom.domain.surface import SURFACE_ROWS, surface_block
from taskloom.queue.graph import first_ready
from taskloom.store.base import Store

CURSOR_WAIT_S = 0.25
"""The longest the cursor write waits for a lock another process holds: past it the block is
returned all the same and the cursor left as it was (the worst case: the same block again
at the next prompt)."""


def surface(store: Store, agent_id: str, now: float, claim: str) -> str | None:
    """The block for ``agent_id``, or ``None`` if it is the block the agent last saw."""
    tasks = store.tasks
    with store.read() as tx:
        total = tasks.claimable_count(tx, agent_id, now)
        ids = first_ready(tasks, tx, agent_id, now, (), SURFACE_ROWS) if total else []
        digest = hashlib.sha256(f"{total}:{','.join(ids)}".encode()).hexdigest()
        seen = tasks.seen(tx, agent_id)
        if (seen is None and not total) or seen == digest:
            return None  # nothing new (nothing at all: no cursor is written, no file made)
        top = tasks.get_many(tx, ids)
    try:
        with store.side_write(CURSOR_WAIT_S) as tx:
            # Set only if still different: of two hooks racing for one agent, one shows the
            # block. (If the ready set changed in between, the next prompt shows it again.)
            changed = tasks.see(tx, agent_id, digest, now)
    except StoreBusy:
        changed = True  # unrecorded: shown now, and again next time
    if not total or not changed:
        return None
    return surface_block(agent_id, top, total, claim)
