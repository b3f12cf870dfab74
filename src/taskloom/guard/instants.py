"""Timestamps read as instants, so "latest" and "earliest" order by time, not by text.

On one day, text orders ``…T10:00:00+02:00`` after ``…T09:00:00Z``, which it precedes, and
orders an epoch number or an RFC 2822 date (``Fri, 02 Jan … +0000``) not at all. A value
reads as an instant when it is:

- an ISO 8601 date or time (``YYYY-MM-DD``, ``YYYY-MM-DDThh:mm:ss+02:00``, ``…Z``), a
  space for the ``T``, a trailing ``UTC`` or ``GMT``;
- an RFC 2822 or HTTP date: ``Fri, 02 Jan YYYY hh:mm:ss +0000``, ``… GMT``;
- a common log format time: ``02/Jan/YYYY:hh:mm:ss +0200``, in brackets or not;
- a number of seconds, milliseconds or microseconds since the epoch (from 2001 to 2286),
  in a field whose name says it holds a time (``ts``, ``time``, ``date``, ``created_at``,
  ``startedAt``, ``epoch``, ``stamp``…).

A time written with no offset is read as UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import Any

from taskloom.guard.rank import parts_of

_TIME_WORDS = frozenset(
    {"ts", "time", "timestamp", "date", "at", "created", "updated", "modified", "started",
     "finished", "ended", "when", "epoch", "stamp", "seen", "datetime"}
)  # fmt: skip
_ISO = re.compile(r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?)?(?:Z|[+-]\d\d:?\d\d)?")
_ZONE_WORD = re.compile(r"\s*(?:UTC|GMT|Z)$")
_RFC2822 = re.compile(
    r"(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+\d\d:\d\d(?::\d\d)?"
    r"\s*(?:[+-]\d{4}|[A-Z]{1,5})?"
)
_CLF = re.compile(
    r"\[?(\d{2})/([A-Za-z]{3})/(\d{4}):(\d\d):(\d\d):(\d\d)(?:\s+([+-])(\d\d)(\d\d))?\]?"
)
_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
)}  # fmt: skip
_EPOCH_SCALES = ((1e9, 1e10, 1.0), (1e12, 1e13, 1e3), (1e15, 1e16, 1e6))
"""Ranges of an epoch number (seconds, milliseconds, microseconds from 2001 to 2286) and
the divisor that makes seconds of it."""


def time_field(key: str) -> bool:
    """Whether a field's name says it holds a time: ``ts``, ``created_at``, ``startedAt``."""
    return any(part in _TIME_WORDS for part in parts_of(key))


def instant(value: Any, key: str = "") -> float | None:
    """``value`` as seconds since the epoch (see the module docs), or ``None``; a number
    is read as one only in a field named ``key`` that says it holds a time."""
    if isinstance(value, str):
        return _from_text(value.strip())
    if isinstance(value, bool) or not isinstance(value, int | float) or not time_field(key):
        return None
    for low, high, per_second in _EPOCH_SCALES:
        if low <= value < high:
            return value / per_second
    return None


def _from_text(text: str) -> float | None:
    named = _ZONE_WORD.search(text)
    stamp = text[: named.start()] + "+00:00" if named else text
    if _ISO.fullmatch(stamp):
        try:
            return _seconds(datetime.fromisoformat(stamp))
        except ValueError:
            return None
    clf = _CLF.fullmatch(text)
    if clf is not None:
        return _from_clf(clf)
    if _RFC2822.fullmatch(text):
        try:
            return _seconds(parsedate_to_datetime(text))
        except (TypeError, ValueError, IndexError):
            return None
    return None


def _from_clf(found: re.Match[str]) -> float | None:
    day, month, year, hour, minute, second, sign, zh, zm = found.groups()
    number = _MONTHS.get(month.lower())
    if number is None:
        return None
    zone = UTC
    if sign:
        offset = timedelta(hours=int(zh), minutes=int(zm))
        zone = timezone(offset if sign == "+" else -offset)
    try:
        moment = datetime(
            int(year), number, int(day), int(hour), int(minute), int(second), tzinfo=zone
        )
    except ValueError:
        return None
    return moment.timestamp()


def _seconds(moment: datetime) -> float:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def instants(values: list[Any], key: str) -> list[float] | None:
    """Every value as an instant, or ``None`` when one does not read as one."""
    out = []
    for value in values:
        moment = instant(value, key)
        if moment is None:
            return None
        out.append(moment)
    return out
