"""Model-facing tools: one registry, rendered for OpenAI, Anthropic and MCP.

Each tool module (``board``, ``task_list``, ``goals``, ``queue``, ``delegate``, ``stash``)
exports its tools as ``TOOLS``; :data:`BUILTIN_TOOLS` lists them all, and a
:class:`ToolRegistry` is built from it. :data:`PROFILES` names the sets of tools a model may be
given.
"""

from __future__ import annotations

from taskloom.tools.profiles import PROFILES
from taskloom.tools.registry import (
    BUILTIN_TOOLS,
    Choice,
    Toolbox,
    ToolRegistry,
    dispatch,
)
from taskloom.tools.spec import Effect, ToolContext, ToolEnv, ToolHost, ToolResult, ToolSpec

__all__ = [
    "BUILTIN_TOOLS",
    "PROFILES",
    "Choice",
    "Effect",
    "ToolContext",
    "ToolEnv",
    "ToolHost",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "dispatch",
]
