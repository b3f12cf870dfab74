"""Extraction from big text results: a match deep in a long line is shown with its offsets,
and a regex over a large result is searched whole, a match staying within its line."""

from __future__ import annotations

import importlib
import json
import random
import re
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.guard.extract import extract_local

WINDOW = re.compile(r"--- line 1, chars ([\d,]+)-([\d,]+) of ([\d,]+)\n")


def search() -> ModuleType:
    """The search module, imported where a test needs it (it is new with these fixes)."""
    return importlib.import_module("taskloom.guard.search")


def one_line_log() -> tuple[str, str]:
    """60,000 words on one line (660 KB), and a word that occurs once, near char 437,000."""
    rng = random.Random(1)
    words = [rng.choice(["alpha", "beta", "gamma", "delta"]) + str(i) for i in range(60_000)]
    return " ".join(words), words[40_000]


def window_of(answer: str) -> tuple[int, int, int, str]:
    """The offsets a fragment of line 1 names (1-based, inclusive) and its text."""
    match = WINDOW.search(answer)
    assert match, answer[:300]
    first, last, length = (int(g.replace(",", "")) for g in match.groups())
    return first, last, length, answer[match.end() :]


@pytest.mark.parametrize("query", ["{word}", "/{word} /"])
def test_a_match_deep_in_a_long_line_is_shown_with_its_offsets(tl: Taskloom, query: str) -> None:
    """The fragment was the start of the line, 400,000 characters before the match, and
    said nothing of where in the line it was."""
    line, word = one_line_log()
    at = line.index(word + " ")
    g = tl.guard("t1")
    rid = g.stash("logs", line).result_id or ""
    first, last, length, body = window_of(g.extract(rid, query.format(word=word)))
    assert length == len(line) and first - 1 <= at < last and last - first < 2_000
    assert word in body and body.startswith(line[first - 1 : first + 99])


def test_minified_json_kept_as_text_is_searched_at_the_match(tl: Taskloom) -> None:
    """JSON with one integer beyond 64 bits is text: one line of 380 KB."""
    items = [{"hash": f"0x{i:064x}", "value": str(10**20 + i)} for i in range(3000)]
    text = json.dumps(items, separators=(",", ":")).replace(f'"{10**20}"', str(10**20))
    g = tl.guard("t1")
    out = g.stash("eth_txs", text)
    assert out.mode == "stashed" and "Shape: text, 1 line (" in out.text
    target = f"0x{2500:064x}"
    for query in (target, f"/{target}/"):
        first, last, _length, body = window_of(g.extract(out.result_id or "", query))
        assert first - 1 <= text.index(target) < last and target in body


def test_each_distant_match_in_a_long_line_gets_its_own_window() -> None:
    line = "x" * 50_000 + " needle-1 " + "y" * 50_000 + " needle-2 " + "z" * 10
    found = extract_local(line, False, "/needle-\\d/")
    assert found.total_matches == 2
    starts = [line.index("needle-1"), line.index("needle-2")]
    assert [where for where, _body in found.fragments] == [
        f"line 1, chars {at - 500 + 1:,}-{min(at + 8 + 1_000, len(line)):,} of {len(line):,}"
        for at in starts
    ]
    assert all("needle-" in body for _where, body in found.fragments)


def test_a_regex_answer_counts_every_match_not_its_windows(tl: Taskloom) -> None:
    """A one-line result with 1,000 NaN was answered "2 of 91 matches shown": 91 was the
    count of windows (matches closer than a window to the last share one), read by a model
    as the count of NaN. Lines holding several matches were counted once each, too."""
    body = ",".join(f'{{"id": {i}, "x": {"NaN" if i % 3 == 1 else i}}}' for i in range(3_000))
    g = tl.guard("t1")
    rid = g.stash("api", f"[{body}]").result_id or ""
    head = g.extract(rid, "/NaN/").split("\n--- ")[0]
    assert "1,000 matches of the regex, on 1 line" in head
    assert "matches shown" not in head and " fragments shown]" in head
    log = "".join(f"{i} ERROR disk ERROR retry\n{i} ok\n" for i in range(1_500))
    rid = g.stash("logs", log).result_id or ""
    head = g.extract(rid, "/ERROR/").split("\n--- ")[0]
    assert "of 1,500 matching lines shown]" in head
    assert "3,000 matches of the regex, on 1,500 lines." in head
    head = g.extract(rid, "/retry/").split("\n--- ")[0]  # one match a line: as it was
    assert "of 1,500 matches shown]" in head and "of the regex" not in head


def test_a_trivial_regex_on_a_large_result_is_answered() -> None:
    """15 MB of 1.5M lines: one timed search per line cost over the 1 s budget in call
    overhead alone, and ``/^ok 1499999$/`` was refused as a pattern that backtracks."""
    text = "\n".join(f"ok {i}" for i in range(1_500_000))
    found = extract_local(text, False, "/^ok 1499999$/")
    assert found.fragments == [("line 1500000", "ok 1499999")]
    found = extract_local(text, False, "/^ok 77777[0-9]$/")
    assert [where for where, _ in found.fragments] == [f"line {777771 + i}" for i in range(10)]


