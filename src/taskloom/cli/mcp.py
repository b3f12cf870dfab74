"""``taskloom mcp``: serve the tools to an MCP client over stdio, bound to one thread."""

from __future__ import annotations

from typing import Annotated

import typer

from taskloom.cli.common import DbOption, open_announced
from taskloom.cli.tool import ToolsOption


def mcp(
    thread: Annotated[str, typer.Option("--thread", help="Thread every call acts on.")],
    agent: Annotated[str | None, typer.Option("--agent", help="Agent id of the caller.")] = None,
    tools: ToolsOption = None,
    task_ttl: Annotated[
        float,
        typer.Option("--task-ttl", help="Seconds an MCP task and its result are kept.", min=1),
    ] = 86_400.0,
    db: DbOption = None,
) -> None:
    """Run an MCP server on stdin/stdout serving a profile's tools for one thread.

    Example: taskloom mcp --thread my-thread --agent claude-1 --tools planner
    """
    import asyncio

    from taskloom.domain.threads import check_thread_id
    from taskloom.mcp import McpConfig, TaskSettings, serve_stdio
    from taskloom.tools.profiles import select
    from taskloom.tools.registry import BUILTIN_TOOLS, ToolContext

    ctx = ToolContext(thread_id=check_thread_id(thread), agent_id=agent)
    select(BUILTIN_TOOLS, tools)  # an unknown profile or tool stops us here, naming the valid
    tl = open_announced(db)
    asyncio.run(serve_stdio(tl, ctx, McpConfig(tools, TaskSettings(ttl_s=task_ttl))))
