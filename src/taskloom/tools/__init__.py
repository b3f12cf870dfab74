"""Model-facing tools: one registry, rendered for OpenAI, Anthropic and MCP.

Each tool module (``board``, ``task_list``, ``goals``, ``queue``, ``stash``) exports its tools
as ``TOOLS``; :data:`BUILTIN_TOOLS` lists them all, and a :class:`ToolRegistry` is built from
it.
"""

from __future__ import annotations

from taskloom.tools.registry import (
    BUILTIN_TOOLS,
    Toolbox,
    ToolRegistry,
    dispatch,
)
from taskloom.tools.spec import ToolContext, ToolEnv, ToolHost, ToolResult, ToolSpec

__all__ = [
    "BUILTIN_TOOLS",
    "ToolContext",
    "ToolEnv",
    "ToolHost",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "dispatch",
]
