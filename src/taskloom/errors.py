"""Every public error, for ``except`` clauses: ``from taskloom.errors import LeaseLost``.

The hierarchy (``TaskloomError`` at its root) is defined in :mod:`taskloom.domain.errors`,
which describes each class and the HTTP status it maps to.
"""

from __future__ import annotations

from taskloom.domain.errors import (
    BudgetExceeded,
    Conflict,
    Interrupted,
    InvalidInput,
    InvariantViolation,
    LeaseLost,
    NoRetry,
    NotFound,
    ProviderError,
    RequestTimeout,
    StoreBusy,
    StoreError,
    TaskFailed,
    TaskloomError,
    TooLarge,
    TurnFailed,
    WaitTimeout,
)

__all__ = [
    "BudgetExceeded",
    "Conflict",
    "Interrupted",
    "InvalidInput",
    "InvariantViolation",
    "LeaseLost",
    "NoRetry",
    "NotFound",
    "ProviderError",
    "RequestTimeout",
    "StoreBusy",
    "StoreError",
    "TaskFailed",
    "TaskloomError",
    "TooLarge",
    "TurnFailed",
    "WaitTimeout",
]
