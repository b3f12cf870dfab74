"""A large one-line blob (base64) is counted, searched and ranked without repeated passes."""

from __future__ import annotations

import base64
import random
import re

import pytest

from taskloom.client import Taskloom
from taskloom.guard import core, rank, tokens


def test_a_large_text_is_counted_in_tokens_once(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text that cleaning leaves as it is was counted twice, once as cleaned and once as
    the original: a 20 MB base64 blob spent seconds on each."""
    blob = base64.b64encode(random.Random(7).randbytes(300_000)).decode()
    g = tl.guard("t1")
    counted: list[int] = []
    count = core.Guard.count.fget(g)  # type: ignore[attr-defined]
    monkeypatch.setattr(core.Guard, "count", property(lambda _g: _Spy(count, counted)))
    out = g.stash("blob", blob)
    assert out.mode == "stashed"
    assert counted.count(len(blob)) == 1, counted


class _Spy:
    """A token counter that records the length of each text it is asked to count."""

    def __init__(self, count: tokens.Counter, counted: list[int]) -> None:
        self._count, self._counted = count, counted

    def __call__(self, text: str) -> int:
        self._counted.append(len(text))
        return self._count(text)

    def about(self, text: str, floor: int = 0) -> tokens.Tally:
        self._counted.append(len(text))
        return self._count.about(text, floor)


def _parts_one_piece_at_a_time(word: str) -> list[str]:
    out: list[str] = []
    for piece in re.split(r"[._@/:-]", word):
        out.extend(p.lower() for p in rank._CAMEL.findall(piece) or [piece])
    return out


def test_a_words_parts_are_those_of_each_piece() -> None:
    rng = random.Random(3)
    alphabet = "aZ9._@/:-$+ é日" + "AbCdEf012"
    samples = ["InventoryConfiguration", "pull_request", "a.b/c", "HTTPServer2x", "x-y:z@w", ""]
    samples += [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(12))) for _ in range(5_000)
    ]
    for word in samples:
        assert rank.parts_of(word) == _parts_one_piece_at_a_time(word), word


def test_a_huge_blob_is_counted_from_a_sample_and_its_placeholder_says_about(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 20 MB base64 blob spent seconds in the exact token count of a number that only
    says the blob is far too large for a context: past ``EXACT_CHARS`` a sample is counted,
    and the placeholder says the count is an estimate."""
    monkeypatch.setattr(tokens, "EXACT_CHARS", 400_000)
    monkeypatch.setattr(tokens, "SAMPLE_CHARS", 8_192)
    blob = base64.b64encode(random.Random(8).randbytes(1_500_000)).decode()
    fed: list[int] = []
    real = tokens.counter("o200k_base")
    spy = tokens.Counter(real.encoding, real.backend, lambda t: fed.append(len(t)) or real.count(t))
    monkeypatch.setattr(core, "counter", lambda _encoding: spy)
    out = tl.guard("t1").stash("blob", blob)
    assert out.mode == "stashed"
    about = re.search(r"· about ([\d,]+) tokens \(o200k_base\)", out.text)
    assert about, out.text[:300]
    exact = real(blob)
    assert abs(int(about.group(1).replace(",", "")) - exact) < exact * 0.05
    assert sum(fed) < len(blob) // 4, "the blob was counted whole"


def test_a_sampled_count_is_exact_where_it_decides_and_for_a_text_under_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tokens, "EXACT_CHARS", 100_000)
    count = tokens.counter("o200k_base")
    short = "word " * 15_000
    assert count.about(short) == tokens.Tally(count(short), True)
    long = base64.b64encode(random.Random(9).randbytes(300_000)).decode()
    assert count.about(long, floor=10**9) == tokens.Tally(count(long), True)
    sampled = count.about(long, floor=3_000)
    assert not sampled.exact and sampled.tokens > 3_000
    no_split = "a" * 300_000  # no safe split point: counted exactly
    assert count.about(no_split) == tokens.Tally(count(no_split), True)


def test_a_texts_term_count_is_the_number_of_its_terms() -> None:
    rng = random.Random(5)
    samples = [base64.b64encode(rng.randbytes(30_000)).decode(), "", "x", "a..b", ".A", "ab1 j"]
    for alphabet in ("aZ9._@/:-+ AbCdEf012\n\t,;=()'\"", "aB1. ", "abAB01.-/ xj"):
        samples += [
            "".join(rng.choice(alphabet) for _ in range(rng.randrange(60))) for _ in range(3_000)
        ]
    for text in samples:
        assert rank.term_count(text) == len(rank.terms(text)), text


def test_ranking_a_blob_cuts_words_into_parts_only_where_a_query_word_is(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every piece of a 20 MB base64 line was cut into its case parts (13 million of them,
    5 s) though only a piece holding a query word can rank: the others are only counted."""
    rng = random.Random(6)
    blob = base64.b64encode(rng.randbytes(600_000)).decode()
    blob = blob[:400_000] + "+NeedleMarker+" + blob[400_000:]
    g = tl.guard("t1")
    rid = g.stash("blob", blob).result_id or ""
    cut: list[str] = []
    parts_of = rank.parts_of
    monkeypatch.setattr(rank, "parts_of", lambda word: cut.append(word) or parts_of(word))
    answer = g.extract(rid, "where is the NeedleMarker")
    assert "NeedleMarker" in answer.split("\n---", 2)[1]
    assert len(cut) < 200, len(cut)
