"""Tool profiles: the named sets of tools a model is given, chosen by ``profile=`` in Python,
``--tools`` on the command line, and ``X-Taskloom-Tools`` or ``?tools=`` over MCP HTTP.
Also the status words other systems read (MCP task statuses, A2A task states)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken
from pydantic import BaseModel

import taskloom
from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.domain.queue import TaskStatus
from taskloom.domain.status import WORDS
from taskloom.tools import BUILTIN_TOOLS, PROFILES, Toolbox, ToolContext, ToolRegistry, ToolSpec
from taskloom.tools.adapters import run_tool_calls
from tests.conftest import subprocess_env
from tests.test_server import request

DEFAULT_BUDGET = 2_000
"""The most o200k tokens the default profile's schemas may take (OpenAI chat format)."""
BUDGETS = {"default": DEFAULT_BUDGET, "planner": 1_725, "worker": 1_025, "claude-code": 1_150}
"""The most o200k tokens each profile's schemas may take; ``all``'s is :data:`ALL_BUDGET`."""
ALL_BUDGET = 4_200
TASK_SHAPED = ("TaskCreate", "TaskUpdate", "TaskGet", "TaskList")


def tokens(schemas: list[dict[str, object]]) -> int:
    """The o200k tokens of tool schemas, as the JSON a request carries them in."""
    return len(tiktoken.get_encoding("o200k_base").encode(json.dumps(schemas)))


def test_the_default_profile_is_one_board_tool_and_fits_its_token_budget(
    tl: Taskloom, record_property: pytest.RecordProperty
) -> None:
    default = tl.tools.schemas("openai")
    every = tl.tools.schemas("openai", profile="all")
    size, whole = tokens(default), tokens(every)
    record_property("default_schema_tokens", size)
    print(f"\ndefault profile: {len(default)} tools, {size} o200k tokens; all: {whole}")
    assert size <= DEFAULT_BUDGET
    names = [t["function"]["name"] for t in default]
    assert [n for n in names if n.startswith("todo")] == ["todo"]
    assert {"goal_complete", "task_next", "read_result"} <= set(names)


def test_each_profile_fits_its_token_budget(tl: Taskloom) -> None:
    """The descriptions say each thing once: not again in the tool's own description, nor
    as a schema's ``maximum`` in words."""
    sizes = {name: tokens(tl.tools.schemas("openai", profile=name)) for name in PROFILES}
    print(f"\nschema tokens by profile: {sizes}")
    assert all(sizes[name] <= budget for name, budget in BUDGETS.items()), sizes
    assert sizes["all"] <= ALL_BUDGET, sizes


def test_no_parameter_says_its_maximum_again_in_words() -> None:
    def walk(node: object) -> list[str]:
        if isinstance(node, list):
            return [said for item in node for said in walk(item)]
        if not isinstance(node, dict):
            return []
        found = [said for item in node.values() for said in walk(item)]
        top = node.get("maximum")
        if top is not None and f"at most {top:g}" in str(node.get("description", "")):
            found.append(str(node["description"]))
        return found

    assert [said for spec in BUILTIN_TOOLS for said in walk(spec.input_schema())] == []


def test_each_profile_and_a_list_of_names(tl: Taskloom) -> None:
    assert tl.tools.names(profile="planner") == [
        "todo",
        "goal_get",
        "goal_set",
        "goal_complete",
        "goal_block",
        "goal_wait",
        "task_delegate",
        "task_wait",
    ]
    assert tl.tools.names(profile="worker") == [
        "task_next",
        "task_done",
        "task_fail",
        "task_extend",
        "read_result",
        "extract_from_result",
    ]
    assert tl.tools.names(profile="all") == [s.name for s in BUILTIN_TOOLS if not s.host_only]
    # a union in registry order, whatever order it was asked in, blanks skipped
    union = tl.tools.names(profile=" todo_list , worker,, todo ")
    assert union == ["todo", "todo_list", *tl.tools.names(profile="worker")]
    assert tl.tools.names(profile=["goal_get", "todo"]) == ["todo", "goal_get"]
    assert tl.tools.names(profile="goal_pause", include_host=True) == ["goal_pause"]


@pytest.mark.parametrize("choice", ["plannr", "planner,todoo", "goal_pause", ""])
def test_an_unknown_profile_or_tool_is_refused_naming_the_valid_ones(
    tl: Taskloom, choice: str
) -> None:
    with pytest.raises(InvalidInput) as raised:
        tl.tools.schemas("openai", profile=choice)
    message = raised.value.message
    assert "choose a profile (default, planner, worker, claude-code, all)" in message
    if choice:
        assert "task_delegate" in message and "goal_pause" not in message.split("tools (")[1]


