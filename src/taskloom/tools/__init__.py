"""Model-facing tools: one registry, rendered for OpenAI, Anthropic and MCP."""

from __future__ import annotations

from taskloom.tools.registry import (
    REGISTRY,
    Toolbox,
    ToolContext,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    dispatch,
)

__all__ = [
    "REGISTRY",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "dispatch",
]
