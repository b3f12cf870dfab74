"""Each tool's definition as hosts read it: a valid JSON Schema that takes the arguments a
model sends, an object at the top (OpenAI, Anthropic, MCP), and MCP annotations that say
truthfully what a call does, as a real ``taskloom mcp`` lists them to the SDK's client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import mcp_types as types
import pytest

from taskloom.client import Taskloom
from taskloom.tools import BUILTIN_TOOLS, ToolContext, ToolSpec
from tests.conftest import subprocess_env
from tests.test_tools_hostile import plain

CTX = ToolContext(thread_id="schemas", agent_id="agent-1")
SPECS = [s for s in BUILTIN_TOOLS]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_each_schema_is_valid_json_schema_and_takes_plain_arguments(spec: ToolSpec) -> None:
    schema = spec.input_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert set(schema.get("required", [])) <= set(schema["properties"])
    jsonschema.validate(plain(schema), schema)
    spec.args.model_validate(plain(schema))


def test_every_rendering_has_an_object_schema_at_the_top(tl: Taskloom) -> None:
    for fmt, key in (("openai", "parameters"), ("anthropic", "input_schema")):
        for tool in tl.tools.schemas(fmt, profile="all"):
            schema = tool["function"][key] if fmt == "openai" else tool[key]
            assert schema["type"] == "object", tool
    for tool in tl.tools.schemas("openai-responses", profile="all"):
        assert tool["parameters"]["type"] == "object" and tool["strict"] is False


def _state(tl: Taskloom) -> tuple[Any, ...]:
    thread = CTX.thread_id or ""
    board = tl.board(thread).list()
    goal = tl.goal(thread).get()["goal"]
    tasks = [(t.id, t.status, t.lease_token) for t in tl.queue.list()]
    return board["version"], board["markdown"], json.dumps(goal, sort_keys=True), tasks


@pytest.mark.parametrize(
    "spec", [s for s in SPECS if s.effect and s.effect.read_only], ids=lambda s: s.name
)
def test_a_tool_said_read_only_changes_nothing(tl: Taskloom, spec: ToolSpec) -> None:
    tl.board(CTX.thread_id or "").add("a card")
    tl.goal(CTX.thread_id or "").set("a goal")
    tl.goal(CTX.thread_id or "").pause()
    tl.queue.add("queued")
    before = _state(tl)
    args = {
        **plain(spec.input_schema()),
        **({"wait_s": 0} if "wait_s" in spec.input_schema()["properties"] else {}),
    }
    tl.tools.dispatch(spec.name, args, CTX, allow_host=True)
    assert _state(tl) == before


def test_every_builtin_tool_says_what_a_call_does() -> None:
    unsaid = [s.name for s in SPECS if s.effect is None]
    assert unsaid == []
    assert not any(s.effect and s.effect.open_world for s in SPECS)
    destructive = {s.name for s in SPECS if s.effect and s.effect.destructive}
    assert {"todo", "todo_write", "TaskUpdate", "goal_set", "goal_clear"} <= destructive
    for name in ("TaskCreate", "task_delegate", "task_next", "todo", "goal_set"):
        spec = next(s for s in SPECS if s.name == name)
        assert spec.effect is not None and not spec.effect.idempotent, name


def test_a_real_mcp_server_lists_valid_tools_with_their_annotations(tmp_path: Path) -> None:
    """The listing is read off the wire and checked with the SDK's own types."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    db = f"sqlite:///{tmp_path / 'm.db'}"
    command = [sys.executable, "-m", "taskloom", "mcp", "--thread", "t", "--tools", "all"]
    done = subprocess.run(
        [*command, "--db", db],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
        check=True,
    )
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines()) if "id" in m}
    listed = types.ListToolsResult.model_validate(answers[2]["result"])
    by_name = {s.name: s for s in SPECS}
    assert [t.name for t in listed.tools] == [s.name for s in SPECS if not s.host_only]
    for tool in listed.tools:
        spec = by_name[tool.name]
        assert spec.effect is not None and tool.annotations is not None
        assert tool.input_schema == spec.input_schema()
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        hints = tool.annotations
        assert (
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint,
        ) == (
            spec.effect.read_only,
            spec.effect.destructive,
            spec.effect.idempotent,
            spec.effect.open_world,
        ), tool.name
