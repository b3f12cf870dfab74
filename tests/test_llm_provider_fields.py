"""What the clients send where: the base URL the official SDKs read from the environment,
and the request fields a model refuses (OpenAI's reasoning models), each against a real
HTTP server on loopback."""

from __future__ import annotations

from typing import Any

import pytest

from taskloom.llm.anthropic import AnthropicChat
from taskloom.llm.openai import OpenAIChat
from tests.test_llm_guard import SECRET, FakeProvider

# --- the base URL from the environment ----------------------------------------------------------


def test_openai_chat_posts_to_openai_base_url_when_given_none(
    openai_server: tuple[FakeProvider, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$OPENAI_BASE_URL`` (set for a gateway, vLLM or Ollama, as the SDK reads it) was
    ignored: the key meant for that endpoint went to api.openai.com."""
    provider, url = openai_server
    monkeypatch.setenv("OPENAI_BASE_URL", url + "/")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    llm = OpenAIChat("m")
    assert llm.complete("s", "p") == "ok"
    [request] = provider.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == f"Bearer {SECRET}"


def test_anthropic_chat_posts_to_anthropic_base_url_when_given_none(
    anthropic_server: tuple[FakeProvider, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    provider, url = anthropic_server
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    assert AnthropicChat("m").complete("s", "p") == "ok"
    [request] = provider.requests
    assert request["path"] == "/v1/messages" and request["headers"]["x-api-key"] == SECRET


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_base_url_given_wins_over_the_environment_and_an_empty_one_is_not_used(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    client: Any = OpenAIChat if kind == "openai" else AnthropicChat
    variable = "OPENAI_BASE_URL" if kind == "openai" else "ANTHROPIC_BASE_URL"
    monkeypatch.setenv(variable, "http://127.0.0.1:9/v1")
    assert client("m", base_url="http://127.0.0.1:8/v1").base_url == "http://127.0.0.1:8/v1"
    monkeypatch.setenv(variable, "")
    assert client("m").base_url.startswith("https://api.")
