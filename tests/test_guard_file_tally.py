"""A tally of the files a question names by the shape of their values: "which file has the
most hits?" over records whose file sits under another name, in a list of locations."""

from __future__ import annotations

import json
from collections import Counter

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask

FILES = ["pkg/io/read.rs", "pkg/io/write.rs", "bin/main.rs", "pkg/net/dial.rs"]


def _hits() -> list[dict[str, object]]:
    return [
        {
            "rule": f"lint/{('unused', 'shadow', 'cast')[i % 3]}",
            "spans": [{"at": {"doc": {"href": FILES[(i * i) % 4 if i % 5 else 0]}}}],
        }
        for i in range(200)
    ]


def test_the_file_is_the_one_field_of_file_paths_in_a_list_of_locations(tl: Taskloom) -> None:
    """No field is named "file": the question got the ranking of three records."""
    hits = _hits()
    counts = Counter(h["spans"][0]["at"]["doc"]["href"] for h in hits)  # type: ignore[index]
    top, n = counts.most_common(1)[0]
    (answer,) = ask(tl, json.dumps({"hits": hits}), "which file has the most hits?")
    assert "Tally of spans[*].at.doc.href" in answer and f'"{top}": {n}' in answer


def test_a_field_named_file_or_no_file_shaped_field_makes_no_file_tally(tl: Taskloom) -> None:
    named = [{"file": FILES[i % 4], "spans": [{"href": FILES[i % 3]}]} for i in range(90)]
    (answer,) = ask(tl, json.dumps({"hits": named}), "which file has the most hits?")
    assert "Tally of file " in answer
    plain = [{"rule": f"r{i % 4}", "spans": [{"href": f"rule {i}"}]} for i in range(90)]
    (answer,) = ask(tl, json.dumps({"hits": plain}), "which file has the most hits?")
    assert "Tally of" not in answer
