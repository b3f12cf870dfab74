"""One rule for line breaks across the guard: ``\\n``, ``\\r\\n`` and a lone ``\\r`` each end
a line, wherever lines are counted, numbered, read or searched."""

from __future__ import annotations

import re
import time
import tracemalloc
from collections.abc import Callable

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.domain.lines import TextLines, count_breaks, line_total, text_end
from taskloom.guard import tokens
from taskloom.guard.clean import clean
from taskloom.guard.summarize import chunk_lines
from tests.test_guard_redact import stored_contents

BREAKS = ("\n", "\r\n", "\r")


def mixed(count: int) -> tuple[str, list[str]]:
    """``count`` lines ended in turn by LF, CRLF and a lone CR, and the lines themselves."""
    lines = [f"row {i} status {'ok' if i % 7 else 'FAIL'}" for i in range(1, count + 1)]
    return "".join(line + BREAKS[i % 3] for i, line in enumerate(lines)), lines


@pytest.mark.parametrize(
    "text",
    ["", "a", "a\n", "a\r", "a\r\n", "\r\n\r\n", "a\n\rb", "a\r\rb\r\n", "\r", "x\r\ny\rz\n\n"],
)
def test_the_rule_is_that_of_splitlines_for_lf_crlf_and_cr(text: str) -> None:
    want = text.splitlines() or [""]
    assert list(TextLines(text)) == want
    assert line_total(text) == len(want)
    assert count_breaks(text, 0, text_end(text)) == len(want) - 1


def test_a_progress_bar_redrawn_with_cr_has_a_line_per_redraw(tl: Taskloom) -> None:
    """A text whose lines end in a lone \\r was one line: lines="3-4" was past the end, the
    placeholder said 1 line, and a match was shown as a window of one huge line."""
    text = "".join(f"\rDownloading {i:3d}% [{'#' * (i // 4):<25}]" for i in range(101)) * 40
    g = tl.guard("t1")
    out = g.stash("pip", text)
    total = len(text.splitlines())
    assert f" · {total:,} lines]\nShape: text, {total:,} lines (longest 44 chars)" in out.text
    rid = out.result_id or ""
    read = g.read(rid, lines="3-4")
    assert read.startswith(f"[lines 3-4 of {total};")
    assert read.split("\n", 1)[1] == f"Downloading   1% [{' ' * 25}]\rDownloading   2% [{' ' * 25}]"
    answer = g.extract(rid, "/^Downloading 100%/")
    assert "--- line 102\nDownloading 100% [#########################]" in answer
    assert "chars" not in answer  # a line of its own, not a window of one huge line


def test_mixed_line_breaks_agree_end_to_end(tl: Taskloom) -> None:
    text, lines = mixed(3_000)
    g = tl.guard("t1")
    out = g.stash("ci", text)
    longest = max(map(len, lines))
    assert f" · 3,000 lines]\nShape: text, 3,000 lines (longest {longest} chars)" in out.text
    rid = out.result_id or ""
    for first in (1, 2, 3, 1_499, 2_998):
        read = g.read(rid, lines=f"{first}-{first + 2}")
        body = read.split("\n", 1)[1]
        assert body.splitlines() == lines[first - 1 : first + 2], first
        assert text.index(lines[first - 1]) >= 0 and body in text  # exact, breaks included
    with pytest.raises(InvalidInput, match="the result has 3000 lines"):
        g.read(rid, lines="3001-")
    fails = [n for n, line in enumerate(lines, 1) if line.endswith("FAIL")]
    answer = g.extract(rid, "/FAIL$/")
    assert f"of {len(fails)} matches shown]" in answer.split("\n")[0]
    shown = [int(n) for n in re.findall(r"--- line (\d+)\n", answer)]
    assert shown == fails[: len(shown)] and shown
    assert all(f"--- line {n}\n{lines[n - 1]}\n" in answer + "\n" for n in shown)
    assert "--- line 1500\nrow 1500 status ok" in g.extract(rid, r"/^row 1500 status ok$/")
    assert "no match" in g.extract(rid, r"/ok\r?row/")  # a match never spans a line break


def test_the_llm_chunks_number_lines_as_reads_do() -> None:
    text, lines = mixed(90)
    chunks = chunk_lines(text, 60, len)
    assert chunks[-1].last_line == len(lines)
    for chunk in chunks:
        assert chunk.text.split("\n") == lines[chunk.first_line - 1 : chunk.last_line]


def test_a_200k_line_text_with_mixed_breaks_is_read_in_bounded_memory_and_time(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, lines = mixed(200_000)
    g = tl.guard("t1")
    g.stash("warm", "warm up\n" * 5_000)  # the vocabulary and the store, loaded once
    monkeypatch.setattr(tokens, "PIECE_CHARS", 1 << 14)  # the ids of a piece: small here
    out = g.stash("events", text)
    assert " · 200,000 lines]\nShape: text, 200,000 lines" in out.text
    rid = out.result_id or ""
    calls: dict[str, Callable[[], str]] = {
        "lines": lambda: g.read(rid, lines="199998-200000"),
        "page": lambda: g.read(rid, page=2),
        "regex": lambda: g.extract(rid, "/^row 150001 /"),
    }
    replies: dict[str, str] = {}
    peaks: dict[str, int] = {}
    seconds: dict[str, float] = {}
    tracemalloc.start()
    try:
        for name, call in calls.items():
            tracemalloc.reset_peak()
            held = tracemalloc.get_traced_memory()[0]
            began = time.monotonic()
            replies[name] = call()
            seconds[name] = time.monotonic() - began
            peaks[name] = tracemalloc.get_traced_memory()[1] - held
    finally:
        tracemalloc.stop()
    assert replies["lines"].split("\n", 1)[1].splitlines() == lines[-3:]
    assert "--- line 150001\nrow 150001 status ok" in replies["regex"]
    assert all(peak < 2 * len(text) for peak in peaks.values()), (peaks, len(text))
    assert all(s < 10 for s in seconds.values()), seconds


@pytest.mark.parametrize("end", BREAKS)
def test_json_lines_ended_by_crlf_or_a_lone_cr_have_every_record_redacted(
    tl: Taskloom, end: str
) -> None:
    """Records were looked for between LF line breaks only: a lone-CR JSON Lines log was one
    line, parsed as no JSON, and stored with every password."""
    records = [
        f'{{"id": {i}, "user": "u{i}", "password": "hunter{i}", "note": "{"n" * 40}"}}'
        for i in range(400)
    ]
    text = end.join(records) + end
    g = tl.guard("t1")
    out = g.stash("logs", text)
    assert out.mode == "stashed"
    assert "400 credential-like values replaced" in out.text
    rid = out.result_id or ""
    shown = out.text + g.read(rid, lines="1-3") + g.extract(rid, "/password/")
    assert "hunter" not in shown + stored_contents(tl)
    first = g.read(rid, lines="1-1").split("\n", 1)[1]
    assert first == records[0].replace("hunter0", "[redacted]")


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_an_html_documents_cleaned_lines_are_the_same_whatever_ends_them(end: str) -> None:
    """Cleaning stripped and collapsed lines split at LF only: a lone-CR page kept its
    indentation and runs of blank lines, and its lines' trailing spaces."""
    lines = ["<!doctype html>", "<html><body>", "  Total: 3  ", "", "", "", "  done  ", "<ul>"]
    lines += ["<li>a</li>", "<li>b</li>", "</ul></body></html>"]
    want = clean("\n".join(lines))
    assert clean(end.join(lines)) == want
    assert want.text == "Total: 3\n\ndone\n\na\n\nb"
