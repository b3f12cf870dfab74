"""taskloom: durable, shared work state for AI agents.

>>> import taskloom
>>> tl = taskloom.connect("sqlite:///demo.db")          # doctest: +SKIP
>>> tl.board("thread-1").add("Write the tests")["markdown"]   # doctest: +SKIP
'- [ ] Write the tests  `(0193…)`'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from taskloom.client import AsyncTaskloom, Taskloom, connect, connect_async
from taskloom.domain.board import Board
from taskloom.domain.card import ApprovalMode, Card, CardPatch, CardStatus
from taskloom.domain.events import Event
from taskloom.domain.queue import Task
from taskloom.errors import (
    BudgetExceeded,
    Conflict,
    InvalidInput,
    InvariantViolation,
    LeaseLost,
    NoRetry,
    NotFound,
    StoreBusy,
    StoreError,
    TaskFailed,
    TaskloomError,
    WaitTimeout,
)
from taskloom.queue.worker import Outcome, Worker, WorkSummary

if TYPE_CHECKING:
    from taskloom.tools.spec import ToolContext, ToolResult, ToolSpec

_TOOL_NAMES = ("ToolContext", "ToolResult", "ToolSpec")


def __getattr__(name: str) -> Any:
    """The tool types, imported on first use: they bring pydantic, which a hook, a worker or
    a CLI command that never hands tools to a model does without."""
    if name in _TOOL_NAMES:
        from taskloom.tools import spec

        return getattr(spec, name)
    raise AttributeError(f"module 'taskloom' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "ApprovalMode",
    "AsyncTaskloom",
    "Board",
    "BudgetExceeded",
    "Card",
    "CardPatch",
    "CardStatus",
    "Conflict",
    "Event",
    "InvalidInput",
    "InvariantViolation",
    "LeaseLost",
    "NoRetry",
    "NotFound",
    "Outcome",
    "StoreBusy",
    "StoreError",
    "Task",
    "TaskFailed",
    "Taskloom",
    "TaskloomError",
    "ToolContext",
    "ToolResult",
    "ToolSpec",
    "WaitTimeout",
    "WorkSummary",
    "Worker",
    "__version__",
    "connect",
    "connect_async",
]
