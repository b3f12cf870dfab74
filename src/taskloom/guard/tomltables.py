"""A TOML document's array of tables read as records: each ``[[package]]`` block of a lock
file is one record.

The array is the ``[[name]]`` header that occurs most often (at least twice). A record is
its block's ``key = value`` lines, up to the next header that is no sub-table of it; a
sub-table (``[package.dependencies]``) is an object under its last name; an inline array
or table is kept as its text, and one spread over several lines (a lock file's ``files =
[ … ]`` hashes) is read past, no field. A quoted string is its text, ``true``/``false`` a
boolean, a plain decimal a number. Each record spans its block's lines, so an answer shows
them as written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

_ARRAY = re.compile(r"\[\[\s*([\w.-]+)\s*\]\]\s*(?:#.*)?")
_TABLE = re.compile(r"\[\s*([\w.-]+)\s*\]\s*(?:#.*)?")
_PAIR = re.compile(r'([\w.-]+|"[^"]*")\s*=\s*(.*)')
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'')


def _value(text: str, cell: Callable[[str], Any]) -> Any:
    text = text.strip()
    m = _STRING.fullmatch(text)
    if m is not None:
        return m.group(1) if m.group(1) is not None else m.group(2)
    if text in ("true", "false"):
        return text == "true"
    return cell(text)


def _open(text: str) -> int:
    """How many brackets ``text`` leaves open (quotes aside)."""
    bare = _STRING.sub("", text)
    return bare.count("[") + bare.count("{") - bare.count("]") - bare.count("}")


def toml_records(
    lines: list[str], cell: Callable[[str], Any]
) -> tuple[str, list[dict[str, Any]], list[tuple[int, int]]] | None:
    """The array of tables' name, its records and each one's first and last line
    (1-based), or ``None`` when the text holds no array of at least two tables."""
    heads = Counter(m.group(1) for line in lines if (m := _ARRAY.fullmatch(line.strip())))
    if not heads:
        return None
    name, n = heads.most_common(1)[0]
    if n < 2:
        return None
    records: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    record: dict[str, Any] | None = None
    into: dict[str, Any] = {}
    depth = 0
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if depth > 0:
            depth += _open(line)
            if record is not None:
                spans[-1] = (spans[-1][0], number)
            continue
        array = _ARRAY.fullmatch(line)
        table = None if array else _TABLE.fullmatch(line)
        if array or table:
            record = None
            if array and array.group(1) == name:
                record = into = {}
                records.append(record)
                spans.append((number, number))
            elif table and records and table.group(1).startswith(f"{name}."):
                record = records[-1]
                into = record.setdefault(table.group(1)[len(name) + 1 :], {})
                spans[-1] = (spans[-1][0], number)
            continue
        if record is None or not line or line.startswith("#"):
            continue
        pair = _PAIR.fullmatch(line)
        if pair is None:
            continue
        key, text = pair.group(1).strip('"'), pair.group(2)
        depth = max(0, _open(text))
        if not depth:
            into[key] = text.strip() if text.lstrip()[:1] in "[{" else _value(text, cell)
        spans[-1] = (spans[-1][0], number)
    return name, records, spans
