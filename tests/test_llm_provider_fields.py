"""What the clients send where: the base URL the official SDKs read from the environment,
and the request fields a model refuses (OpenAI's reasoning models), each against a real
HTTP server on loopback."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import ProviderError
from taskloom.guard import GuardConfig
from taskloom.llm.anthropic import AnthropicChat
from taskloom.llm.base import is_truncated
from taskloom.llm.openai import OpenAIChat
from tests.test_llm_guard import SECRET, FakeProvider, big_log, send, summarizing

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


# --- fields a model refuses --------------------------------------------------------------------


def serve_refusals(provider: FakeProvider, fields: dict[str, str]) -> None:
    """Answer OpenAI's HTTP 400 for the first request field in ``fields`` (the field and
    the error code), as OpenAI does for a reasoning model, else a normal answer."""

    def reply(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
        body = provider.requests[-1]["body"]
        for field, code in fields.items():
            if field in body:
                error = {
                    "message": f"Unsupported parameter: '{field}' is not supported with this"
                    " model.",
                    "type": "invalid_request_error",
                    "param": field,
                    "code": code,
                }
                send(handler, 400, json.dumps({"error": error}).encode())
                return
        answer = {"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        send(handler, 200, json.dumps({"choices": [answer]}).encode())

    provider.raw = reply


def test_a_reasoning_model_is_asked_with_max_completion_tokens_and_its_own_temperature(
    openai_server: tuple[FakeProvider, str],
) -> None:
    """o-series and gpt-5 models answer HTTP 400 to ``max_tokens`` (use
    ``max_completion_tokens``) and to a temperature other than 1: every summary and extract
    failed, and opened the breaker. The client now asks again without them, and keeps
    doing so, one request per call."""
    provider, url = openai_server
    serve_refusals(
        provider, {"max_tokens": "unsupported_parameter", "temperature": "unsupported_value"}
    )
    llm = OpenAIChat("o4-mini", base_url=url, api_key=SECRET)
    assert llm.complete("s", "p", max_tokens=77) == "ok"
    assert len(provider.requests) == 3
    last = provider.requests[-1]["body"]
    assert last["max_completion_tokens"] == 77
    assert "max_tokens" not in last and "temperature" not in last
    assert llm.complete("s", "again", max_tokens=50) == "ok"
    assert len(provider.requests) == 4
    assert provider.requests[-1]["body"]["max_completion_tokens"] == 50


def test_a_400_for_anything_else_still_fails_at_once(
    openai_server: tuple[FakeProvider, str],
) -> None:
    """Only a field the model says it does not take is changed: a bad request otherwise (a
    wrong model name, a field refused for its value) fails as before, once."""
    provider, url = openai_server
    serve_refusals(provider, {"max_tokens": "invalid_value"})
    llm = OpenAIChat("m", base_url=url, api_key=SECRET)
    with pytest.raises(ProviderError, match="HTTP 400"):
        llm.complete("s", "p")
    assert len(provider.requests) == 1
    assert provider.requests[0]["body"]["max_tokens"] == 1024


# --- a base URL without its version -------------------------------------------------------------


def test_a_404_from_a_base_url_without_v1_says_to_add_it(
    openai_server: tuple[FakeProvider, str],
) -> None:
    """``OpenAIChat(base_url="http://localhost:11434")`` (Ollama without ``/v1``) failed with
    "answered HTTP 404: 404 page not found" and nothing on what to change."""
    provider, url = openai_server

    def not_found(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
        handler.send_response(404)
        handler.send_header("content-length", "18")
        handler.end_headers()
        handler.wfile.write(b"404 page not found")

    provider.raw = not_found
    root = url.removesuffix("/v1").replace("://", f"://user:{SECRET}@")
    with pytest.raises(ProviderError) as info:
        OpenAIChat("m", base_url=root, api_key=SECRET).complete("s", "p")
    message = str(info.value)
    assert "HTTP 404: 404 page not found" in message
    assert "has no version segment" in message and "ends in /v1" in message
    assert SECRET not in message
    with pytest.raises(ProviderError) as info:
        OpenAIChat("m", base_url=url, api_key=SECRET).complete("s", "p")
    assert "version segment" not in str(info.value)
    with pytest.raises(ProviderError) as info:
        OpenAIChat("m", base_url=url + "/chat/completions", api_key=SECRET).complete("s", "p")
    assert "ends in /chat/completions, which the client adds to it" in str(info.value)


# --- an answer no database stores ---------------------------------------------------------------


def test_an_answer_with_half_an_emoji_is_summarized_and_extracted(
    tl: Taskloom,
    anthropic_server: tuple[FakeProvider, str],
    openai_server: tuple[FakeProvider, str],
) -> None:
    """A reply whose JSON holds a lone surrogate (``"\\ud83d"``: an emoji a server cut in
    half) made ``wrap`` raise UnicodeEncodeError as the summary was stored, losing the tool
    result; an extract answered with the surrogate in its text. Both now say U+FFFD."""
    provider, url = anthropic_server
    provider.raw = lambda handler, system, prompt: send(
        handler,
        200,
        b'{"type": "message", "role": "assistant", "stop_reason": "end_turn",'
        b' "content": [{"type": "text", "text": "400 batches \\ud83d done"}]}',
    )
    out = tl.guard("t1", summarizing(url)).stash("bash", big_log())
    assert out.summarized and "400 batches \ufffd done" in out.text
    assert tl.guard("t1", summarizing(url)).breaker()["failures"] == 0

    chat, chat_url = openai_server
    chat.raw = lambda handler, system, prompt: send(
        handler,
        200,
        b'{"choices": [{"message": {"role": "assistant", "content": "found \\ude00 x"},'
        b' "finish_reason": "stop"}]}',
    )
    cfg = GuardConfig(
        threshold_tokens=300,
        chunk_tokens=800,
        llm=OpenAIChat("m", base_url=chat_url, api_key=SECRET),
    )
    guard = tl.guard("t2", cfg)
    rid = guard.stash("bash", big_log()).result_id or ""
    answer = guard.extract(rid, "which zebra quokka walrus")
    assert "found \ufffd x" in answer
    answer.encode("utf-8")  # every character has one


# --- proxies from the environment ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_proxy_url_httpx_cannot_parse_fails_without_a_piece_of_its_password(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpx's "Invalid port: 'hun'" for ``HTTPS_PROXY=http://user:hun#ter22@…`` quoted part
    of the proxy's password in the error (kept as the breaker's last error in the store)."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://user:hun#ter22@127.0.0.1:9")
    client: Any = OpenAIChat if kind == "openai" else AnthropicChat
    with pytest.raises(ProviderError) as info:
        client("m", base_url="https://127.0.0.1:9/v1", api_key=SECRET).complete("s", "p")
    message = str(info.value)
    assert "cannot use the proxy $HTTPS_PROXY names" in message and "percent-encode" in message
    for piece in ("hun", "ter22", SECRET):
        assert piece not in message


def test_a_socks_proxy_without_its_package_is_a_provider_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``ALL_PROXY=socks5://…`` without httpx's SOCKS extra raised ImportError out of
    ``complete``, which promises a ProviderError for every failure."""
    import importlib.util

    if importlib.util.find_spec("socksio") is not None:
        pytest.skip("socksio is installed: httpx speaks SOCKS")
    monkeypatch.setenv("ALL_PROXY", "socks5://user:hunter22@127.0.0.1:9")
    with pytest.raises(ProviderError) as info:
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", api_key=SECRET).complete("s", "p")
    assert "$ALL_PROXY" in str(info.value) and "socksio" in str(info.value)
    assert "hunter22" not in str(info.value)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_an_empty_reply_is_called_so(kind: str, request: pytest.FixtureRequest) -> None:
    """A 200 with no body (a proxy that dropped it) failed with "sent a reply that is not
    JSON: " and nothing after the colon."""
    provider, url = request.getfixturevalue(f"{kind}_server")
    provider.raw = lambda handler, system, prompt: send(handler, 200, b"")
    client: Any = OpenAIChat if kind == "openai" else AnthropicChat
    with pytest.raises(ProviderError) as info:
        client("m", base_url=url, api_key=SECRET).complete("s", "p")
    assert str(info.value) == f"{kind}:m sent an empty reply"


