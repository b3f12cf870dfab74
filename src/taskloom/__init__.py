"""taskloom: durable, shared work state for AI agents.

>>> import taskloom
>>> tl = taskloom.connect("sqlite:///demo.db")          # doctest: +SKIP
>>> tl.board("thread-1").add("Write the tests")["markdown"]   # doctest: +SKIP
'- [ ] Write the tests  `(0193…)`'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from taskloom.client import AsyncTaskloom, Taskloom, connect, connect_async
    from taskloom.domain.board import Board
    from taskloom.domain.card import ApprovalMode, Card, CardPatch, CardStatus
    from taskloom.domain.events import Event
    from taskloom.domain.queue import Task
    from taskloom.queue.worker import Outcome, Worker, WorkSummary
    from taskloom.tools.spec import ToolContext, ToolResult, ToolSpec

_LAZY = {
    "taskloom.client": ("AsyncTaskloom", "Taskloom", "connect", "connect_async"),
    "taskloom.domain.board": ("Board",),
    "taskloom.domain.card": ("ApprovalMode", "Card", "CardPatch", "CardStatus"),
    "taskloom.domain.events": ("Event",),
    "taskloom.domain.queue": ("Task",),
    "taskloom.queue.worker": ("Outcome", "Worker", "WorkSummary"),
    "taskloom.tools.spec": ("ToolContext", "ToolResult", "ToolSpec"),
}
"""Where each name but the errors is defined: imported on first use. A hook, a worker or a
CLI command imports only what it uses (the tools bring pydantic; the boards, the worker and
the async API more code a prompt hook never runs)."""
_HOME = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    """The name from its module (:data:`_LAZY`), imported on first use and then kept."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'taskloom' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Every public name, the lazy ones too (``dir()``, a REPL's completion)."""
    return sorted({*globals(), *__all__})


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
