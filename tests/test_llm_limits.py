"""How much the guard asks of a provider: calls in flight per endpoint, one extract's deadline,
and a short retry of a busy answer. Real HTTP servers on loopback, as in test_llm_guard."""

from __future__ import annotations

import json
import re
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import ProviderError
from taskloom.llm.anthropic import AnthropicChat
from taskloom.llm.openai import OpenAIChat
from tests.test_llm_guard import SECRET, FakeProvider
from tests.test_llm_robust import extract_cfg, openai_choice, stash_log

QUERY = "which tenant was throttled"


def answer(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str]) -> None:
    """Write a chat-completions reply (an error body unless ``status`` is 200)."""
    if status == 200:
        body = json.dumps(openai_choice({"content": "tenant-7 [chunk 1]"})).encode()
    else:
        body = json.dumps({"error": {"message": "busy"}}).encode()
    handler.send_response(status)
    for name, value in {"content-type": "application/json", **headers}.items():
        handler.send_header(name, value)
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def busy_then_ok(busy: int, status: int, after: str | None) -> Any:
    """A raw reply: ``busy`` answers of ``status`` (with ``Retry-After: after``), then 200."""
    seen = [0]

    def reply(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
        seen[0] += 1
        if seen[0] > busy:
            answer(handler, 200, {})
        else:
            answer(handler, status, {} if after is None else {"retry-after": after})

    return reply


def test_concurrent_extracts_share_one_bound_per_endpoint(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    """Each extract had its own pool of ``concurrency`` threads: four extracts at once had
    twelve requests in flight against a documented three."""
    provider, url = openai_server

    def reply(system: str, prompt: str) -> tuple[int, str]:
        for _ in range(30):  # hold each call until a fourth is in flight, or 0.3 s
            if provider.in_flight > 3:
                break
            time.sleep(0.01)
        return 200, "NONE"

    provider.reply = reply
    cfg = extract_cfg(url)
    rid = stash_log(tl, cfg)
    answers: list[str] = []
    threads = [
        threading.Thread(target=lambda: answers.append(tl.guard("t1", cfg).extract(rid, QUERY)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 4 and all("method: LLM map-reduce" in a for a in answers)
    assert len(provider.requests) > 12
    assert provider.max_in_flight <= 3


def test_an_extract_ends_at_its_deadline_listing_the_late_chunks(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    """Nothing bounded one extract but the client's timeout per call: 32 chunks of a slow
    provider, three at a time, held the tool call for 22 minutes."""
    provider, url = openai_server
    release = threading.Event()

    def reply(system: str, prompt: str) -> tuple[int, str]:
        release.wait(60)
        return 200, "too late"

    provider.reply = reply
    llm = OpenAIChat("m", base_url=url, api_key=SECRET, timeout=60)
    cfg = extract_cfg(url, llm=llm, extract_timeout=timedelta(seconds=1))
    try:
        out = tl.guard("t1", cfg).extract(stash_log(tl, cfg), QUERY)
    finally:
        release.set()
    chunks = re.search(r"(\d+) chunks?\b", out)
    assert chunks and f"{chunks.group(1)} failed" in out.splitlines()[0]
    assert "FAILED chunk 1 (lines 1-" in out and "deadline (extract_timeout) passed" in out
    assert "too late" not in out


@pytest.mark.parametrize("status", [429, 503])
def test_a_busy_answer_is_retried_after_its_retry_after(
    openai_server: tuple[FakeProvider, str], status: int
) -> None:
    provider, url = openai_server
    provider.raw = busy_then_ok(2, status, "0")
    assert OpenAIChat("m", base_url=url).complete("s", "p") == "tenant-7 [chunk 1]"
    assert len(provider.requests) == 3


def test_anthropics_overloaded_answer_is_retried(
    anthropic_server: tuple[FakeProvider, str],
) -> None:
    """529 is Anthropic's "overloaded, try again": it failed at once, and counted toward the
    summarizer's breaker."""
    provider, url = anthropic_server
    answers = iter([(529, "overloaded"), (529, "overloaded"), (200, "tenant-7")])
    provider.reply = lambda system, prompt: next(answers)
    assert AnthropicChat("m", base_url=url).complete("s", "p") == "tenant-7"
    assert len(provider.requests) == 3


def test_a_provider_busy_for_good_fails_after_three_tries(
    openai_server: tuple[FakeProvider, str],
) -> None:
    provider, url = openai_server
    provider.raw = busy_then_ok(10, 429, "0")
    with pytest.raises(ProviderError, match=r"HTTP 429 \(after 3 attempts\)"):
        OpenAIChat("m", base_url=url).complete("s", "p")
    assert len(provider.requests) == 3


@pytest.mark.parametrize("after", ["3600", "Wed, 21 Oct 2099 07:28:00 GMT"])
def test_a_retry_after_past_the_cap_fails_at_once(
    anthropic_server: tuple[FakeProvider, str], after: str
) -> None:
    provider, url = anthropic_server

    def busy(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
        answer(handler, 429, {"retry-after": after})

    provider.raw = busy
    with pytest.raises(ProviderError, match=r"HTTP 429: "):
        AnthropicChat("m", base_url=url).complete("s", "p")
    assert len(provider.requests) == 1


def test_other_errors_are_not_retried(openai_server: tuple[FakeProvider, str]) -> None:
    provider, url = openai_server
    provider.raw = busy_then_ok(1, 500, "0")
    with pytest.raises(ProviderError, match="HTTP 500"):
        OpenAIChat("m", base_url=url).complete("s", "p")
    assert len(provider.requests) == 1


def test_a_transient_429_does_not_fail_a_summary(
    tl: Taskloom, anthropic_server: tuple[FakeProvider, str]
) -> None:
    """Three single 429s, one per turn, opened the summarizer's breaker for 15 minutes."""
    provider, url = anthropic_server
    served = [0]

    def reply(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
        served[0] += 1
        if served[0] % 2:
            answer(handler, 429, {"retry-after": "0"})
            return
        body = json.dumps({"content": [{"type": "text", "text": "short summary"}]}).encode()
        handler.send_response(200)
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    provider.raw = reply
    llm = AnthropicChat("c", base_url=url, api_key=SECRET)
    cfg = extract_cfg(url, llm=llm, summarize=True)
    for i in range(3):
        out = tl.guard("t1", cfg).stash("bash", "\n".join(["line"] * 500 + [str(i)] * 500))
        assert out.summarized and "short summary" in out.text
    assert tl.guard("t1", cfg).breaker()["failures"] == 0


def test_a_retry_that_would_pass_the_timeout_is_not_made(
    openai_server: tuple[FakeProvider, str],
) -> None:
    """A 429 asking for 5 s on a call with 2 s left slept the 5 s and tried again: the call
    took more than twice its timeout, and whoever waits for it (a summary another process
    makes) had given up long before."""
    provider, url = openai_server
    provider.raw = busy_then_ok(1, 429, "5")
    with pytest.raises(ProviderError, match=r"HTTP 429: .*would pass the call's timeout"):
        OpenAIChat("m", base_url=url, timeout=2.0).complete("s", "p")
    assert len(provider.requests) == 1


def test_slow_busy_answers_share_one_deadline(openai_server: tuple[FakeProvider, str]) -> None:
    """Each attempt had a fresh ``timeout``: three busy answers of 0.6 s each made a call
    with a 1 s timeout last three times that long. The attempts share the call's deadline,
    so the second one, started 0.6 s in, is cut off at 1 s."""
    provider, url = openai_server

    def slow_busy(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
        time.sleep(0.6)
        answer(handler, 429, {"retry-after": "0"})

    provider.raw = slow_busy
    with pytest.raises(ProviderError, match="timed out after 1 s"):
        OpenAIChat("m", base_url=url, timeout=1.0).complete("s", "p")
    assert len(provider.requests) <= 2
