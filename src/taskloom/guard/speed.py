"""Words of speed read as a rank by a duration: "which test was the slowest?" asks for the
record with the highest time taken, "which request was fastest?" for the lowest.

``slowest`` ranks highest first, ``fastest`` and ``quickest`` lowest first. With no number
field named by a word of the question, the field ranked is the group's one number field
whose name holds a word of duration (``time``, ``duration``, ``elapsed``, ``latency``,
``took``, ``ms``, ``seconds``: ``responseTime``, ``time``, ``duration_ms``); with none or
several, the question is no ranking.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from taskloom.guard.rank import parts_of

_SLOW = re.compile(r"\bslowest\b", re.I)
_FAST = re.compile(r"\b(?:fastest|quickest)\b", re.I)
DURATION = frozenset({"time", "duration", "elapsed", "latency", "took", "ms", "seconds", "secs"})


def speed(question: str) -> bool | None:
    """``True`` (highest duration first) for ``slowest``, ``False`` for ``fastest`` or
    ``quickest``, else ``None``."""
    if _SLOW.search(question):
        return True
    return False if _FAST.search(question) else None


def duration_field(
    names: Iterable[tuple[str, ...]], numeric: Callable[[tuple[str, ...]], bool]
) -> tuple[str, ...] | None:
    """The one field of ``names`` that ``numeric`` accepts and whose name holds a word of
    duration, else ``None``."""
    found = [n for n in names if numeric(n) and set(parts_of(n[-1])) & DURATION]
    return found[0] if len(found) == 1 else None
