"""A YAML-looking list of records read as records: ``- name: x`` blocks under a heading.

The text is block YAML of plain ``key: value`` lines: top-level ``key: value`` lines
(``apiVersion: v1``, ``services:``), then one list whose items are mappings
(``  - name: api`` and the item's ``key: value`` lines two spaces further in). A value is a
scalar (quotes taken off; a plain decimal number is a number), a nested mapping or a list
(``- value`` lines, or ``- key: value`` mappings) on the lines below it, or ``[a, b]``.
Anything else (anchors, multi-line strings, a second list, text after the list) makes it
no such list (``None``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_KEY = re.compile(r"([A-Za-z_][\w.-]*):(?: +(.*))?$")
_TOP = re.compile(r"[A-Za-z_][\w.-]*:(?: |$)")
_ITEM = re.compile(r"( *)- ")
_NOT_PLAIN = "not the plain block YAML read here"


def yaml_records(
    lines: list[str], cell: Callable[[str], Any]
) -> tuple[str, list[dict[str, Any]], list[tuple[int, int]]] | None:
    """The key the list sits under (``services``; ``""`` for a list at the top), its items
    and each one's first and last line (1-based), or ``None``."""
    rows = [(n, line) for n, line in enumerate(lines, 1) if line.strip() and not _comment(line)]
    if not rows or not (_TOP.match(rows[0][1]) or _ITEM.match(rows[0][1])):
        return None
    start = next((i for i, (_n, line) in enumerate(rows) if _ITEM.match(line)), None)
    if start is None or any(not _KEY.match(line) for _n, line in rows[:start]):
        return None
    indent = _indent(rows[start][1])
    reader = _Reader(rows, cell)
    records: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    i = start
    try:
        while i < len(rows):
            m = _ITEM.match(rows[i][1])
            if m is None or len(m.group(1)) != indent:
                return None
            value, after = reader.item(i, indent)
            if not isinstance(value, dict):
                return None
            records.append(value)
            spans.append((rows[i][0], rows[after - 1][0]))
            i = after
    except ValueError:
        return None
    above = _KEY.match(rows[start - 1][1].strip()) if start else None
    name = above.group(1) if above is not None and not above.group(2) else ""
    return (name, records, spans) if len(records) >= 2 else None


def yaml_mapping(lines: list[str], cell: Callable[[str], Any]) -> dict[str, Any] | None:
    """The whole text as one mapping of the plain block YAML read here (its top-level
    ``key:`` lines at the left margin), or ``None``."""
    rows = [(n, line) for n, line in enumerate(lines, 1) if line.strip() and not _comment(line)]
    if not rows or not _TOP.match(rows[0][1]):
        return None
    try:
        out, after = _Reader(rows, cell).mapping(0, 0)
    except ValueError:
        return None
    return out if after == len(rows) else None


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


class _Reader:
    def __init__(self, rows: list[tuple[int, str]], cell: Callable[[str], Any]) -> None:
        self.rows = rows
        self.cell = cell

    def item(self, i: int, indent: int) -> tuple[Any, int]:
        """The list item starting on row ``i`` (``- …`` at ``indent``) and the row after it."""
        line = self.rows[i][1]
        rest = line[indent + 2 :]
        inner = indent + 2
        if not _KEY.match(rest):
            return self.scalar(rest), i + 1
        shifted = [(self.rows[i][0], " " * inner + rest)]
        saved = self.rows[i]
        self.rows[i] = shifted[0]
        try:
            return self.mapping(i, inner)
        finally:
            self.rows[i] = saved

    def mapping(self, i: int, indent: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        while i < len(self.rows) and _indent(self.rows[i][1]) == indent:
            text = self.rows[i][1][indent:]
            m = _KEY.match(text)
            if m is None:
                if _ITEM.match(text):
                    break
                raise ValueError(_NOT_PLAIN)
            key, value = m.group(1), m.group(2)
            if key in out:
                raise ValueError(_NOT_PLAIN)
            i += 1
            if value is not None and value.strip():
                out[key] = self.scalar(value)
            elif i < len(self.rows) and _indent(self.rows[i][1]) > indent:
                out[key], i = self.block(i, _indent(self.rows[i][1]))
            elif i < len(self.rows) and _ITEM.match(self.rows[i][1][indent:]):
                out[key], i = self.block(i, indent)
            else:
                out[key] = None
        if i < len(self.rows) and _indent(self.rows[i][1]) > indent:
            raise ValueError(_NOT_PLAIN)
        return out, i

    def block(self, i: int, indent: int) -> tuple[Any, int]:
        if not _ITEM.match(self.rows[i][1][indent:]):
            return self.mapping(i, indent)
        items: list[Any] = []
        while i < len(self.rows) and _indent(self.rows[i][1]) == indent:
            if not _ITEM.match(self.rows[i][1][indent:]):
                break
            value, i = self.item(i, indent)
            items.append(value)
        return items, i

    def scalar(self, text: str) -> Any:
        text = text.strip()
        if text[:1] in "&*|>!{" or " #" in text:
            raise ValueError(_NOT_PLAIN)
        if text.startswith("[") and text.endswith("]"):
            return [self.scalar(part) for part in text[1:-1].split(",") if part.strip()]
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            return text[1:-1]
        return self.cell(text)