@pytest.mark.parametrize(
    ("query", "lines"),
    [
        ("/1\\s+ok/", ["line 3"]),  # \s could take the newline of line 1
        ("/ok 1.*3/s", ["line 3"]),  # so could . with s
        ("/\\Aok 2\\Z/", ["line 2"]),  # \A and \Z are a line's ends, as ^ and $ are
        ("/^$/", []),  # no line 4: the final line break ends line 3
        ("/^ok 3$/", []),
        ("/ok 3$/", ["line 3"]),
        ("/[^x]ok 3$/", ["line 3"]),
    ],
)
def test_a_regex_match_stays_within_its_line(query: str, lines: list[str]) -> None:
    found = extract_local("ok 1\nok 2\nok 1 ok 3\n", False, query)
    assert [where for where, _ in found.fragments] == lines


def test_a_regex_finds_no_line_after_the_final_line_break(tl: Taskloom) -> None:
    """``/^$/`` on a 1,200-line log ending in a line break matched "line 1201", the empty
    string after it: a line the placeholder does not count and read_result calls past the
    end, and one blank line too many in the count."""
    log = "".join(f"{i:04d} request done\n" if i % 3 else "\n" for i in range(1_200))
    g = tl.guard("t1")
    out = g.stash("logs", log)
    assert " · 1,200 lines]" in out.text and out.result_id
    answer = g.extract(out.result_id, "/^$/")
    assert "of 400 matches shown]" in answer.split("\n")[0]
    assert "--- line 1\n" in answer and "line 1201" not in answer
    tail = g.extract(out.result_id, "/^(1199 request done)?$/").split("\n")[0]
    assert "of 401 matches shown]" in tail  # the 400 blank lines and line 1200, no more


def test_a_line_end_anchor_matches_before_a_crlf(tl: Taskloom) -> None:
    """A Windows tool's output (CRLF line breaks) kept each line's \\r, so ``/done$/``
    matched no line and ``/^$/`` no blank line, while every fragment shown had its \\r
    stripped: nothing told the model why."""
    log = "\r\n".join(f"{i:04d} request done" if i % 3 else "" for i in range(1_200)) + "\r\n"
    g = tl.guard("t1")
    rid = g.stash("winlog", log).result_id or ""
    assert "of 800 matches shown]" in g.extract(rid, "/done$/").split("\n")[0]
    assert "of 400 matches shown]" in g.extract(rid, "/^$/").split("\n")[0]
    assert "--- line 1200\n1199 request done" in g.extract(rid, "/\\A1199 request done\\Z/")
    assert "--- line 3\n0002 request done" in g.extract(rid, "/[$]?0002 request done$/")
    with pytest.raises(InvalidInput, match="at position 7: missing \\)"):
        g.extract(rid, "/done$ (/")  # the position in the pattern as the model wrote it


def test_matches_are_counted_up_to_a_limit(tl: Taskloom) -> None:
    g = tl.guard("t1")
    rid = g.stash("logs", "\n".join(f"ok {i}" for i in range(12_000))).result_id or ""
    answer = g.extract(rid, "/^ok/")
    assert "of 10,000+ matches shown" in answer and "(at least " in answer


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowPattern:
    """A pattern that spends ``per_char`` seconds of ``clock`` on each character searched,
    and raises ``TimeoutError`` as ``regex`` does when that passes its timeout."""

    def __init__(self, clock: FakeClock, per_char: float) -> None:
        self.clock, self.per_char = clock, per_char

    def search(self, text: str, pos: int, end: int, *, concurrent: bool, timeout: float) -> Any:
        spend = (end - pos) * self.per_char
        if spend > timeout:
            self.clock.now += timeout
            raise TimeoutError
        self.clock.now += spend
        return None


@pytest.mark.parametrize(
    ("per_char", "stopped", "searched"), [(0.0015, "size", 60), (0.05, "pattern", 0)]
)
def test_a_search_out_of_time_says_whether_the_pattern_or_the_size_is_why(
    monkeypatch: pytest.MonkeyPatch, per_char: float, stopped: str, searched: int
) -> None:
    """A linear pattern over a result too big for the budget was blamed on backtracking."""
    mod = search()
    clock = FakeClock()
    monkeypatch.setattr(mod, "time", SimpleNamespace(monotonic=clock))
    monkeypatch.setattr(mod, "CHUNK", 100)
    text = "\n".join(f"line {i:05d}" for i in range(2_000))  # 10 characters a line
    found = mod.find_lines(SlowPattern(clock, per_char), text, 1.0)
    assert (found.stopped, found.searched_lines) == (stopped, searched)


def test_a_result_too_big_for_the_budget_is_said_to_be(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = search()
    monkeypatch.setattr(mod, "find_lines", lambda *a: mod.Found(stopped="size", searched_lines=3))
    with pytest.raises(InvalidInput, match=r"too big to search whole .* only 3 of its 5 lines"):
        extract_local("a\nb\nc\nd\ne", False, "/x/")
    monkeypatch.setattr(mod, "find_lines", lambda *a: mod.Found(stopped="pattern"))
    with pytest.raises(InvalidInput, match=r"took over 1 s on this result: simplify it"):
        extract_local("a\nb\nc\nd\ne", False, "/x/")
