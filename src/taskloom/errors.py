"""Public home of the error hierarchy (defined in :mod:`taskloom.domain.errors`)."""

from __future__ import annotations

from taskloom.domain.errors import (
    BudgetExceeded,
    Conflict,
    InvalidInput,
    InvariantViolation,
    LeaseLost,
    NotFound,
    StoreBusy,
    StoreError,
    TaskloomError,
    WaitTimeout,
)

__all__ = [
    "BudgetExceeded",
    "Conflict",
    "InvalidInput",
    "InvariantViolation",
    "LeaseLost",
    "NotFound",
    "StoreBusy",
    "StoreError",
    "TaskloomError",
    "WaitTimeout",
]
