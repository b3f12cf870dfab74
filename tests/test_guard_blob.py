"""A large one-line blob (base64) is counted, searched and ranked without repeated passes."""

from __future__ import annotations

import base64
import random
import re

import pytest

from taskloom.client import Taskloom
from taskloom.guard import core, rank


def test_a_large_text_is_counted_in_tokens_once(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text that cleaning leaves as it is was counted twice, once as cleaned and once as
    the original: a 20 MB base64 blob spent seconds on each."""
    blob = base64.b64encode(random.Random(7).randbytes(300_000)).decode()
    g = tl.guard("t1")
    counted: list[int] = []
    count = core.Guard.count.fget(g)  # type: ignore[attr-defined]
    monkeypatch.setattr(core.Guard, "count", property(lambda _g: _spy(count, counted)))
    out = g.stash("blob", blob)
    assert out.mode == "stashed"
    assert counted.count(len(blob)) == 1, counted


def _spy(count: object, counted: list[int]) -> object:
    def spied(text: str) -> int:
        counted.append(len(text))
        return count(text)  # type: ignore[operator, no-any-return]

    return spied


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
