"""JSON read for redaction: a string of a megabyte in memory near its size (a repeat of
alternatives is possessive, so it holds no backtracking state for each character), and a
large result's members or JSON Lines with one decoder."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from taskloom.guard import jsondoc
from taskloom.guard.bulk import redact_large
from taskloom.guard.jsontext import parse_large
from taskloom.guard.redact_json import redact_json_output

N = 1_000_000


def _peak(call: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        out = call()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "text",
    [
        '{"password": "x", "n": 123456789012345678901234567890, "blob": "' + "a" * N + '"}',
        '{"password": "x", "blob": "' + "a" * N + '"}\n{"a": 1}',
    ],
    ids=["document-kept-as-text", "json-lines"],
)
def test_a_long_json_string_is_redacted_by_key_in_memory_near_its_size(text: str) -> None:
    (out, n), peak = _peak(lambda: redact_json_output(text))
    assert n == 1 and '"password": "[redacted]"' in out
    assert peak < 6 * len(text) + (1 << 20)


def test_a_large_result_and_json_lines_are_read_with_one_decoder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each member of a large result and each line of JSON Lines is read with a decoder
    built once, not one built for it."""
    built = 0
    init = json.JSONDecoder.__init__

    def counting(self: json.JSONDecoder, *args: Any, **kwargs: Any) -> None:
        nonlocal built
        built += 1
        init(self, *args, **kwargs)

    monkeypatch.setattr(json.JSONDecoder, "__init__", counting)
    monkeypatch.setattr(jsondoc, "SMALL", 600)
    text = json.dumps([{"id": i, "password": f"p{i}"} for i in range(2_000)])
    checked = parse_large(text)
    assert checked is not None
    _text, n = redact_large(checked[0])
    assert n == 2_000
    lines = "\n".join(json.dumps({"id": i, "password": f"p{i}"}) for i in range(2_000))
    assert redact_json_output(lines)[1] == 2_000
    assert built <= 2
