"""Surfacing: the block of ready tasks a prompt hook adds to an agent's context.

The block is shown only when the agent's ready set changed since it last saw it, judged by a
digest of the ids kept per agent in the database (``agent_cursors``), so every process and
every hook of an agent shares one cursor. Reads only, but for the cursor: a hook must not
create a database, claim, or sweep. :class:`taskloom.queue.handle.Queue` exposes these as
``ready_count``, ``unsee`` and ``surface``.
"""

from __future__ import annotations

import hashlib

from taskloom.domain.queue import SURFACE_ROWS, Task, surface_block
from taskloom.store.base import Store
from taskloom.store.queue_sql import CLAIMABLE

READY = f"FROM tasks WHERE {CLAIMABLE} ORDER BY priority, created_at, id"
"""The tasks an agent could claim now, most urgent first (parameters: now, agent, now, now)."""


def ready_count(store: Store, agent_id: str, now: float) -> int:
    """How many tasks ``agent_id`` could claim now (a lease run out included: a claim takes
    it back first)."""
    with store.read() as tx:
        row = tx.query_one(
            f"SELECT count(*) AS n FROM tasks WHERE {CLAIMABLE}", (now, agent_id, now, now)
        )
    return int(row["n"]) if row else 0


def unsee(store: Store, agent_id: str) -> None:
    """Forget the block ``agent_id`` last saw, so that the next one is shown."""
    with store.write() as tx:
        tx.execute("DELETE FROM agent_cursors WHERE agent_id = ?", (agent_id,))


def surface(store: Store, agent_id: str, now: float, claim: str) -> str | None:
    """The block for ``agent_id``, or ``None`` if its ready set is what it last saw."""
    params = (now, agent_id, now, now)
    with store.read() as tx:
        # Only ids for the digest: a hook runs this on every prompt, and mapping a large
        # backlog to tasks costs far more than the five rows shown.
        ids = [str(r["id"]) for r in tx.query(f"SELECT id {READY}", params)]
        digest = hashlib.sha256(",".join(ids).encode()).hexdigest()
        seen = tx.query_one("SELECT digest FROM agent_cursors WHERE agent_id = ?", (agent_id,))
        if (seen is None and not ids) or (seen is not None and seen["digest"] == digest):
            return None  # nothing new (nothing at all: no cursor is written, no file made)
        rows = tx.query(f"SELECT * {READY} LIMIT ?", (*params, SURFACE_ROWS))
        top = [Task.from_row(r) for r in rows]
    with store.write() as tx:
        # Set only if still different: of two hooks racing for one agent, one shows the
        # block. (If the ready set changed in between, the next prompt shows it again.)
        changed = tx.execute(
            "INSERT INTO agent_cursors (agent_id, digest, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT (agent_id) DO UPDATE SET digest = excluded.digest,"
            " updated_at = excluded.updated_at WHERE agent_cursors.digest <> excluded.digest",
            (agent_id, digest, now),
        )
    if not ids or not changed:
        return None
    return surface_block(agent_id, top, len(ids), claim)
