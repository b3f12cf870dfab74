"""`taskloom mcp` as a real subprocess, driven by the official MCP SDK client over stdio."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import taskloom
from tests.conftest import subprocess_env


def params(db: str, thread: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "taskloom", "mcp", "--thread", thread, "--db", db],
        env=subprocess_env(),
    )


async def _session_calls(db: str, thread: str, title: str) -> dict[str, object]:
    async with (
        stdio_client(params(db, thread)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        added = await session.call_tool("todo", {"op": "add", "content": title})
        bad = await session.call_tool("todo", {"op": "add"})
        listed = await session.call_tool("todo", {"op": "list"})
        board = await session.read_resource("taskloom://board")
        return {
            "names": [t.name for t in tools.tools],
            "added": added,
            "bad": bad,
            "listed": listed.content[0].text,  # type: ignore[union-attr]
            "board": board.contents[0].text,  # type: ignore[union-attr]
        }


def test_mcp_stdio_tools_errors_and_thread_isolation(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'mcp.db'}"

    async def both() -> list[dict[str, object]]:
        return list(
            await asyncio.gather(
                _session_calls(db, "thread-a", "only in a"),
                _session_calls(db, "thread-b", "only in b"),
            )
        )

    a, b = asyncio.run(asyncio.wait_for(both(), 120))
    with taskloom.connect(db) as tl:
        registry = tl.tools.names()
    assert a["names"] == registry  # the MCP tool list is the registry
    assert not a["added"].is_error  # type: ignore[attr-defined]
    assert a["bad"].is_error  # type: ignore[attr-defined]
    assert "op 'add' needs `content`" in a["bad"].content[0].text  # type: ignore[attr-defined]
    assert "only in a" in str(a["listed"]) and "only in b" not in str(a["listed"])
    assert "only in b" in str(b["board"]) and "only in a" not in str(b["board"])
