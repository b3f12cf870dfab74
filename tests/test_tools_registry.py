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


def test_task_delegate_says_what_the_model_chooses_and_what_the_host_binds(tl: Taskloom) -> None:
    """The model read only "The only agent that may take it." for target_agent, with no word
    on whether it could name itself or another thread: the description says that the target
    is its choice, and that its own identity and thread are bound by the host."""
    (spec,) = [s for s in tl.tools.schemas("openai", profile="all") if s["function"]["name"]
               == "task_delegate"]  # fmt: skip
    described = spec["function"]["description"]
    assert "with target_agent, which worker may take it" in described
    assert "The host binds who you are" in described
    assert "your agent identity and this thread come from the session" in described
    assert "never from the arguments" in described
    fields = spec["function"]["parameters"]["properties"]
    assert not {"agent_id", "thread_id", "source", "thread", "agent"} & set(fields)
    target = fields["target_agent"]["description"]
    assert "(your choice)" in target and "not who you are" in target
    # The one agent named is the only one that may claim it; the task's source is the thread.
    result = tl.tools.dispatch(
        "task_delegate",
        {"title": "Count", "target_agent": "counter", "source": "elsewhere"},
        ToolContext(thread_id="t1", agent_id="planner"),
    )
    assert result.is_error and "source" in result.content  # no argument sets the source
    result = tl.tools.dispatch(
        "task_delegate",
        {"title": "Count", "target_agent": "counter"},
        ToolContext(thread_id="t1", agent_id="planner"),
    )
    task = tl.queue.get(result.data["id"])
    assert (task.source, task.target_agent) == ("t1", "counter")
    assert tl.queue.claim("someone-else", lease=60) is None


def test_a_hosts_context_of_the_wrong_kind_is_an_input_error_not_a_tool_failure(
    tl: Taskloom,
) -> None:
    """The context is the host's, not the model's: ``dispatch(…, None)`` or a thread id
    that is not text raised an AttributeError from inside (after logging a traceback), or
    came back to the model as an "internal error". Each is the host's input error now."""
    from taskloom.errors import InvalidInput

    for ctx in (None, {"thread_id": "t"}):
        with pytest.raises(InvalidInput, match="a tool call's context is a ToolContext"):
            tl.tools.dispatch("todo", {"op": "list"}, ctx)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="ToolContext thread_id must be text, not int"):
        ToolContext(thread_id=5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="ToolContext agent_id must be text, not bytes"):
        ToolContext(thread_id="t", agent_id=b"a")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="a choice of tools is text"):
        tl.tools.names(profile=5)  # type: ignore[arg-type]
    assert tl.board("t").list()["version"] == 0
