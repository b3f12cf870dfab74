"""A queue task's status in the words other systems use: MCP task statuses and A2A task states.

taskloom's own statuses stay as they are; these words are added where a task is shown to
other systems (``--json``, the HTTP API, MCP Tasks). One table, :data:`WORDS`, says them all.

MCP keeps ``failed`` for protocol errors: work that failed is a tool result with ``isError``,
so a ``dead`` task is ``completed`` to MCP (its result an error) and ``TASK_STATE_FAILED``
to A2A.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

McpStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


class Words(NamedTuple):
    """One status in MCP's and A2A's words, and whether MCP reports it as an error result."""

    mcp: McpStatus
    a2a: str
    is_error: bool = False


WORDS: dict[str, Words] = {
    "ready": Words("working", "TASK_STATE_SUBMITTED"),
    "in_progress": Words("working", "TASK_STATE_WORKING"),
    "blocked": Words("working", "TASK_STATE_SUBMITTED"),
    "completed": Words("completed", "TASK_STATE_COMPLETED"),
    "dead": Words("completed", "TASK_STATE_FAILED", is_error=True),
    "canceled": Words("cancelled", "TASK_STATE_CANCELED"),
}
"""Each taskloom status (:class:`~taskloom.domain.queue.TaskStatus`, by value): its MCP
task status and its A2A ``TaskState``."""


def words(status: str) -> Words:
    """``status`` (a :class:`~taskloom.domain.queue.TaskStatus` or its value) in MCP's and
    A2A's words."""
    return WORDS[status]
