"""Arguments as models send them: ``null`` for every optional argument, numbers and
booleans as text, the thread or the agent named in the arguments, no arguments at all."""

from __future__ import annotations

import pytest

from taskloom.client import Taskloom
from taskloom.tools import BUILTIN_TOOLS, ToolContext, ToolSpec
from tests.test_tools_hostile import plain

CTX = ToolContext(thread_id="args", agent_id="agent-1")


@pytest.mark.parametrize("spec", BUILTIN_TOOLS, ids=lambda s: s.name)
def test_null_for_every_optional_argument_reads_as_left_out(tl: Taskloom, spec: ToolSpec) -> None:
    """Many models send every parameter, null when unused: an optional argument with a
    default (``wait_s``, ``lease_s``, ``retry``, ``merge``…) takes its default, as one
    without does."""
    schema = spec.input_schema()
    args = plain(schema)
    for name in schema["properties"]:
        if name not in schema.get("required", []):
            args[name] = None
    if spec.name == "goal_wait":
        tl.goal(CTX.thread_id or "").set("x")
        tl.goal(CTX.thread_id or "").pause()
    result = tl.tools.dispatch(spec.name, args, CTX, allow_host=True)
    assert "invalid arguments" not in result.content, result.content


@pytest.mark.parametrize(
    ("tool", "args", "said"),
    [
        ("goal_wait", {"wait_s": "5"}, 'wait_s: expected a number, got text "5": send 5,'),
        ("task_ready", {"limit": "5"}, 'limit: expected an integer, got text "5": send 5,'),
        ("task_ready", {"explain": "true"}, 'explain: expected true or false, got text "true"'),
        ("task_delegate", {"title": "t", "payload": "{}"}, 'got text "{}": send {}, without'),
        ("TaskGet", {"taskId": 1}, 'taskId: expected text, got a number: send "1", in quotes'),
        ("todo", {"op": "add", "content": "x", "plan": "step"}, "plan: expected a list, got text"),
        ("goal_set", {"objective": None}, "objective: expected text, got null"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_saying_what_to_send(
    tl: Taskloom, tool: str, args: dict[str, object], said: str
) -> None:
    result = tl.tools.dispatch(tool, args, CTX)
    assert result.is_error and said in result.content, result.content
    assert "Input should be" not in result.content


@pytest.mark.parametrize(
    "name", ["thread_id", "thread", "agent_id", "agent", "threadId", "AgentId", "thread-id"]
)
def test_a_thread_or_agent_in_the_arguments_is_refused_as_the_hosts_to_bind(
    tl: Taskloom, name: str
) -> None:
    for tool, args in (("todo", {"op": "list"}), ("task_next", {})):
        result = tl.tools.dispatch(tool, {**args, name: "other"}, CTX)
        bound = "thread" if name.lower().startswith("thread") else "agent"
        assert result.is_error, result.content
        assert f"{name}: unknown argument (the {bound} is bound by the host" in result.content
    assert tl.board("other").list()["cards"] == []


@pytest.mark.parametrize("given", [None, "", "  ", "null", {}])
def test_no_arguments_in_any_form_a_model_sends_them_are_none(tl: Taskloom, given: object) -> None:
    result = tl.tools.dispatch("TaskList", given, CTX)  # type: ignore[arg-type]
    assert not result.is_error, result.content
