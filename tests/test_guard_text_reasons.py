"""A JSONPath asked of JSON kept as text is told why it is text and what still reads it."""

from __future__ import annotations

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.guard.jsontext import why_text

PAD = ', "pad": "' + "y" * 20_000 + '"'
"""Enough to be stashed, not shown."""
STILL = "A /regex/ or plain words search it, and read_result(lines=...) or page=... reads it"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[" * 5_000 + "]" * 5_000, "it nests deeper than 128 levels"),
        ('{"a": ' + "[" * 300 + "]" * 300 + PAD + "}", "it nests deeper than 128 levels"),
        ('{"a": ' + "9" * 10_000 + PAD + "}", "it holds an integer of 10,000 digits (99999"),
        (
            '{"a": 123456789012345678901234567890' + PAD + "}",
            "it holds an integer beyond 64 bits (1234",
        ),
        (
            '{"a": 0.30000000000000000001' + PAD + "}",
            "it holds 0.30000000000000000001, which would be written back as 0.3",
        ),
        ('{"a": NaN' + PAD + "}", "it holds NaN, which is not JSON"),
        ('{"a": 1, "a": 2' + PAD + "}", "an object in it repeats the key 'a'"),
        ('{"a": 1,' + PAD + ", }", "it is not valid JSON: Expecting property name"),
    ],
)
def test_a_jsonpath_on_json_kept_as_text_names_the_reason(
    tl: Taskloom, text: str, why: str
) -> None:
    """The answer was "this result is text, not JSON", which never said why."""
    g = tl.guard("t1")
    out = g.stash("api", text + " " * 20_000)
    assert out.mode == "stashed" and "Shape: text" in out.text
    rid = out.result_id or ""
    for ask in ("extract", "read"):
        with pytest.raises(InvalidInput) as caught:
            g.extract(rid, "$.a") if ask == "extract" else g.read(rid, path="$.a")
        message = str(caught.value)
        assert "this result is kept as text, not JSON: " + why in message, message
        assert STILL in message and len(message) < 600
    assert g.read(rid, lines="1").startswith("[lines 1-1 of 1")  # what still works does


def test_plain_text_is_simply_text() -> None:
    assert why_text("build ok\n[1/3] done") is None
    assert why_text('{"a": [1, 2]}') is None
