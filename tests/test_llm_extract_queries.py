"""Which queries reach the LLM map-reduce, and what an extract keeps when the LLM finds
nothing. Real HTTP servers on loopback, as in test_llm_guard."""

from __future__ import annotations

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from tests.test_guard_store import SMALL
from tests.test_llm_guard import FakeProvider
from tests.test_llm_robust import extract_cfg, stash_log

WEAK = "tenant throttled quota processed"
"""One word of four in the log: a weak local match, so the LLM is asked."""


@pytest.mark.parametrize(
    ("status", "text"), [(200, "NONE"), (500, "down")], ids=["nothing-found", "all-failed"]
)
def test_local_fragments_survive_an_llm_that_finds_nothing(
    tl: Taskloom, openai_server: tuple[FakeProvider, str], status: int, text: str
) -> None:
    """The local ranking's fragments were thrown away when the map-reduce failed or found
    nothing: the answer was only "(no chunk that answered had matching content)"."""
    provider, url = openai_server
    provider.reply = lambda system, prompt: (status, text)
    cfg = extract_cfg(url)
    out = tl.guard("t1", cfg).extract(stash_log(tl, cfg), WEAK)
    assert "method: LLM map-reduce" in out.splitlines()[0] and provider.requests
    assert "Local ranking (weak match" in out
    assert "--- lines 1-30\n2026-01-01 worker-0 processed batch 0 in 12ms" in out
    assert tl.guard("t1", cfg).count(out) <= cfg.extract_cap_tokens


def test_local_fragments_are_left_out_when_a_chunk_answers(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    provider, url = openai_server
    provider.reply = lambda system, prompt: (200, "tenant-7 [chunk 1]")
    cfg = extract_cfg(url, chunk_tokens=12_000)
    out = tl.guard("t1", cfg).extract(stash_log(tl, cfg), WEAK)
    assert "tenant-7" in out and "Local ranking" not in out


def test_a_jsonpath_on_a_text_result_is_an_error_not_an_llm_question(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    provider, url = openai_server
    cfg = extract_cfg(url)
    rid = stash_log(tl, cfg)
    for query in ("$.foo", "$..login", "$[0]"):
        with pytest.raises(InvalidInput, match="this result is text, not JSON"):
            tl.guard("t1", cfg).extract(rid, query)
    assert provider.requests == []


def test_regex_flags_other_dialects_use_are_answered_locally(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    """``/needle/g`` was not taken for a regex and ran the whole map-reduce."""
    provider, url = openai_server
    cfg = extract_cfg(url)
    g = tl.guard("t1", cfg)
    rid = stash_log(tl, cfg)
    out = g.extract(rid, "/BATCH 123 /gi")
    assert "method: regex" in out and "--- line 124\n2026-01-01 worker-3 processed batch 123" in out
    assert "regex matches no line" in g.extract(rid, "/no-such-token/g")
    assert provider.requests == []


def path_log() -> str:
    lines = [f"2026-01-01 exec /usr/bin/dig host-{i}.example" for i in range(300)]
    lines[120] = "2026-01-01 exec /home/sim/run.sh batch/y ready"
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("query", "line"),
    [("/usr/bin/dig", 1), ("/batch/y", 121), ("/home/sim/run.sh", 121), ("/dig host-7\\./", 8)],
)
def test_a_path_is_words_unless_it_reads_as_a_regex(tl: Taskloom, query: str, line: int) -> None:
    """``/usr/bin/dig`` was refused ("regex flag(s) d not supported") and ``/batch/y`` too:
    a query is a regex only with no unescaped ``/`` inside and flags from ``imsxgu``."""
    g = tl.guard("t1", SMALL)
    rid = g.stash("bash", path_log()).result_id or ""
    out = g.extract(rid, query)
    method = "regex" if query.startswith("/dig") else "local ranking"
    assert f"method: {method}" in out
    assert f"line {line}" in out or f"lines {line}-" in out


@pytest.mark.parametrize("query", ["???", "the", "what is the value of it", "--- !!"])
def test_a_query_with_no_word_to_search_for_is_not_sent_to_the_llm(
    tl: Taskloom, openai_server: tuple[FakeProvider, str], query: str
) -> None:
    provider, url = openai_server
    cfg = extract_cfg(url)
    rid = stash_log(tl, cfg)
    with pytest.raises(InvalidInput, match="the query has no word to search for"):
        tl.guard("t1", cfg).extract(rid, query)
    assert provider.requests == []


def test_a_query_in_another_script_still_reaches_the_llm(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    """Local ranking has no words for it, but the model may: only empty queries stay local."""
    provider, url = openai_server
    provider.reply = lambda system, prompt: (200, "NONE")
    cfg = extract_cfg(url, chunk_tokens=12_000)
    out = tl.guard("t1", cfg).extract(stash_log(tl, cfg), "哪个租户被限流")
    assert "method: LLM map-reduce" in out and len(provider.requests) == 1