def test_the_claude_code_profile_lists_the_task_shaped_tools_once_they_exist(
    tl: Taskloom,
) -> None:
    """A profile leaves out the tools the registry does not have: ``claude-code`` names the
    Task-shaped board tools, which another module adds, and takes each one registered."""
    names = tl.tools.names(profile="claude-code")
    assert names, "the claude-code profile is empty"
    registered = [n for n in TASK_SHAPED if tl.tools.registry.get(n) is not None]
    assert [n for n in names if n in TASK_SHAPED] == registered
    if registered:  # once they exist, all four come together
        assert registered == list(TASK_SHAPED)

    class Args(BaseModel):
        subject: str

    def handler(*_: object) -> None:
        return None

    shaped = [ToolSpec(n, f"{n}: a Task-shaped board tool.", Args, handler) for n in TASK_SHAPED]
    others = [s for s in BUILTIN_TOOLS if s.name not in TASK_SHAPED]
    tools = Toolbox(tl, ToolRegistry([*others, *reversed(shaped)]))
    assert tools.names(profile="claude-code")[-4:] == list(reversed(TASK_SHAPED))
    assert set(PROFILES["claude-code"].tools) >= set(TASK_SHAPED)


def test_a_model_given_a_profile_cannot_call_a_tool_outside_it(tl: Taskloom) -> None:
    """The model shown the default profile cannot mix ``todo_write`` into its ``todo``
    board: replacing the whole board would erase the cards it added."""
    ctx = ToolContext(thread_id="t1", agent_id="a")
    response = {
        "choices": [
            {
                "message": {
                    "tool_calls": [
                        {"id": "1", "function": {"name": "todo", "arguments": '{"op": "list"}'}},
                        {"id": "2", "function": {"name": "todo_write", "arguments": "{}"}},
                    ]
                }
            }
        ]
    }
    listed, refused = run_tool_calls(tl.tools, response, "openai", ctx)
    assert not listed["content"].startswith("error:")
    assert refused["content"].startswith("error: unknown tool 'todo_write' (available: todo,")
    wider = run_tool_calls(tl.tools, response, "openai", ctx, profile="all")
    assert "invalid arguments for tool 'todo_write'" in wider[1]["content"]
    assert tl.tools.dispatch("todo_write", {"todos": []}, ctx).is_error is False  # the host


def test_the_cli_takes_tools_and_refuses_unknown_ones_in_one_line(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "taskloom", *args]
        return subprocess.run(argv, capture_output=True, text=True, env=subprocess_env())

    schemas = run("tool", "schemas", "--tools", "worker", "--db", db)
    served = run("mcp", "--thread", "t", "--tools", "bogus", "--db", db)
    init = run("init", "codex", "--thread", "t", "--tools", "planner", "--print")
    bad_init = run("init", "codex", "--thread", "t", "--tools", "nope", "--print")
    with taskloom.connect(db) as tl:
        assert [s["function"]["name"] for s in json.loads(schemas.stdout)] == tl.tools.names(
            profile="worker"
        )
    for refused in (served, bad_init):
        assert refused.returncode == 1 and refused.stdout == "", refused.stderr
        [line] = refused.stderr.splitlines()
        assert line.startswith("Error: unknown tool profile or tool '")
        assert "choose a profile (default, planner, worker, claude-code, all)" in line
    assert init.returncode == 0 and '"--tools", "planner"' in init.stdout


def test_mcp_refuses_a_host_only_tool_at_startup(tmp_path: Path) -> None:
    """``taskloom mcp --tools goal_pause`` started, then answered every ``tools/list`` with
    an error: a host-only tool is never served to a model, so the command refuses it at
    once, listing only the tools it can serve."""
    argv = [sys.executable, "-m", "taskloom", "mcp", "--thread", "t", "--tools", "goal_pause"]
    argv += ["--db", f"sqlite:///{tmp_path / 'm.db'}"]
    done = subprocess.run(
        argv, input="", capture_output=True, text=True, env=subprocess_env(), timeout=60
    )
    assert done.returncode == 1 and done.stdout == "", done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: unknown tool profile or tool 'goal_pause': choose a profile")
    assert "task_delegate" in line and "goal_pause" not in line.split("tools (")[1]


def test_status_words_for_every_queue_status() -> None:
    assert set(WORDS) == {s.value for s in TaskStatus}
    assert {w.mcp for w in WORDS.values()} <= {"working", "completed", "cancelled"}
    assert all(w.a2a.startswith("TASK_STATE_") for w in WORDS.values())
    assert [s for s, w in WORDS.items() if w.is_error] == ["dead"]


def test_json_and_the_http_api_carry_the_status_words(
    tl: Taskloom, capsys: pytest.CaptureFixture[str]
) -> None:
    from taskloom.cli import main

    task, _ = tl.queue.add("Review")
    shown = request(tl, "GET", f"/api/tasks/{task.id}").json()
    assert (shown["status"], shown["mcp_status"], shown["a2a_state"]) == (
        "ready",
        "working",
        "TASK_STATE_SUBMITTED",
    )
    claimed = tl.queue.claim("a")
    assert claimed is not None
    tl.queue.fail(claimed.id, claimed.lease_token or "", "broke", retry=False)
    assert main(["tasks", "show", task.id, "--db", tl.url, "--json"]) == 0
    dead = json.loads(capsys.readouterr().out)
    assert (dead["status"], dead["mcp_status"], dead["a2a_state"]) == (
        "dead",
        "completed",
        "TASK_STATE_FAILED",
    )
    listed = request(tl, "GET", "/api/tasks").json()
    assert [t["a2a_state"] for t in listed] == ["TASK_STATE_FAILED"]
