"""Lines of ``key=value`` pairs read as records: the largest run of them in a text.

A stats dump writes one record a line as pairs, often after a name: Redis ``INFO``'s
``cmdstat_get:calls=12,usec=40,failed_calls=0`` and ``db0:keys=10,expires=2``, logfmt's
``level=warn dur=12ms path=/a``, HAProxy's or a driver's counters. Such a run sits among
other lines (a section's ``# Stats`` heading, single settings), so the text is no table as
a whole, yet the run is: each line a record of its pairs, the name before them (``cmdstat_get``,
split at ``:``) its ``name`` field.

A run is consecutive lines of two or more pairs each, separated by ``,`` or whitespace, all
with the same keys; it reads as the text's records when it holds at least :data:`MIN_RUN`
lines and either at least half of the text's non-blank lines or every line to the text's
end (a closing summary: a playbook's recap, ``host : ok=5 changed=1 failed=0``, the name
before a spaced ``:``), so a log with a few such lines among its events is not taken for
one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MIN_RUN = 5
_LINE = re.compile(
    r"[ \t]*+(?:(?P<name>[\w.|/@-]++)(?:[ \t]*+:[ \t]*+|=)(?=[\w.-]++=))?"
    r"(?P<pairs>[\w.-]++=[^,\s]*+(?:(?:,[ \t]*+|[ \t]++)[\w.-]++=[^,\s]*+)++)[ \t\r]*+"
)
_PAIR = re.compile(r"([\w.-]++)=([^,\s]*+)")


def _record(line: str, cell: Callable[[str], Any]) -> dict[str, Any] | None:
    m = _LINE.fullmatch(line)
    if m is None:
        return None
    record: dict[str, Any] = {}
    if m.group("name"):
        record["name"] = m.group("name")
    for key, value in _PAIR.findall(m.group("pairs")):
        if key in record:
            return None
        record[key] = cell(value)
    return record


def pair_records(
    lines: list[str], cell: Callable[[str], Any]
) -> tuple[list[dict[str, Any]], list[tuple[int, int]]] | None:
    """The records of the largest run of pair lines in ``lines`` and each one's line
    (1-based), or ``None`` when there is no run to read (see the module)."""
    best: tuple[int, int] = (0, 0)
    start, keys = 0, None
    records: list[dict[str, Any] | None] = [_record(line, cell) for line in lines]
    for i, record in enumerate([*records, None]):
        if record is not None and keys == record.keys():
            continue
        if keys is not None and i - start > best[1] - best[0]:
            best = (start, i)
        start, keys = i, (record.keys() if record is not None else None)
    first, stop = best
    filled = sum(1 for line in lines if line.strip())
    closing = not any(line.strip() for line in lines[stop:])
    if stop - first < MIN_RUN or (2 * (stop - first) < filled and not closing):
        return None
    run = [r for r in records[first:stop] if r is not None]
    return run, [(i + 1, i + 1) for i in range(first, stop)]
