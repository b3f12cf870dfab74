"""Large JSON results are read in place: the same answers as a result parsed whole, on
every backend. The thresholds are lowered so small fixtures take the large path."""

from __future__ import annotations

import gc
import json
import random
import time
import tracemalloc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.guard import GuardConfig, core, jsondoc, tokens
from taskloom.guard.jsondoc import JsonDoc, LazyLines, line_count, pretty_lines
from taskloom.guard.jsonpath import find

CONFIG = GuardConfig(threshold_tokens=200, compacted_max_tokens=100, preview_chars=300)


def records(n: int = 300) -> list[dict[str, Any]]:
    rng = random.Random(3)
    return [
        {
            "id": 1000 + i,
            "name": f"svc-{i}",
            "state": rng.choice(["up", "down", "degraded"]),
            "owner": {"login": f"team{i % 7}", "id": i % 7},
            "tags": [{"k": "zone", "v": f"z{i % 3}"}],
            "note": None if i % 5 else "ünïcode ✓",
            "score": i / 4,
        }
        for i in range(n)
    ]


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every container over 600 characters is lazy, every result over 2,000 large."""
    monkeypatch.setattr(jsondoc, "SMALL", 600)
    monkeypatch.setattr(core, "LARGE_JSON", 2_000)
    yield


def random_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice([1, -2.5, 'a"b', "ü", None, True, [], {}])
    if roll < 0.7:
        return {f"k{i}-x": random_value(rng, depth + 1) for i in range(rng.randrange(6))}
    return [random_value(rng, depth + 1) for _ in range(rng.randrange(6))]


def _peaks(calls: dict[str, Callable[[], str]], peaks: dict[str, int]) -> dict[str, str]:
    """Each call's reply; its peak of traced memory above what was held before it goes into
    ``peaks`` (tracemalloc must be tracing)."""
    replies = {}
    for name, call in calls.items():
        tracemalloc.reset_peak()
        held = tracemalloc.get_traced_memory()[0]
        replies[name] = call()
        peaks[name] = tracemalloc.get_traced_memory()[1] - held
    return replies


@pytest.mark.parametrize("seed", range(40))
def test_a_lazy_document_reads_as_the_parsed_value(seed: int) -> None:
    rng = random.Random(seed)
    value = {"root": [random_value(rng) for _ in range(6)], "x": random_value(rng)}
    text = json.dumps(value, indent=rng.choice([None, 2]))
    lazy, whole = JsonDoc(text, small=40), JsonDoc(text, small=10**9)
    pretty = json.dumps(value, indent=2, ensure_ascii=False).split("\n")
    assert list(pretty_lines(lazy.root())) == pretty and line_count(lazy.root()) == len(pretty)
    lines = LazyLines(lambda: pretty_lines(lazy.root()), len(pretty))
    assert lines[3:9] == pretty[3:9] and lines[1] == pretty[1] and lines[-1] == pretty[-1]
    assert [p for p, _v in lazy.walk()] == [p for p, _v in whole.walk()]
    paths = [p for p, _v in find(value, "$..*")]
    assert [p for p, _v in find(lazy.root(), "$..*")] == paths
    assert [p for p, _v in find(lazy.root(), "$..[?@['k0-x']]")] == [
        p for p, _v in find(value, "$..[?@['k0-x']]")
    ]


def test_a_large_result_answers_as_a_small_one(tl: Taskloom, large: None) -> None:
    text = json.dumps(records(), indent=2)
    g = tl.guard("t1", CONFIG)
    big = g.stash("api", text)
    assert big.mode == "stashed" and big.result_id
    assert f"{len(text.splitlines()):,} lines" in big.text
    assert "JSON array of 300 items (object)" in big.text
    rid = big.result_id
    assert '"login": "team5"' in g.read(rid, path="$[12].owner")
    page = g.read(rid, lines="10-14")
    assert page.split("\n")[1:] == text.split("\n")[9:14]
    count = g.extract(rid, "How many records have state down?")
    expected = sum(1 for r in records() if r["state"] == "down")
    assert f"Exact count: {expected} " in count
    assert '"name":"svc-123"' in g.extract(rid, "svc-123")


def test_a_large_result_is_redacted_in_place(tl: Taskloom, large: None) -> None:
    rows = records(100)
    rows[40]["password"] = "hunter2hunter2"
    rows[41]["url"] = "https://bob:s3cret@example.com/x"
    text = json.dumps(rows, indent=2)
    g = tl.guard("t1", CONFIG)
    out = g.stash("api", text)
    assert "credential-like values replaced" in out.text and out.result_id
    stored = g.read(out.result_id, path="$[40:42]")
    assert "hunter2" not in stored and "s3cret" not in stored and "[redacted]" in stored
    assert '"name": "svc-40"' in stored


def test_large_text_that_is_not_json_stays_text(tl: Taskloom, large: None) -> None:
    text = json.dumps(records(50))[:-1]  # one bracket short
    out = tl.guard("t1", CONFIG).stash("api", text)
    assert out.result_id and "text, 1 line (" in out.text


def test_a_page_of_a_filters_matches_reads_as_fast_as_finding_them(
    tl: Taskloom, large: None
) -> None:
    """Each match shown on a page was reached from a fresh index of the whole array: the
    page's 150 matches scanned the array 150 times, and a read_result(path=...) of a filter
    over 200,000 tiny records took five minutes (over 3,000, 3 s against 0.2 s to find them).
    """
    text = json.dumps([{"i": i, "t": "ab"[i % 2]} for i in range(3_000)])
    g = tl.guard("t1", CONFIG)
    rid = g.stash("api", text).result_id
    assert rid
    path = "$[?@.t=='b']"
    started = time.perf_counter()
    found = g.extract(rid, path)
    finding = time.perf_counter() - started
    started = time.perf_counter()
    page = g.read(rid, path=path)
    reading = time.perf_counter() - started
    assert "1,500 matches" in found and "1,500 matches" in page
    assert '$[1]: {\n  "i": 1,\n  "t": "b"\n}' in page
    assert reading < 3 * finding + 0.5, (reading, finding)


def test_the_shape_of_a_large_array_holds_no_copy_of_its_items(
    tl: Taskloom, large: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shape of a large array was read from a list holding a fresh ``{}`` for every item
    (a string item: the string itself): wrapping 200,000 tiny records (4.9 MB) peaked at
    18 MB, 14 of them that list. Items but the first object are shared stand-ins now."""
    items: list[Any] = [{"i": i, "t": "ab"[i % 2]} for i in range(20_000)]
    items[1:6] = ["s" * 50, 7, 2.5, None, [1, 2]]
    items[7] = True
    text = json.dumps(items)
    g = tl.guard("t1", CONFIG)
    g.stash("warm", json.dumps(records(30)))  # the vocabulary and the store, loaded once
    monkeypatch.setattr(tokens, "PIECE_CHARS", 1 << 14)  # the ids of a piece: small here
    tracemalloc.start()
    try:
        out = g.stash("api", text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    shape = (
        "JSON array of 20,000 items (array, bool, null, number, object, string); item keys: i, t"
    )
    assert f"Shape: {shape}\n" in out.text
    assert peak < 2.5 * len(text), (peak, len(text))  # it was 3.9 times


def test_a_text_of_many_short_lines_is_read_without_a_list_of_its_lines(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text result was split into a list of its lines to be measured, paged, read by line
    number and ranked: 200,000 JSON Lines records of 2.5 MB took 15 MB to wrap and 18 MB
    for each read. The lines are now cut from the text as they are read."""
    text = "".join(f'{{"i":{i}}}\n' for i in range(60_000))
    g = tl.guard("t1")
    g.stash("warm", "warm up\n" * 5_000)  # the vocabulary and the store, loaded once
    monkeypatch.setattr(tokens, "PIECE_CHARS", 1 << 14)  # the ids of a piece: small here
    peaks: dict[str, int] = {}
    tracemalloc.start()
    try:
        out = g.stash("events", text)
        peaks["wrap"] = tracemalloc.get_traced_memory()[1]
        rid = out.result_id or ""
        calls = {
            "page": lambda: g.read(rid, page=3),
            "lines": lambda: g.read(rid, lines="59990-60000"),
            "ranking": lambda: g.extract(rid, "59999"),
        }
        replies = _peaks(calls, peaks)
    finally:
        tracemalloc.stop()
    assert " · 60,000 lines]\nShape: text, 60,000 lines (longest 11 chars)\n" in out.text
    assert replies["lines"].split("\n")[1:] == [f'{{"i":{i}}}' for i in range(59_989, 60_000)]
    assert replies["ranking"].endswith('\n{"i":59998}\n{"i":59999}')
    assert all(peak < 2 * len(text) for peak in peaks.values()), (peaks, len(text))


def test_a_large_document_is_freed_as_soon_as_it_is_dropped() -> None:
    """A document that keeps the indexes of its large containers (to reach member after
    member without scanning again) must not keep the containers: each refers to its
    document, and the cycle would hold the stored text until the cycle collector ran."""
    doc = JsonDoc(json.dumps({"items": records(300), "more": records(200)}), small=600)
    assert doc.get(("items", 12, "owner", "login")) == "team5"
    assert doc.get(("more", 150, "name")) == "svc-150"
    gone = weakref.ref(doc)
    gc.disable()
    try:
        del doc
        assert gone() is None
    finally:
        gc.enable()


def test_counting_in_a_large_map_of_records_costs_about_what_reading_it_does(
    tl: Taskloom, large: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A map of records keyed by name (``{"k0": {...}, …}``) was also taken as one record of
    the group above it, with a field for every member and every member's field: a count
    over 200,000 members (7 MB) peaked at 426 MB, nine times a read by path; the shape
    made a skeleton of every member to print the first 24 keys."""
    value = {f"k{i}": {"i": i, "t": "ab"[i % 2]} for i in range(20_000)}
    g = tl.guard("t1", CONFIG)
    g.stash("warm", json.dumps(records(30)))  # the vocabulary and the store, loaded once
    monkeypatch.setattr(tokens, "PIECE_CHARS", 1 << 14)  # the ids of a piece: small here
    peaks: dict[str, int] = {}
    tracemalloc.start()
    try:
        out = g.stash("api", json.dumps(value))
        rid = out.result_id or ""
        calls = {
            "read": lambda: g.read(rid, path="$.k19999"),
            "count": lambda: g.extract(rid, "How many records have t b?"),
        }
        replies = _peaks(calls, peaks)
    finally:
        tracemalloc.stop()
    assert "Shape: JSON object with 20,000 keys: k0{i, t}, k1{i, t}," in out.text
    assert "… +19,976 keys\n" in out.text
    assert "Exact count: 10,000 (JSONPath $[?@.t=='b']" in replies["count"]
    assert peaks["count"] < 3 * peaks["read"], peaks  # it was ten times


def test_the_groups_of_a_large_map_parse_each_member_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a large object is a map of records is read off where its members start."""
    from taskloom.guard.groups import groups

    n = 3_000
    doc = JsonDoc(json.dumps({f"key-{i}": {"id": i, "s": "x"} for i in range(n)}), small=600)
    root = doc.root()
    parsed = 0
    node = JsonDoc.node

    def counting(self: JsonDoc, start: int, end: int) -> Any:
        nonlocal parsed
        parsed += 1
        return node(self, start, end)

    monkeypatch.setattr(JsonDoc, "node", counting)
    found = groups(doc)
    assert found[0].records == n and root is not None
    assert parsed < 1.5 * n
