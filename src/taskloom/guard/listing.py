"""A file listing with no header read as a table: ``aws s3 ls --recursive``'s ``2024-06-03
14:02:11   52811 logs/app.json.gz`` lines.

Every non-blank line (a footer of up to :data:`FOOTER_LINES` lines after the last blank line
aside, ``Total Objects: 900``) is a date (``YYYY-MM-DD``), a time (``HH:MM`` or
``HH:MM:SS``), a whole number and a name, in that order, whitespace between: the records
``date``, ``time``, ``size`` and ``name``. The number of a dated listing of names is the
entry's size, as the tools that write this layout mean it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_LINE = re.compile(r"(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?)\s+(\d+)\s+(\S.*?)\s*")
FOOTER_LINES = 4
MIN_ROWS = 2


def dated_listing(
    lines: list[str], cell: Callable[[str], Any]
) -> tuple[list[dict[str, Any]], list[tuple[int, int]]] | None:
    """The listing's records and each one's line (1-based), or ``None`` when not every
    line before a short footer reads as one (see the module)."""
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    blank = max((i for i in range(end) if not lines[i].strip()), default=-1)
    if blank >= 0 and end - blank - 1 <= FOOTER_LINES:
        end = blank
    records: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    for number, line in enumerate(lines[:end], 1):
        if not line.strip():
            continue
        m = _LINE.fullmatch(line)
        if m is None:
            return None
        date, time, size, name = m.groups()
        records.append({"date": date, "time": time, "size": cell(size), "name": name})
        spans.append((number, number))
    return (records, spans) if len(records) >= MIN_ROWS else None
