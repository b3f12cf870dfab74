"""The same payload is summarized once, however many threads or processes wrap it at once,
and its summary goes when the thread's results have gone."""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from collections.abc import Callable
from datetime import timedelta

import taskloom
from taskloom.client import Taskloom
from taskloom.guard.summarize import cache_key
from taskloom.llm.anthropic import AnthropicChat
from taskloom.store.stash import claim_summary, purge_stash
from tests.conftest import FakeClock, run_together
from tests.test_llm_guard import SECRET, FakeProvider, big_log, summarizing


def slow_summary(system: str, prompt: str) -> tuple[int, str]:
    """A summary that takes long enough for every other wrap to start meanwhile."""
    time.sleep(1.0)
    return 200, "[Tool output summary — bash]\n400 batches"


def test_threads_wrapping_one_payload_at_once_make_one_summary_call(
    tl: Taskloom, anthropic_server: tuple[FakeProvider, str]
) -> None:
    """The cache was read, the LLM called and the cache written with nothing between: four
    threads wrapping the same output made four calls."""
    provider, url = anthropic_server
    provider.reply = slow_summary
    cfg = summarizing(url)
    ready = threading.Barrier(4)
    texts: list[str] = []

    def wrap() -> None:
        ready.wait()
        texts.append(tl.guard("t1", cfg).wrap("bash", big_log(), hint="slow workers"))

    threads = [threading.Thread(target=wrap) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(provider.requests) == 1
    assert len(texts) == 4 and len(set(texts)) == 1 and "400 batches" in texts[0]


def _wrap_in_process(
    db_url: str,
    llm_url: str,
    start: mp.synchronize.Event,  # type: ignore[name-defined]
    out: mp.Queue,  # type: ignore[type-arg]
) -> None:
    with taskloom.connect(db_url) as tl:
        guard = tl.guard("t1", summarizing(llm_url))
        start.wait()
        out.put(guard.wrap("bash", big_log(), hint="slow workers"))


def test_processes_wrapping_one_payload_at_once_make_one_summary_call(
    db_url: str, anthropic_server: tuple[FakeProvider, str]
) -> None:
    """A claim in the store holds off another process while the first one summarizes, and
    the others wait for its summary."""
    provider, url = anthropic_server
    provider.reply = slow_summary
    with taskloom.connect(db_url) as tl:
        tl.board("warm-up").list()  # the schema exists before the processes race
    texts = run_together(_wrap_in_process, [(db_url, url)] * 3, 120)
    assert len(provider.requests) == 1
    assert len(set(texts)) == 1 and "400 batches" in texts[0]


def test_a_summary_is_purged_with_the_last_result_of_its_thread(
    db_url: str, clock: FakeClock, anthropic_server: tuple[FakeProvider, str]
) -> None:
    """Summaries built from stored content were never purged: a finished thread kept them on
    disk for ever, while its results went at their TTL."""
    provider, url = anthropic_server
    provider.reply = lambda system, prompt: (200, "[Tool output summary — bash]\n400 batches")
    cfg = summarizing(url, ttl=timedelta(hours=1))
    with taskloom.connect(db_url, clock=clock) as tl:
        assert tl.guard("t1", cfg).stash("bash", big_log()).summarized
        assert tl.guard("t2", cfg).stash("bash", big_log()).summarized
        clock.advance(1800)
        tl.guard("t2", cfg).stash("bash", big_log(401))  # t2 lives on
        clock.advance(2000)  # t1's result and t2's first are past their TTL
        assert purge_stash(tl.store, tl.now()) == 2
        with tl.store.read() as tx:
            rows = tx.query("SELECT thread_id FROM stash_summaries ORDER BY thread_id")
        assert [r["thread_id"] for r in rows] == ["t2", "t2"]
        assert tl.guard("t1", cfg).stash("bash", big_log()).summarized
        assert len(provider.requests) == 4  # t1's payload is summarized afresh


def test_a_claim_left_by_a_dead_process_expires(
    make_tl: Callable[..., Taskloom], anthropic_server: tuple[FakeProvider, str]
) -> None:
    provider, url = anthropic_server
    provider.reply = lambda system, prompt: (200, "[Tool output summary — bash]\n400 batches")
    clock = FakeClock()
    tl = make_tl(clock=clock)
    payload = big_log()
    with tl.store.write() as tx:  # what a process that died while summarizing leaves
        claim = claim_summary(tx, cache_key("t1", "bash", None, payload), "t1", clock())
    assert claim == (True, None)
    llm = AnthropicChat("claude-x", base_url=url, api_key=SECRET, timeout=1)
    assert not tl.guard("t1", summarizing(url, llm=llm)).stash("bash", payload).summarized
    assert provider.requests == []  # held off by the claim
    clock.advance(timedelta(days=7).total_seconds() + 1)  # the result and the claim expire
    assert tl.guard("t1", summarizing(url)).stash("bash", payload).summarized
    assert len(provider.requests) == 1
