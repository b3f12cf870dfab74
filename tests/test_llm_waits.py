"""Who waits for whom around an LLM call: wraps of one payload share one attempt, unrelated
payloads never wait on each other, endpoint slots are served first come first served, and no
wait is unbounded or overflows. Real HTTP servers on loopback, as in test_llm_guard."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.guard import GuardConfig
from taskloom.guard import summarize as llm_side
from taskloom.guard.summarize import cache_key, llm_slot
from taskloom.llm.anthropic import AnthropicChat
from taskloom.llm.openai import OpenAIChat
from tests.test_llm_guard import SECRET, FakeProvider, big_log, summarizing
from tests.test_llm_robust import extract_cfg, stash_log

SETTLE = 5.0
"""The most a test waits for threads to line up before it goes on regardless."""


def until(ready: Callable[[], bool]) -> None:
    """Wait (at most ``SETTLE`` s) for ``ready``: a synchronisation point, not an assertion."""
    end = time.monotonic() + SETTLE
    while not ready() and time.monotonic() < end:
        time.sleep(0.01)


def waiters() -> int:
    """Callers waiting on another's summary attempt in this process."""
    flights = getattr(llm_side, "_FLIGHTS", {})
    return sum(getattr(f, "waiters", 0) for f in list(flights.values()))


def queued(llm: Any) -> int:
    """Callers waiting for a call slot of ``llm``'s endpoint."""
    return len(getattr(llm_side._endpoint(llm), "queue", ()))


