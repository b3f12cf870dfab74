"""A JSON string of a megabyte is redacted by key in memory near its size: a repeat of
alternatives is possessive, so it holds no backtracking state for each character."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

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
