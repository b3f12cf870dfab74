"""LLM clients, summarizer and map-reduce against real HTTP servers on loopback.

The servers speak OpenAI's chat-completions and Anthropic's messages protocols; what they
answer is decided per test by a small Python function, and every request is recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import taskloom
from taskloom.client import Taskloom
from taskloom.domain.errors import ProviderError
from taskloom.guard import GuardConfig
from taskloom.llm.anthropic import AnthropicChat
from taskloom.llm.openai import OpenAIChat
from tests.conftest import FakeClock

Reply = Callable[[str, str], tuple[int, str]]  # (system, prompt) -> (status, text)
RawReply = Callable[[BaseHTTPRequestHandler, str, str], None]  # writes the whole response
SECRET = "sk-test-do-not-leak-123"


@dataclass
class FakeProvider:
    reply: Reply = lambda system, prompt: (200, "ok")
    raw: RawReply | None = None
    """When set, answers instead of ``reply``: for replies no well-behaved server sends."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def send(handler: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
    """Write one complete JSON response; ``data`` is sent as given, valid or not."""
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def serve(provider: FakeProvider, kind: str) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            with provider.lock:
                provider.in_flight += 1
                provider.max_in_flight = max(provider.max_in_flight, provider.in_flight)
                provider.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
            try:
                if kind == "openai":
                    system, prompt = body["messages"][0]["content"], body["messages"][1]["content"]
                else:
                    system, prompt = body["system"], body["messages"][0]["content"]
                time.sleep(0.02)  # lets concurrent calls overlap, so the bound is exercised
                status, text = (0, "") if provider.raw else provider.reply(system, prompt)
            finally:
                # Leave the in-flight count before replying: once the client has the bytes it
                # may send its next call before this handler thread gets to run again.
                with provider.lock:
                    provider.in_flight -= 1
            if provider.raw:
                provider.raw(self, system, prompt)
                return
            if status != 200:
                payload: dict[str, Any] = {"error": {"message": text}}
            elif kind == "openai":
                payload = {"choices": [{"message": {"role": "assistant", "content": text}}]}
            else:
                payload = {"content": [{"type": "text", "text": text}], "role": "assistant"}
            send(self, status, json.dumps(payload).encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_openai_client_speaks_chat_completions(openai_server: tuple[FakeProvider, str]) -> None:
    provider, url = openai_server
    provider.reply = lambda system, prompt: (200, f"echo: {prompt}")
    llm = OpenAIChat("local-model", base_url=url, api_key=SECRET)
    assert llm.complete("be brief", "hi", max_tokens=50) == "echo: hi"
    [req] = provider.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["authorization"] == f"Bearer {SECRET}"
    assert req["body"]["model"] == "local-model" and req["body"]["max_tokens"] == 50
    assert SECRET not in repr(llm)


def test_anthropic_client_speaks_messages(anthropic_server: tuple[FakeProvider, str]) -> None:
    provider, url = anthropic_server
    llm = AnthropicChat("claude-x", base_url=url, api_key=SECRET)
    assert llm.complete("sys", "hello") == "ok"
    [req] = provider.requests
    assert req["path"] == "/v1/messages"
    assert req["headers"]["x-api-key"] == SECRET
    assert req["headers"]["anthropic-version"] == "2023-06-01"
    assert req["body"]["system"] == "sys" and SECRET not in repr(llm)


def test_provider_failures_are_mapped_without_secrets(
    openai_server: tuple[FakeProvider, str],
) -> None:
    provider, url = openai_server
    provider.reply = lambda system, prompt: (503, "overloaded")
    with pytest.raises(ProviderError, match="HTTP 503") as info:
        OpenAIChat("m", base_url=url, api_key=SECRET).complete("s", "p")
    assert SECRET not in str(info.value)
    with pytest.raises(ProviderError, match="request failed"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", api_key=SECRET).complete("s", "p")


def big_log(n: int = 400) -> str:
    lines = [f"2026-01-01 worker-{i % 5} processed batch {i} in 12ms" for i in range(n)]
    return "\n".join(lines)


def test_map_reduce_is_bounded_labels_chunks_and_reports_failures(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    provider, url = openai_server

    def reply(system: str, prompt: str) -> tuple[int, str]:
        chunk = re.search(r"Chunk (\d+) of", prompt)
        if chunk and chunk.group(1) == "2":
            return 500, "boom"
        if chunk:
            return 200, f"slowest batch in chunk {chunk.group(1)}"
        return 200, "merged: " + " | ".join(re.findall(r"\[chunk \d+/\d+[^\]]*\]", prompt))

    provider.reply = reply
    cfg = GuardConfig(
        threshold_tokens=300,
        chunk_tokens=800,
        llm=OpenAIChat("m", base_url=url, api_key=SECRET),
    )
    g = tl.guard("t1", cfg)
    rid = g.stash("bash", big_log()).result_id or ""
    out = g.extract(rid, "which tenant was throttled")  # no local match: the LLM is used
    head = out.splitlines()[0]
    chunks = int(re.search(r"(\d+) chunks?\b", head).group(1))  # type: ignore[union-attr]
    assert chunks > 3 and "1 failed" in head and "method: LLM map-reduce" in head
    assert "merged: [chunk 1/" in out and "lines 1-" in out
    assert re.search(r"FAILED chunk 2 \(lines \d+-\d+\): openai:m answered HTTP 500", out)
    assert provider.max_in_flight <= 3
    assert len(provider.requests) == chunks + 1  # map calls + one reduce
    assert SECRET not in out


def test_local_answers_win_and_cost_no_llm_call(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    provider, url = openai_server
    cfg = GuardConfig(threshold_tokens=300, llm=OpenAIChat("m", base_url=url))
    g = tl.guard("t1", cfg)
    rid = g.stash("bash", big_log()).result_id or ""
    assert "processed batch 123 in" in g.extract(rid, "batch 123")
    assert provider.requests == []


def summarizing(url: str, **over: Any) -> GuardConfig:
    base: dict[str, Any] = dict(
        threshold_tokens=300,
        summarize=True,
        llm=AnthropicChat("claude-x", base_url=url, api_key=SECRET),
    )
    base.update(over)
    return GuardConfig(**base)


def test_summary_is_told_size_and_hint_and_cached(
    make_tl: Callable[..., Taskloom], anthropic_server: tuple[FakeProvider, str]
) -> None:
    provider, url = anthropic_server
    provider.reply = lambda system, prompt: (200, "[Tool output summary — bash]\n400 batches")
    tl = make_tl()
    payload = big_log()
    g = tl.guard("t1", summarizing(url, max_entries=1))
    out = g.stash("bash", payload, hint="find slow workers")
    assert out.summarized and "400 batches" in out.text
    prompt = provider.requests[0]["body"]["messages"][0]["content"]
    assert "Task hint from the user: find slow workers" in prompt
    assert f"{len(payload.encode()):,} bytes, 400 lines" in prompt
    assert "Identifiers preserved" in provider.requests[0]["body"]["system"]
    g.stash("bash", big_log(401))  # evicts the first result (max_entries=1)
    again = make_tl().guard("t1", summarizing(url, max_entries=1))
    assert again.stash("bash", payload, hint="find slow workers").text == out.text
    assert len(provider.requests) == 2  # the second summary of the same payload was cached


def test_breaker_persists_across_instances_and_recovers(
    db_url: str, clock: FakeClock, anthropic_server: tuple[FakeProvider, str]
) -> None:
    provider, url = anthropic_server
    provider.reply = lambda system, prompt: (500, "down")
    cfg = summarizing(url, breaker_cooldown=timedelta(minutes=5))
    for i in range(3):  # three turns, three fresh facades: failures still add up
        with taskloom.connect(db_url, clock=clock) as tl:
            out = tl.guard("t1", cfg).stash("bash", big_log(400 + i))
            assert out.mode == "stashed" and not out.summarized
    with taskloom.connect(db_url, clock=clock) as tl:
        state = tl.guard("t1", cfg).breaker()
        assert state["open"] and state["failures"] == 3 and "HTTP 500" in state["last_error"]
        tl.guard("t1", cfg).stash("bash", big_log(500))
        assert len(provider.requests) == 3  # open: no call
        assert not tl.guard("t2", cfg).breaker()["open"]  # per thread
        provider.reply = lambda system, prompt: (200, "short summary")
        clock.advance(301)
        assert tl.guard("t1", cfg).stash("bash", big_log(501)).summarized
        assert tl.guard("t1", cfg).breaker()["failures"] == 0


def test_useless_summaries_count_as_failures(
    tl: Taskloom, anthropic_server: tuple[FakeProvider, str]
) -> None:
    provider, url = anthropic_server
    provider.reply = lambda system, prompt: (200, "   ")
    out = tl.guard("t1", summarizing(url)).stash("bash", big_log())
    assert not out.summarized
    assert "empty summary" in tl.guard("t1").breaker()["last_error"]


def test_result_just_over_the_threshold_takes_one_call(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    """The seed's single-shot path was unreachable; here one chunk means one call, no reduce."""
    provider, url = openai_server
    provider.reply = lambda system, prompt: (200, "nothing throttled")
    cfg = GuardConfig(threshold_tokens=300, llm=OpenAIChat("m", base_url=url))
    g = tl.guard("t1", cfg)
    rid = g.stash("bash", big_log()).result_id or ""
    out = g.extract(rid, "which tenant was throttled")
    assert "1 chunk, 1 call, 0 failed" in out and "[chunk 1/1 · lines 1-400]" in out
    assert len(provider.requests) == 1
