"""Provider adapters against recorded response shapes of all three formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskloom.cli import main
from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.tools.adapters import result_messages, run_tool_calls, tool_calls
from taskloom.tools.registry import ToolContext

FIXTURES = Path(__file__).parent / "fixtures" / "providers"
CTX = ToolContext(thread_id="t", agent_id="agent-1")


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def titles(tl: Taskloom, thread: str = "t") -> list[str]:
    return [c["title"] for c in tl.board(thread).list()["cards"]]


def test_openai_chat_tool_calls_run_and_answer_with_tool_messages(tl: Taskloom) -> None:
    response = fixture("openai_chat.json")
    assert [c.id for c in tool_calls(response, "openai")] == [
        "call_12345xyz",
        "call_67890abc",
        "call_99999def",
    ]
    messages = run_tool_calls(tl.tools, response, "openai", CTX)
    assert [m["tool_call_id"] for m in messages] == [
        "call_12345xyz",
        "call_67890abc",
        "call_99999def",
    ]
    assert all(m["role"] == "tool" for m in messages)
    assert not messages[0]["content"].startswith("error:")
    # A thread id in the model's arguments is refused, not obeyed; unknown tools are errors.
    assert messages[1]["content"].startswith("error:") and "thread" in messages[1]["content"]
    assert messages[2]["content"].startswith("error: unknown tool 'no_such_tool'")
    assert titles(tl) == ["Write the failing test"]
    assert titles(tl, "someone-else") == []
    # The assistant message alone works too (what SDKs hand back as choices[0].message).
    message = response["choices"][0]["message"]
    assert [c.name for c in tool_calls(message, "openai")] == ["todo", "todo", "no_such_tool"]


def test_openai_responses_function_calls(tl: Taskloom) -> None:
    response = fixture("openai_responses.json")
    items = run_tool_calls(tl.tools, response, "openai-responses", CTX)
    assert [(i["type"], i["call_id"]) for i in items] == [
        ("function_call_output", "call_unLAR8MvFNptuiZK6K6HCy5k"),
        ("function_call_output", "call_bad_json"),
    ]
    assert "not valid JSON" in items[1]["output"]
    assert titles(tl) == ["Write the failing test"]
    # The reasoning item is not a call; the bare output list is accepted as well.
    assert len(tool_calls(response["output"], "openai-responses")) == 2


def test_anthropic_tool_use_blocks_answer_in_one_user_message(tl: Taskloom) -> None:
    response = fixture("anthropic.json")
    messages = run_tool_calls(tl.tools, response, "anthropic", CTX)
    assert len(messages) == 1 and messages[0]["role"] == "user"
    ok, failed = messages[0]["content"]
    assert ok["type"] == "tool_result" and ok["tool_use_id"] == "toolu_01A09q90qw90lq917835lq9"
    assert "is_error" not in ok
    assert failed["is_error"] is True and "missing-card" in failed["content"]
    assert titles(tl) == ["Write the failing test"]


def test_no_tool_calls_means_no_messages_and_unknown_format_is_refused(tl: Taskloom) -> None:
    text_only = {"choices": [{"message": {"role": "assistant", "content": "All done."}}]}
    assert run_tool_calls(tl.tools, text_only, "openai", CTX) == []
    assert result_messages([], "anthropic") == []
    with pytest.raises(InvalidInput, match="unknown format"):
        tool_calls({}, "gemini")


DEEP = "[" * 1000 + "]" * 1000


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        (
            "todo",
            '{"op":"list","cards":' + DEEP + "}",
            "error: the arguments object of tool 'todo' is not valid JSON (nested too deeply)",
        ),
        (
            "todo",
            '{"op":"add","content":' + "1" * 5000 + "}",
            "error: the arguments object of tool 'todo' is not valid JSON (a number is too long)",
        ),
        (["todo"], {}, "error: unknown tool: a tool name is a string, not list (available: "),
        ({"name": "todo"}, {}, "error: unknown tool: a tool name is a string, not dict"),
        (None, {}, "error: unknown tool: a tool name is a string, not null"),
    ],
    ids=["deep-args", "long-number", "list-name", "dict-name", "null-name"],
)
def test_dispatch_never_raises_on_what_a_model_sends(
    tl: Taskloom, name: object, args: object, expected: str
) -> None:
    result = tl.tools.dispatch(name, args, CTX)  # type: ignore[arg-type]
    assert result.is_error and result.content.startswith(expected), result.content
    assert titles(tl) == []


def test_run_tool_calls_answers_malformed_calls_with_errors(tl: Taskloom) -> None:
    """A response whose call names a list, or whose arguments nest too deeply, gets an error
    message for that call; the other calls still run."""
    calls = [
        {"id": "a", "type": "function", "function": {"name": ["todo"], "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "todo", "arguments": DEEP}},
        {
            "id": "c",
            "type": "function",
            "function": {"name": "todo", "arguments": '{"op": "add", "content": "still runs"}'},
        },
    ]
    response = {"choices": [{"message": {"role": "assistant", "tool_calls": calls}}]}
    messages = run_tool_calls(tl.tools, response, "openai", CTX)
    assert [m["tool_call_id"] for m in messages] == ["a", "b", "c"]
    assert messages[0]["content"].startswith("error: unknown tool: a tool name is a string")
    assert "nested too deeply" in messages[1]["content"]
    assert titles(tl) == ["still runs"]


def test_tool_call_cli_refuses_too_deep_args_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    deep = "[" * 3000 + "]" * 3000
    assert main(["tool", "call", "todo", "--thread", "t", "--db", db, "--args", deep]) == 1
    assert capsys.readouterr().err.strip() == "Error: --args is not valid JSON (nested too deeply)"


def test_responses_schemas_say_strict_false_and_chat_schemas_leave_it_out(tl: Taskloom) -> None:
    """The Responses API takes a function without ``strict`` as strict, which wants every
    property required; chat completions default to non-strict, and some compatible servers
    refuse the key."""
    responses = tl.tools.schemas("openai-responses")
    assert responses and all(t["strict"] is False for t in responses)
    chat = tl.tools.schemas("openai")
    assert chat and all("strict" not in t and "strict" not in t["function"] for t in chat)


def test_every_description_fits_openais_limit_and_a_longer_one_is_refused(tl: Taskloom) -> None:
    """OpenAI answers 400 (``string_above_max_length``) to a request with a tool description
    over 1,024 characters: the ``todo`` tool's 1,123 stopped the example agent's first call."""
    from pydantic import BaseModel

    from taskloom.tools.registry import ToolRegistry, ToolSpec

    for tool in tl.tools.schemas("openai"):
        assert len(tool["function"]["description"]) <= 1024, tool["function"]["name"]

    def handler(*_: object) -> None:
        return None

    with pytest.raises(ValueError, match="description of 1,025 characters; OpenAI refuses"):
        ToolRegistry().register(ToolSpec("long", "x" * 1025, BaseModel, handler))


@pytest.mark.parametrize("falsy", [[], False, 0])
def test_falsy_arguments_that_are_not_an_object_are_refused_not_run(
    tl: Taskloom, falsy: object
) -> None:
    """``input: []`` or ``arguments: false`` became ``{}`` and claimed a real queue task."""
    tl.queue.add("a real task")
    anthropic = {"content": [{"type": "tool_use", "id": "u1", "name": "task_next", "input": falsy}]}
    call = {"id": "c1", "type": "function", "function": {"name": "task_next", "arguments": falsy}}
    openai = {"choices": [{"message": {"tool_calls": [call]}}]}
    for response, format in ((anthropic, "anthropic"), (openai, "openai")):
        messages = run_tool_calls(tl.tools, response, format, CTX)
        assert "must be a JSON object" in json.dumps(messages), format
    assert tl.queue.stats()["ready"] == 1
    none = {"content": [{"type": "tool_use", "id": "u2", "name": "task_next", "input": None}]}
    assert "must be a JSON object" not in json.dumps(
        run_tool_calls(tl.tools, none, "anthropic", CTX)
    )


@pytest.mark.parametrize(
    ("response", "format", "what"),
    [
        ({"choices": [{"message": {"tool_calls": "abc"}}]}, "openai", "tool_calls"),
        ({"choices": {"0": {}}}, "openai", "choices"),
        ({"choices": ["the answer"]}, "openai", r"choices\[0\] is str"),
        ({"choices": [None]}, "openai", r"choices\[0\] is NoneType"),
        ({"output": "text"}, "openai-responses", "output"),
        ({"content": 5}, "anthropic", "content"),
    ],
)
def test_a_response_whose_calls_are_not_a_list_is_called_malformed(
    response: dict[str, Any], format: str, what: str
) -> None:
    """A string of tool calls was read character by character: three calls with no id."""
    with pytest.raises(InvalidInput, match=f"malformed response: its {what}"):
        tool_calls(response, format)
    assert (
        tool_calls({"choices": [{"message": {"content": "hi", "tool_calls": None}}]}, "openai")
        == []
    )
