"""An MCP server over the one tool registry (official ``mcp`` SDK, low-level server API).

Tools are listed from the registry at call time, so every tool a feature registers is served
with the same name, description and schema as the OpenAI/Anthropic renderings. The thread (and
agent) a call acts on is fixed by the server's configuration, never by tool arguments; a
registry error result becomes an MCP tool error (``is_error``) with the reason as text.
Resources: the bound thread's board markdown and goal.

Over stdio the binding is the command line (``taskloom mcp --thread T``). Over streamable HTTP
(``/mcp`` on ``taskloom serve``) it is the request's ``X-Taskloom-Thread`` and
``X-Taskloom-Agent`` headers, which the client configures once per connection; a call without
a thread header gets a tool error for every tool that needs one.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

from taskloom.client import Taskloom
from taskloom.tools.registry import ToolContext

BOARD_URI = "taskloom://board"
GOAL_URI = "taskloom://goal"


THREAD_HEADER = "x-taskloom-thread"
AGENT_HEADER = "x-taskloom-agent"


def context_from_headers(request: Any) -> ToolContext:
    """The binding of an HTTP request: its thread and agent headers (never tool arguments)."""
    headers = getattr(request, "headers", None) or {}
    return ToolContext(
        thread_id=(headers.get(THREAD_HEADER) or "").strip() or None,
        agent_id=(headers.get(AGENT_HEADER) or "").strip() or None,
    )


def build_server(tl: Taskloom, ctx: ToolContext | None) -> Server[Any]:
    """An MCP server bound to one thread (``ctx``), or, with ``ctx=None``, to whatever each
    HTTP request's headers name."""

    def bound(request_ctx: Any) -> ToolContext:
        return ctx if ctx is not None else context_from_headers(request_ctx.request)

    async def list_tools(_: Any, __: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=s.name, description=s.description, input_schema=s.input_schema())
                for s in tl.tools.specs()
            ]
        )

    async def call_tool(
        request_ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        result = await asyncio.to_thread(
            tl.tools.dispatch, params.name, params.arguments or {}, bound(request_ctx)
        )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.content)],
            is_error=result.is_error,
        )

    async def list_resources(_: Any, __: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=BOARD_URI, name="board", mime_type="text/markdown"),
                types.Resource(uri=GOAL_URI, name="goal", mime_type="application/json"),
            ]
        )

    async def read_resource(request_ctx: Any, params: types.ReadResourceRequestParams) -> Any:
        thread = bound(request_ctx).thread_id or ""
        if str(params.uri) == BOARD_URI:
            snap = await asyncio.to_thread(tl.board(thread).list)
            text, mime = snap["markdown"], "text/markdown"
        elif str(params.uri) == GOAL_URI:
            goal = await asyncio.to_thread(tl.goal(thread).get)
            text, mime = json.dumps(goal["goal"]), "application/json"
        else:
            raise ValueError(f"unknown resource {params.uri}")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=params.uri, mime_type=mime, text=text)]
        )

    return Server(
        "taskloom",
        instructions="Durable todo board, goal, queue and stash for this thread.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


async def serve_stdio(tl: Taskloom, ctx: ToolContext) -> None:
    server = build_server(tl, ctx)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def http_session_manager(tl: Taskloom, *, loopback_only: bool) -> Any:
    """The streamable-HTTP MCP endpoint for ``taskloom serve`` (run it in the app lifespan).

    On a loopback-only server, Host and Origin must be local: a web page elsewhere cannot
    reach the tools through the user's browser (DNS rebinding).
    """
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    local = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=loopback_only,
        allowed_hosts=local,
        allowed_origins=[f"http://{h}" for h in local],
    )
    return StreamableHTTPSessionManager(build_server(tl, None), security_settings=security)
