"""``taskloom mcp``: serve the tools to an MCP client over stdio, bound to one thread."""

from __future__ import annotations

from typing import Annotated

import typer

from taskloom.cli.common import DbOption, open_announced


def mcp(
    thread: Annotated[str, typer.Option("--thread", help="Thread every call acts on.")],
    agent: Annotated[str | None, typer.Option("--agent", help="Agent id of the caller.")] = None,
    db: DbOption = None,
) -> None:
    """Run an MCP server on stdin/stdout exposing every model tool for one thread.

    Example: taskloom mcp --thread my-thread --agent claude-1
    """
    import asyncio

    from taskloom.domain.threads import check_thread_id
    from taskloom.mcp import serve_stdio
    from taskloom.tools.registry import ToolContext

    ctx = ToolContext(thread_id=check_thread_id(thread), agent_id=agent)
    tl = open_announced(db)
    asyncio.run(serve_stdio(tl, ctx))
