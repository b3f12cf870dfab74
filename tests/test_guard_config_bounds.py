"""A ``GuardConfig`` value that would crash the guard or mislead the model is refused when
the config is made, with the field named."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.guard import GuardConfig


@pytest.mark.parametrize(
    ("over", "said"),
    [
        ({"breaker_cooldown": timedelta(days=999_999_999)}, "breaker_cooldown must be from 0"),
        ({"breaker_cooldown": timedelta(seconds=-1)}, "breaker_cooldown must be from 0"),
        ({"ttl": timedelta(days=3_000_000)}, "ttl must be from 1 minute"),
        ({"ttl": timedelta(0)}, "ttl must be from 1 minute"),
        ({"ttl": timedelta(seconds=-5)}, "ttl must be from 1 minute"),
        ({"ttl": timedelta(seconds=59)}, "ttl must be from 1 minute"),
        ({"preview_chars": -100}, "preview_chars must be an integer of at least 0"),
        ({"compacted_max_tokens": -1}, "compacted_max_tokens must be an integer of at least 0"),
        ({"summary_max_tokens": -1}, "summary_max_tokens must be an integer of at least 0"),
        ({"quota_bytes": 0}, "quota_bytes must be an integer of at least 1"),
        ({"max_entries": 0}, "max_entries must be an integer of at least 1"),
        ({"breaker_trips_after": 0}, "breaker_trips_after must be an integer of at least 1"),
    ],
)
def test_a_value_out_of_its_bounds_is_refused(over: dict[str, Any], said: str) -> None:
    """A billion-day cooldown or a 3-million-day TTL overflowed every later wrap; a TTL of
    zero told the model to read a result already expired; a negative preview was shown as
    "Preview (first -66 …"."""
    with pytest.raises(InvalidInput, match=said):
        GuardConfig(**over)


@pytest.mark.parametrize(
    "over",
    [
        {"ttl": timedelta(minutes=1)},
        {"ttl": timedelta(days=3650)},
        {"breaker_cooldown": timedelta(0)},
        {"breaker_cooldown": timedelta(days=3650)},
        {"preview_chars": 0, "compacted_max_tokens": 0, "summary_max_tokens": 0},
    ],
)
def test_the_bounds_themselves_are_accepted_and_work(tl: Taskloom, over: dict[str, Any]) -> None:
    g = tl.guard("t1", GuardConfig(threshold_tokens=50, **over))
    out = g.stash("logs", "\n".join(f"line {i} of the log" for i in range(400)))
    assert out.result_id and g.read(out.result_id, lines="2-2").endswith("line 1 of the log")
    assert not g.breaker()["open"]
