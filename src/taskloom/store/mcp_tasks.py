"""SQL for MCP task records (the MCP Tasks extension's tasks, :mod:`taskloom.mcp.tasks`).

A record is the durable half of a tool call answered as a task: who made it (thread and
agent, ``""`` for none), the tool, the queue task doing the work, and, once the call has
ended, its status (``completed``, ``failed`` or ``cancelled``) with its result (a
``CallToolResult`` as JSON) or its protocol error (JSON). Times are unix
seconds. A record whose ``expires_at`` has passed is gone to every read, and deleted by
:func:`purge_expired`. Portable SQL with ``?`` placeholders, for SQLite and PostgreSQL.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields
from typing import Any

from taskloom.store.base import Row, Store

KINDS = ("follow", "call")
"""``follow``: the call waits for delegated work (a queue task someone else works on).
``call``: the queue task is the call itself, run by a worker of an MCP server."""


@dataclass(frozen=True, slots=True)
class McpTaskRecord:
    id: str
    thread_id: str
    agent_id: str
    tool: str
    queue_task_id: str
    kind: str
    status: str
    result: str | None
    error: str | None
    created_at: float
    updated_at: float
    expires_at: float | None
    poll_ms: int

    @classmethod
    def from_row(cls, row: Row) -> McpTaskRecord:
        values: dict[str, Any] = {f.name: row[f.name] for f in fields(cls)}
        return cls(**values)


_COLUMNS = ", ".join(f.name for f in fields(McpTaskRecord))
_LIVE = "(expires_at IS NULL OR expires_at > ?)"


def insert(store: Store, record: McpTaskRecord) -> None:
    """Store a new record; it is committed when this returns."""
    marks = ", ".join("?" for _ in fields(McpTaskRecord))
    with store.write() as tx:
        tx.execute(f"INSERT INTO mcp_tasks ({_COLUMNS}) VALUES ({marks})", astuple(record))


def get(store: Store, task_id: str, now: float) -> McpTaskRecord | None:
    """The live record ``task_id`` (``None`` if there is none, or it expired)."""
    with store.read() as tx:
        row = tx.query_one(
            f"SELECT {_COLUMNS} FROM mcp_tasks WHERE id = ? AND {_LIVE}", (task_id, now)
        )
    return None if row is None else McpTaskRecord.from_row(row)


WORKING = "working"
ENDS = ("completed", "failed", "cancelled")


def settle(
    store: Store,
    task_id: str,
    now: float,
    status: str,
    *,
    result: str | None = None,
    error: str | None = None,
) -> bool:
    """Record how the call ended (one of :data:`ENDS`, with its result or its error), unless
    it has ended already: the first end recorded is the one every read gives. Whether this
    one was recorded."""
    if status not in ENDS:
        raise ValueError(f"an MCP task ends as one of {ENDS}, not {status!r}")
    with store.write() as tx:
        changed = tx.execute(
            "UPDATE mcp_tasks SET status = ?, result = ?, error = ?, updated_at = ?"
            " WHERE id = ? AND status = ?",
            (status, result, error, now, task_id, WORKING),
        )
    return changed > 0


def purge_expired(store: Store, now: float) -> int:
    """Delete the records whose time to live has run out; how many."""
    with store.write() as tx:
        return tx.execute(
            "DELETE FROM mcp_tasks WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,)
        )
