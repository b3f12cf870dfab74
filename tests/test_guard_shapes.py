"""Tool outputs of shapes the guard meets less often: JSON after a byte order mark, deep
or wide JSON, odd keys, odd line breaks, one huge blob, scripts written right to left."""

from __future__ import annotations

import json
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.guard import GuardConfig, core

TIGHT = GuardConfig(threshold_tokens=60, compacted_max_tokens=10, preview_chars=200)
RECORDS = [{"id": i, "state": "open" if i % 3 else "closed", "name": f"n{i}"} for i in range(300)]


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("as_bytes", [False, True])
def test_json_after_a_byte_order_mark_is_json(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch, as_bytes: bool, large: bool
) -> None:
    if large:
        monkeypatch.setattr(core, "LARGE_JSON", 2_000)
    text = "\ufeff" + json.dumps({"items": RECORDS})
    output: Any = text.encode() if as_bytes else text
    g = tl.guard("t1", config=TIGHT)
    out = g.stash("pwsh", output)
    assert out.result_id and "JSON" in out.text
    answer = g.extract(out.result_id, "$.items[?(@.state=='closed')].id")
    assert "of 100 matches shown]" in answer
    assert '"name": "n299"' in g.read(out.result_id, path="$.items[299]")


def test_text_keeps_its_byte_order_mark(tl: Taskloom) -> None:
    text = "\ufeff" + "\n".join(f"line {i} of a log" for i in range(300))
    g = tl.guard("t1", config=TIGHT)
    rid = g.stash("log", text).result_id or ""
    assert g.read(rid, lines="1-1").split("\n")[1].startswith("\ufeffline 0")
