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
