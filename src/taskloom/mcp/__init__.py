"""taskloom's MCP server: the tool registry over stdio (``taskloom mcp``) and streamable HTTP
(``/mcp`` on ``taskloom serve``), for clients of protocol 2025-11-25 and 2026-07-28.

- :mod:`.binding`: what a request is bound to (thread, agent, tools), from the command line
  or each request's headers, never from tool arguments;
- :mod:`.server`: the low-level SDK server: tools of one profile, resources;
- :mod:`.tasks` and :mod:`.runs`: the MCP Tasks extension, on the queue;
- :mod:`.messages`, :mod:`.stdio`, :mod:`.http`: the transports, which answer every message.
"""

from __future__ import annotations

from taskloom.mcp.binding import Binding, from_request
from taskloom.mcp.http import CheckedMessages, http_session_manager
from taskloom.mcp.messages import read_line
from taskloom.mcp.server import BOARD_URI, GOAL_URI, McpConfig, build_server, package_version
from taskloom.mcp.stdio import serve_stdio
from taskloom.mcp.tasks import EXTENSION, TaskSettings

__all__ = [
    "BOARD_URI",
    "EXTENSION",
    "GOAL_URI",
    "Binding",
    "CheckedMessages",
    "McpConfig",
    "TaskSettings",
    "build_server",
    "from_request",
    "http_session_manager",
    "package_version",
    "read_line",
    "serve_stdio",
]