# --- a reply streamed though not asked to -------------------------------------------------------


def streamed(lines: list[str]) -> Any:
    """A raw reply of server-sent events, as a gateway that always streams sends it."""
    body = "".join(f"{line}\n" for line in lines).encode()

    def reply(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return reply


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return "data: " + json.dumps({"object": "chat.completion.chunk", "choices": [choice]}) + "\n"


def test_a_streamed_chat_completion_is_read_as_one(
    openai_server: tuple[FakeProvider, str],
) -> None:
    """A gateway that streams every reply (``text/event-stream``, though ``stream`` was not
    asked for) failed each call with "sent a reply that is not JSON: data: {…}"."""
    provider, url = openai_server
    provider.raw = streamed(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "400 batches, "}),
            chunk({"content": "worker-3 slowest \u00e9"}),
            chunk({}, "stop"),
            "data: [DONE]\n",
        ]
    )
    llm = OpenAIChat("m", base_url=url, api_key=SECRET)
    answer = llm.complete("s", "p")
    assert answer == "400 batches, worker-3 slowest \u00e9" and not is_truncated(answer)
    provider.raw = streamed([chunk({"content": "cut"}), chunk({}, "length"), "data: [DONE]\n"])
    assert is_truncated(llm.complete("s", "p"))

    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "todo"}}
    provider.raw = streamed(
        [
            chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"op": '}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"list"}'}}]}),
            chunk({}, "tool_calls"),
            "data: [DONE]\n",
        ]
    )
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "p"}]
    reply = llm.post_json(f"{url}/chat/completions", {"model": "m", "messages": messages})
    [merged] = reply["choices"][0]["message"]["tool_calls"]
    assert merged == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "todo", "arguments": '{"op": "list"}'},
    }


def test_a_streamed_message_is_read_as_one(
    anthropic_server: tuple[FakeProvider, str],
) -> None:
    provider, url = anthropic_server

    def event(kind: str, **data: Any) -> str:
        return f"event: {kind}\ndata: " + json.dumps({"type": kind, **data}) + "\n"

    provider.raw = streamed(
        [
            event("message_start", message={"type": "message", "content": []}),
            event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
            event("ping"),
            event("content_block_delta", index=0, delta={"type": "text_delta", "text": "40"}),
            event("content_block_delta", index=0, delta={"type": "text_delta", "text": "0 ok"}),
            event("content_block_stop", index=0),
            event("message_delta", delta={"stop_reason": "max_tokens"}),
            event("message_stop"),
        ]
    )
    answer = AnthropicChat("m", base_url=url, api_key=SECRET).complete("s", "p")
    assert answer == "400 ok" and is_truncated(answer)
    provider.raw = streamed(
        [event("error", error={"type": "overloaded_error", "message": "Overloaded"})]
    )
    with pytest.raises(ProviderError, match="overloaded_error"):
        AnthropicChat("m", base_url=url, api_key=SECRET).complete("s", "p")
