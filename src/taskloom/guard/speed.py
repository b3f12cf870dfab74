"""Words of speed and of size read as a rank by the field they measure: "which test was the
slowest?" asks for the record with the highest time taken, "which request was fastest?" for
the lowest, "which object is the largest?" for the highest size.

``slowest`` ranks highest first, ``fastest`` and ``quickest`` lowest first (the order
itself is :func:`~taskloom.guard.tally.extreme`'s). With no number field named by a word of
the question, the field ranked is the group's one number field whose name holds a word of
what the question's word measures: of duration (``time``, ``duration``, ``elapsed``,
``latency``, ``took``, ``ms``, ``seconds``: ``responseTime``, ``duration_ms``) for a word of
speed, of size (``size``, ``bytes``, ``length``) for ``largest``, ``biggest`` or
``smallest``; with none or several, the question is no ranking.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from taskloom.guard.rank import parts_of

_SPEED = re.compile(r"\b(?:slowest|fastest|quickest)\b", re.I)
_SIZE = re.compile(r"\b(?:largest|biggest|smallest)\b", re.I)
DURATION = frozenset({"time", "duration", "elapsed", "latency", "took", "ms", "seconds", "secs"})
SIZE = frozenset({"size", "bytes", "length"})


def measure(question: str) -> frozenset[str] | None:
    """The words of a field's name that the question's word of speed or size measures,
    else ``None``."""
    if _SPEED.search(question):
        return DURATION
    return SIZE if _SIZE.search(question) else None


def measured_field(
    question: str, names: Iterable[tuple[str, ...]], numeric: Callable[[tuple[str, ...]], bool]
) -> tuple[str, ...] | None:
    """The one field of ``names`` that ``numeric`` accepts and whose name holds a word of
    what the question measures, else ``None``."""
    words = measure(question)
    if words is None:
        return None
    found = [n for n in names if numeric(n) and set(parts_of(n[-1])) & words]
    return found[0] if len(found) == 1 else None
