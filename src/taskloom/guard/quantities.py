"""Sizes and percentages written for people (``1.2G``, ``980Mi``, ``2.3 GB``, ``87%``) read
as quantities, so a table's rows can be ranked and compared by them.

A size is a number and a unit: ``K``, ``M``, ``G``, ``T``, ``P`` alone, or with ``i`` or
``iB`` (``Ki``, ``MiB``), are powers of 1024, as ``du -h``, ``df -h``, ``ls -lh`` and
``kubectl`` write them; ``kB``, ``KB``, ``MB``, ``GB``, ``TB``, ``PB`` are powers of 1000,
as written; ``B`` is bytes. A plain whole number in a column of sizes is bytes (``du -h``
writes ``512`` for 512 bytes). A column is one of sizes when every cell is a size and one
has a unit, unless it mixes the 1024 letters alone with 1000 ``…B`` units (which convention
its bare letters follow is a guess); a column of percentages when every cell is a number
and ``%``.
"""

from __future__ import annotations

import re
from typing import Any

from taskloom.guard.table import Table

_SIZE = re.compile(r"(\d+(?:\.\d+)?) ?([KMGTP]i?B?|kB|B)?", re.I)
_BINARY = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)%")
BYTES, PERCENT = "bytes", "percent"


def size(text: str) -> tuple[float, str] | None:
    """``text`` as bytes and the convention its unit follows (``"1024"``, ``"1000"``, or
    ``""`` for no unit), or ``None`` when it is no size."""
    m = _SIZE.fullmatch(text.strip())
    if m is None:
        return None
    number, unit = float(m.group(1)), m.group(2) or ""
    if unit.upper() == "B" or not unit:
        return number, ""
    letter = unit[0].lower()
    if unit[0] not in "KMGTPk" or (unit[0] == "k" and unit != "kB"):
        return None  # "1.2g", "5mb": no unit as tools write them
    rest = unit[1:]
    if rest == "B":
        return number * 1000 ** ("kmgtp".index(letter) + 1), "1000"
    if rest in ("", "i", "iB"):
        return number * _BINARY[letter], "1024"
    return None


def percent(text: str) -> float | None:
    m = _PERCENT.fullmatch(text.strip())
    return None if m is None else float(m.group(1))


def column_kind(values: list[Any]) -> str | None:
    """:data:`BYTES`, :data:`PERCENT` or ``None`` for a column's cells."""
    cells = [str(v) for v in values if str(v).strip() not in ("", "-")]
    if not cells:
        return None
    if all(percent(c) is not None for c in cells):
        return PERCENT
    sizes = [size(c) for c in cells]
    if any(s is None for s in sizes):
        return None
    units = {s[1] for s in sizes if s is not None}
    if units <= {""} or {"1024", "1000"} <= units:
        return None
    return BYTES


def value(text: Any, kind: str) -> float | None:
    """A cell of a column of ``kind`` as its quantity (bytes, or the percentage)."""
    if kind == PERCENT:
        return percent(str(text))
    read = size(str(text))
    return None if read is None else read[0]


def quantity_columns(table: Table) -> dict[str, str]:
    """The columns of ``table`` that hold sizes or percentages, with their kind."""
    if not table.records:
        return {}
    out = {}
    for name in table.records[0]:
        kind = column_kind([r.get(name, "") for r in table.records])
        if kind is not None:
            out[name] = kind
    return out


_LISTED = re.compile(r"(\S+)\t(.+)")


def sized_listing(lines: list[str]) -> Table | None:
    """A listing with no header whose every line is a size, a tab and a name, as ``du``
    writes it: records ``size`` and ``path``; else ``None``."""
    out = Table("size listing", header=0)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        m = _LISTED.fullmatch(line)
        if m is None:
            return None
        out.records.append({"size": m.group(1), "path": m.group(2)})
        out.spans.append((number, number))
    if len(out.records) < 2 or column_kind([r["size"] for r in out.records]) != BYTES:
        return None
    return out
