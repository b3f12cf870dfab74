"""The context guard: stash oversized tool results, retrieve them exactly or by query.

``tl.guard(thread).wrap(tool_name, output)`` is the entry point; see :mod:`taskloom.guard.core`.
"""

from __future__ import annotations

from taskloom.guard.budget import TurnResult
from taskloom.guard.core import Guard, GuardConfig
from taskloom.guard.tokens import count_tokens, counter
from taskloom.guard.wrapped import Wrapped

__all__ = ["Guard", "GuardConfig", "TurnResult", "Wrapped", "count_tokens", "counter"]
