"""Provider adapters against recorded response shapes of all three formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
