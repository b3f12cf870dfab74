"""The registry is composed from each tool module's ``TOOLS``; tools act through a host, never
through the facade's module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import BaseModel

import taskloom.tools
from taskloom.client import Taskloom
from taskloom.tools import (
    BUILTIN_TOOLS,
    Toolbox,
    ToolContext,
    ToolEnv,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    board,
    delegate,
    goals,
    queue,
    stash,
    task_list,
)


def test_the_builtin_registry_is_every_modules_tools_in_order(tl: Taskloom) -> None:
    listed = [s.name for m in (board, task_list, goals, queue, delegate, stash) for s in m.TOOLS]
    assert [s.name for s in BUILTIN_TOOLS] == listed
    assert tl.tools.names(profile="all", include_host=True) == listed
    assert ToolRegistry().names(include_host=True) == []  # importing them registered nothing


class _Echo(BaseModel):
    text: str


def _echo(env: ToolEnv, args: _Echo, ctx: ToolContext) -> ToolResult:
    snap = env.host.board(ctx.thread_id or "").add(args.text)
    return ToolResult(content=f"{ctx.thread_id}: {args.text}", data=snap["version"])


def test_a_host_adds_its_own_tool_to_a_registry_of_its_own(tl: Taskloom) -> None:
    own = ToolSpec("echo", "Add a card and say so.", _Echo, _echo)
    tools = Toolbox(tl, ToolRegistry([*BUILTIN_TOOLS, own]))
    result = tools.dispatch("echo", {"text": "hello"}, ToolContext(thread_id="t1"))
    assert (result.content, result.data, result.is_error) == ("t1: hello", 1, False)
    assert tl.board("t1").get().cards[0].title == "hello"
    assert "echo" not in tl.tools.names()  # the default toolbox is untouched
    with pytest.raises(ValueError, match="already registered"):
        ToolRegistry([own, own])


def test_tools_never_import_the_facade() -> None:
    """The toolbox works against :class:`taskloom.tools.ToolHost`; the facade satisfies it."""
    for path in sorted(Path(taskloom.tools.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            assert "taskloom.client" not in names, path.name
