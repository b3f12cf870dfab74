"""The text a result enters history as never changes once written, compacted or stashed."""

from __future__ import annotations

import json

from taskloom.client import Taskloom
from taskloom.guard import GuardConfig


def repos(n: int = 8) -> str:
    repo = {"id": 1, "url": "https://api.x/r/1", "hooks_url": "https://api.x/r/1/hooks"}
    return json.dumps([{"n": i, "repo": repo, "x": None, "pad": "p" * 40} for i in range(n)])


def test_a_compacted_header_is_returned_as_first_written(tl: Taskloom) -> None:
    """The compacted header was rebuilt on every wrap: a re-wrap under another quota or cap
    gave another text for the same result in the same thread, breaking prompt caches."""
    first = tl.guard("t1", GuardConfig(threshold_tokens=150, compacted_max_tokens=400))
    shown = first.stash("api", repos())
    assert shown.mode == "compacted"
    tight = GuardConfig(threshold_tokens=150, compacted_max_tokens=400, quota_bytes=500)
    again = tl.guard("t1", tight).stash("api", repos())
    assert "larger than this thread's stash quota" not in again.text
    assert (again.text, again.mode, again.result_id) == (shown.text, "compacted", shown.result_id)
    stashing = GuardConfig(threshold_tokens=150, compacted_max_tokens=20)
    assert tl.guard("t1", stashing).stash("api", repos()) == shown


def test_a_placeholder_stays_a_placeholder_when_it_would_now_be_compacted(tl: Taskloom) -> None:
    stashing = GuardConfig(threshold_tokens=150, compacted_max_tokens=20)
    first = tl.guard("t1", stashing).stash("api", repos())
    assert first.mode == "stashed"
    roomy = GuardConfig(threshold_tokens=150, compacted_max_tokens=400)
    assert tl.guard("t1", roomy).stash("api", repos()) == first


def build_log(lines: int = 2_000) -> str:
    body = [f"step {i:05d}: compiled module_{i}.c" for i in range(lines)]
    return "\n".join(["BUILD START", *body, "BUILD FAILED: 3 errors"])


def preview_of(text: str) -> tuple[str, str]:
    """The placeholder's preview header line and the preview under it."""
    after = text.split("\nPreview (", 1)[1]
    header, rest = after.split("\n", 1)
    return "Preview (" + header, rest.split("\n\nThe full output is stored.", 1)[0]


def test_a_text_preview_header_says_it_shows_the_start_and_the_end(tl: Taskloom) -> None:
    """The header said "Preview (first 1,503 chars):" over 1,000 first chars, "…" and the
    500 last: the model was told it saw the start when it also saw the end."""
    out = tl.guard("t1").stash("bash", build_log())
    assert out.mode == "stashed"
    header, preview = preview_of(out.text)
    assert header == "Preview (first 1,000 and last 500 chars, … between them):"
    assert preview.startswith("BUILD START\n") and preview.endswith("BUILD FAILED: 3 errors")
    head, tail = preview.split("\n…\n")
    assert (len(head), len(tail)) == (1_000, 500)


def test_a_json_preview_header_says_first_chars_as_it_is(tl: Taskloom) -> None:
    out = tl.guard("t1").stash("api", repos(400))
    assert out.mode == "stashed"
    header, preview = preview_of(out.text)
    assert header == "Preview (first 1,500 chars):" and len(preview) == 1_500
    assert preview.startswith('[{"n":0,')


def test_a_text_shorter_than_the_preview_is_shown_once(tl: Taskloom) -> None:
    """Its first and last chars overlapped: the same lines were shown twice."""
    log = build_log(80)
    out = tl.guard("t1", GuardConfig(threshold_tokens=50, preview_chars=5_000)).stash("bash", log)
    assert out.mode == "stashed"
    header, preview = preview_of(out.text)
    assert header == f"Preview (first {len(log):,} chars):" and preview == log


def test_a_tiny_preview_is_the_start_not_the_whole_output(tl: Taskloom) -> None:
    """With ``preview_chars`` under 3 the tail was ``text[-0:]``: the whole output."""
    out = tl.guard("t1", GuardConfig(threshold_tokens=50, preview_chars=2)).stash(
        "bash", build_log()
    )
    assert preview_of(out.text) == ("Preview (first 2 chars):", "BU")


def test_a_final_line_break_ends_the_last_line_and_starts_none(tl: Taskloom) -> None:
    """A 3,000-line file (``wc -l``) was stashed as 3,001 lines, the last one empty."""
    text = "".join(f"line {i} " + "word " * 10 + "\n" for i in range(3000))
    g = tl.guard("t1")
    out = g.stash("read_file", text)
    assert out.result_id and "3,000 lines]" in out.text, out.text[:300]
    last = g.read(out.result_id, lines="2999-3001")
    assert "of 3000" in last and "line 2999 word" in last, last


def test_the_shape_line_counts_lines_as_the_header_and_read_result_do(tl: Taskloom) -> None:
    """The header said 3,000 lines and the Shape line under it 3,001: the model was told two
    sizes of one output, and the larger one is a line read_result does not have."""
    text = "".join(f"line {i} " + "word " * 10 + "\n" for i in range(3000))
    out = tl.guard("t1").stash("read_file", text)
    assert "3,000 lines]" in out.text
    assert "\nShape: text, 3,000 lines (longest 60 chars)\n" in out.text, out.text[:300]
    one = tl.guard("t1").stash("bash", "x" * 200_000 + "\n")
    assert "1 line]\nShape: text, 1 line (longest 200,000 chars)\n" in one.text, one.text[:300]


def test_a_placeholder_counts_one_thing_in_the_singular(tl: Taskloom) -> None:
    """A one-line log was stashed as "· 1 lines]" over "Shape: text, 1 lines", and a one-item
    JSON answer as "JSON array of 1 items", "dropped: 1 nulls" and "1 credential-like
    value(s)": every count the placeholder prints now agrees with its number."""
    g = tl.guard("t1", GuardConfig(threshold_tokens=150, compacted_max_tokens=20))
    one_line = g.stash("bash", "x" * 200_000 + "\n")
    assert " · 1 line]\nShape: text, 1 line (longest 200,000 chars)\n" in one_line.text
    item = {"blob": "word " * 400, "gone": None, "password": "hunter2-very-secret"}
    one_item = g.stash("api", json.dumps([item]))
    assert one_item.mode == "stashed"
    assert "\nShape: JSON array of 1 item (object); item keys: blob, gone, password\n" in (
        one_item.text
    )
    assert "\nPreview is compacted JSON (dropped: 1 null).\n" in one_item.text
    assert "\n1 credential-like value replaced by [redacted]" in one_item.text
    one_key = g.stash("api", json.dumps({"blob": "word " * 400}))
    assert "\nShape: JSON object with 1 key: blob\n" in one_key.text
    wide = g.stash("api", json.dumps({f"k{i:02d}": "word " * 20 for i in range(25)}))
    assert "\nShape: JSON object with 25 keys: k00, k01, " in wide.text
    assert ", k23, … +1 key\n" in wide.text
    many = g.stash("api", json.dumps([item, item]))
    assert (
        "JSON array of 2 items" in many.text
        and "dropped: 2 nulls, 1 repeated sub-object)" in many.text
    )
    assert "2 credential-like values replaced" in many.text