def test_wraps_of_one_payload_share_one_failing_attempt(
    tl: Taskloom, anthropic_server: tuple[FakeProvider, str]
) -> None:
    """Behind a striped lock each wrap made its own attempt once the previous one failed:
    three calls to a failing provider for one payload, each waited out in turn."""
    provider, url = anthropic_server
    arrived, release = threading.Event(), threading.Event()

    def reply(system: str, prompt: str) -> tuple[int, str]:
        arrived.set()
        release.wait(30)
        return 500, "down"

    provider.reply = reply
    cfg = summarizing(url)
    texts: list[str] = []
    threads = [
        threading.Thread(target=lambda: texts.append(tl.guard("t1", cfg).wrap("bash", big_log())))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    assert arrived.wait(30)
    until(lambda: waiters() == 3)
    release.set()
    for thread in threads:
        thread.join()
    assert len(provider.requests) == 1
    assert len(texts) == 4 and len(set(texts)) == 1 and "Tool output summary" not in texts[0]


def stripe(text: str) -> int:
    """The one of the 64 lock stripes a summary of ``text`` in thread t1 was made under."""
    return int(cache_key("t1", "bash", None, text)[:8], 16) % 64


def same_stripe_payloads() -> tuple[str, str]:
    """Two logs whose summary keys fell on the same lock stripe."""
    first = big_log(400)
    second = next(big_log(n) for n in range(401, 2000) if stripe(big_log(n)) == stripe(first))
    return first, second


def test_unrelated_payloads_do_not_wait_for_each_other(
    tl: Taskloom, anthropic_server: tuple[FakeProvider, str]
) -> None:
    """A lock stripe was held across the LLM call, so a payload whose key shared it waited
    for another payload's summary."""
    provider, url = anthropic_server
    slow, fast = same_stripe_payloads()
    arrived, release = threading.Event(), threading.Event()

    def reply(system: str, prompt: str) -> tuple[int, str]:
        if "processed batch 400 " not in prompt:  # only the slow payload lacks batch 400
            arrived.set()
            release.wait(60)
        return 200, "[Tool output summary — bash]\nbatches"

    provider.reply = reply
    cfg = summarizing(url)
    done = threading.Event()
    results: list[bool] = []

    def wrap(payload: str, finished: threading.Event | None = None) -> None:
        results.append(tl.guard("t1", cfg).stash("bash", payload).summarized)
        if finished is not None:
            finished.set()

    first = threading.Thread(target=wrap, args=(slow,))
    first.start()
    assert arrived.wait(30)
    second = threading.Thread(target=wrap, args=(fast, done))
    second.start()
    try:
        assert done.wait(20), "the second payload waited for the first one's summary"
        assert not release.is_set() and results == [True]
    finally:
        release.set()
        first.join()
        second.join()
    assert results == [True, True]


def test_endpoint_slots_are_served_in_order(openai_server: tuple[FakeProvider, str]) -> None:
    """A ``concurrency=1`` caller waited for an idle endpoint while ``concurrency=6`` callers
    that came after it kept taking slots: here the later one must wait behind it, so it
    starts only once the call that held the endpoint has ended."""
    _provider, url = openai_server
    wide, narrow = OpenAIChat("wide", base_url=url), OpenAIChat("narrow", base_url=url)
    far = time.monotonic() + 60
    held, release = threading.Event(), threading.Event()
    entered: dict[str, bool] = {}

    def hold() -> None:
        with llm_slot(wide, 6, far):
            held.set()
            release.wait(30)

    def take(llm: OpenAIChat, limit: int) -> None:
        with llm_slot(llm, limit, far):
            entered[llm.model] = release.is_set()

    threads = [threading.Thread(target=hold)]
    threads[0].start()
    assert held.wait(30)
    threads.append(threading.Thread(target=take, args=(narrow, 1)))
    threads[1].start()
    until(lambda: queued(wide) == 1)
    threads.append(threading.Thread(target=take, args=(wide, 6)))
    threads[2].start()
    until(lambda: queued(wide) == 2 or "wide" in entered)
    release.set()
    for thread in threads:
        thread.join()
    assert entered == {"narrow": True, "wide": True}, "the later caller overtook the earlier"


def test_a_summary_waits_for_a_slot_no_longer_than_its_client_timeout(
    tl: Taskloom, anthropic_server: tuple[FakeProvider, str]
) -> None:
    """Summaries waited for a call slot without bound: an endpoint kept busy held every
    wrap of a large output."""
    provider, url = anthropic_server
    llm = AnthropicChat("claude-x", base_url=url, api_key=SECRET, timeout=0.5)
    cfg = summarizing(url, llm=llm, concurrency=1)
    done = threading.Event()
    out: list[bool] = []

    def wrap() -> None:
        out.append(tl.guard("t1", cfg).stash("bash", big_log()).summarized)
        done.set()

    with llm_slot(llm, 1, time.monotonic() + 60):
        thread = threading.Thread(target=wrap)
        thread.start()
        finished = done.wait(20)
    thread.join()
    assert finished, "the summary waited for the busy slot to be released"
    assert out == [False] and provider.requests == []
    assert "busy for the client's timeout" in str(tl.guard("t1", cfg).breaker()["last_error"])


@pytest.mark.parametrize(
    ("over", "said"),
    [
        ({"extract_timeout": 300}, "extract_timeout must be a datetime.timedelta"),
        ({"ttl": 3600.0}, "ttl must be a datetime.timedelta"),
        ({"breaker_cooldown": "15m"}, "breaker_cooldown must be a datetime.timedelta"),
        ({"extract_timeout": timedelta(0)}, "extract_timeout must be positive"),
        ({"extract_timeout": timedelta(seconds=-1)}, "extract_timeout must be positive"),
    ],
)
def test_a_timeout_that_is_no_timedelta_or_not_positive_is_refused(
    over: dict[str, Any], said: str
) -> None:
    with pytest.raises(InvalidInput, match=said):
        GuardConfig(**over)


def test_a_huge_extract_timeout_does_not_overflow_a_wait(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    """``timedelta(days=365000)`` raised ``OverflowError`` from ``threading``'s wait."""
    provider, url = openai_server
    provider.reply = lambda system, prompt: (200, "NONE")
    cfg = extract_cfg(url, chunk_tokens=12_000, extract_timeout=timedelta(days=365000))
    out = tl.guard("t1", cfg).extract(stash_log(tl, cfg), "tenant throttled quota processed")
    assert "method: LLM map-reduce" in out and len(provider.requests) == 1
