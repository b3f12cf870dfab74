"""Whatever a plugged-in ``ChatModel`` raises, a summary or a chunk fails cleanly: the tool
result is kept, the summary claim is given up, and the calls reported are the calls made."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import ProviderError
from taskloom.guard import GuardConfig
from taskloom.guard import summarize as llm_side
from taskloom.guard.summarize import chunk_lines, map_reduce


def big_log(n: int = 400) -> str:
    return "\n".join(f"2026-01-01 worker-{i % 5} processed batch {i} in 12ms" for i in range(n))


class Flaky:
    """A custom model: its first ``fails`` calls raise what a socket would, then it answers."""

    name = "flaky"
    timeout = 2

    def __init__(self, fails: int, answer: str = "[Tool output summary — bash]\n400 batches"):
        self.fails, self.answer, self.calls = fails, answer, 0

    def complete(self, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
        self.calls += 1
        if self.calls <= self.fails:
            raise ConnectionResetError("[Errno 104] Connection reset by peer")
        return self.answer


def claims(tl: Taskloom) -> int:
    with tl.store.read() as tx:
        return len(tx.query("SELECT cache_key FROM stash_summaries WHERE summary = ''"))


def test_a_model_that_raises_leaves_a_placeholder_and_no_claim(tl: Taskloom) -> None:
    """``ConnectionResetError`` from a custom model made ``wrap`` raise, so the tool result
    was lost, and left a claim on the payload that held off every later summary of it for
    ten minutes."""
    model = Flaky(fails=1)
    cfg = GuardConfig(threshold_tokens=300, llm=model, summarize=True, max_entries=1)
    g = tl.guard("t1", cfg)
    out = g.stash("bash", big_log())
    assert out.mode == "stashed" and not out.summarized and out.result_id
    assert "LLM summary" not in out.text
    assert g.read(out.result_id, lines="1-1").endswith("processed batch 0 in 12ms")
    assert claims(tl) == 0
    breaker = g.breaker()
    assert breaker["failures"] == 1
    assert "ConnectionResetError: [Errno 104] Connection reset by peer" in breaker["last_error"]
    g.stash("bash", big_log(401))  # evicts the first result (max_entries=1)
    assert g.stash("bash", big_log()).summarized  # asked again, not held off by a claim
    assert model.calls == 3 and g.breaker()["failures"] == 0


def test_a_chunk_whose_model_raises_is_a_failed_chunk(tl: Taskloom) -> None:
    """The exception went through the map-reduce and the extract raised it."""
    cfg = GuardConfig(threshold_tokens=300, llm=Flaky(fails=99), chunk_tokens=2_000)
    g = tl.guard("t1", cfg)
    rid = g.stash("bash", big_log()).result_id or ""
    answer = g.extract(rid, "which tenant was throttled")
    assert "method: LLM map-reduce" in answer and "failed]" in answer
    assert "FAILED chunk 1 (lines 1-" in answer and "ConnectionResetError" in answer


def test_a_reduce_that_never_started_is_not_counted_as_a_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The header said "3 call(s)" when the reduce found no slot and only two were made."""
    entered: list[int] = []

    @contextmanager
    def slot(llm: Any, limit: int, deadline: float, note: str | None = None) -> Iterator[None]:
        entered.append(1)
        if len(entered) > 2:  # the reduce, after the two map calls
            raise ProviderError("not started: the extract's deadline (extract_timeout) passed")
        yield

    monkeypatch.setattr(llm_side, "llm_slot", slot)
    chunks = chunk_lines(big_log(40), 200, lambda text: len(text) // 4)[:2]
    model = Flaky(fails=0, answer="[chunk] batch 3")
    result = map_reduce(
        model, "bash", "batch 3", chunks, concurrency=1, count=len, deadline=float("inf")
    )
    assert len(result.partials) == 2 and model.calls == 2
    assert result.calls == 2 and "reduce step failed" in result.answer
