"""An MCP server over the one tool registry (official ``mcp`` SDK, low-level server API).

Tools are listed from the registry at call time, so every tool a feature registers is served
with the same name, description and schema as the OpenAI/Anthropic renderings. The thread (and
agent) a call acts on is fixed by the server's configuration, never by tool arguments; a
registry error result becomes an MCP tool error (``is_error``) with the reason as text.
Resources: the bound thread's board markdown and goal.
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


def build_server(tl: Taskloom, ctx: ToolContext) -> Server[Any]:
    """An MCP server bound to one thread (``ctx``)."""

    async def list_tools(_: Any, __: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=s.name, description=s.description, input_schema=s.input_schema())
                for s in tl.tools.specs()
            ]
        )

    async def call_tool(_: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = await asyncio.to_thread(
            tl.tools.dispatch, params.name, params.arguments or {}, ctx
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

    async def read_resource(_: Any, params: types.ReadResourceRequestParams) -> Any:
        thread = ctx.thread_id or ""
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
