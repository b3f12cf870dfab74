"""The items of an array that holds no object are rows: a count question counts them."""

from __future__ import annotations

from typing import Any

import pytest

from taskloom.client import Taskloom

MATRIX = [[i, i * 2, f"v{i}"] for i in range(5_000)]


@pytest.mark.parametrize(
    ("value", "question", "count", "path"),
    [
        (MATRIX, "how many rows", 5_000, "$[*]"),
        (MATRIX, "how many rows are there?", 5_000, "$[*]"),
        ({"range": "A1:C4000", "values": MATRIX[:4_000]}, "how many rows", 4_000, "$.values[*]"),
        ([f"name-{i}" for i in range(20_000)], "how many items are there?", 20_000, "$[*]"),
        ({"ids": list(range(9_000)), "next": None}, "how many ids", 9_000, "$.ids[*]"),
    ],
)
def test_an_array_of_arrays_or_scalars_has_rows_to_count(
    tl: Taskloom, value: Any, question: str, count: int, path: str
) -> None:
    """A matrix answered "how many rows" with "no list of records to count", though
    ``$[*]`` read every row."""
    g = tl.guard("t1")
    out = g.stash("sheet", value)
    assert out.mode == "stashed"
    answer = g.extract(out.result_id or "", question)
    assert f"Exact count: {count:,} (JSONPath {path}, no condition" in answer, answer[:400]


def test_records_with_lists_of_names_still_count_the_records(tl: Taskloom) -> None:
    issues = [{"number": i, "state": "open" if i % 3 else "closed", "tags": ["a", "b"]}
              for i in range(3_000)]  # fmt: skip
    g = tl.guard("t1")
    rid = g.stash("issues", issues).result_id or ""
    assert "Exact count: 3,000 (JSONPath $[*]," in g.extract(rid, "how many issues are there?")
    assert "Exact count: 1,000 " in g.extract(rid, "how many issues have state closed?")
