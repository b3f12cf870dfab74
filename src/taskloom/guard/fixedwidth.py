"""A fixed-width table (``docker ps``, ``kubectl get pods -o wide``, ``df -h``) read by
its columns' positions, so a cell may hold spaces (``Up 3 hours``).

A gutter is a character position blank on every line, the header's included. The runs of
non-gutter positions are spans; a span under no header word continues the column before it
(a cell's own spaces, or the last column's free text), and the header words within one span
are one column's name (``NOMINATED NODE``, ``Mounted on``) only when single spaces separate
them; so is a header word one space after the column before when no data line holds a cell
under it. Every column's cells are aligned: all start at one position or all end at one (the
last column: all start at one, or all end where its name ends). A first span under no header
word whose cells are each one mark (``●``, ``*``, ``>``: no letter or digit), as
``systemctl`` writes before a failed unit, is a marker gutter and no column; one whose
cells are each one word, on every data line, is the rows' labels (an index, as a data
frame prints it with no name above it: ``0``, ``1``, …), the column :data:`INDEX`. A name may
carry its unit in brackets (``kubectl top``'s ``CPU(cores)`` and ``MEMORY(bytes)``). A rule
line (dashes or ``=``, across the table or under each column) is no row and sets no column's
bounds; its row's cells are the rule's pieces, which the caller skips. Any other layout is
no fixed-width table (``None``), and the caller reads the text otherwise.
"""

from __future__ import annotations

import re
from itertools import pairwise

_TOKEN = re.compile(r"\S+")
_WORD = r"[A-Za-z_%#][\w%#+./-]*(?:\([\w%/.-]+\))?"
_NAME = re.compile(rf"{_WORD}(?: (?:{_WORD}|/))*")
"""A column's name: words, each maybe with its unit in brackets (``CPU(cores)``)."""
RULE = re.compile(r"\s*[-=]{2,}(?:\s+[-=]{2,})*\s*")
"""A rule line: ``-------`` across the table or ``----- ----`` under each column."""
INDEX = "index"
"""The name of a first column of row labels printed under no header word."""
MAX_WIDTH = 1_000
"""A line wider than this makes no fixed-width table."""


def fixed_columns(lines: list[str]) -> tuple[list[str], list[list[str]]] | None:
    """The header's column names and each data line's cells, or ``None``."""
    width = max(len(line) for line in lines)
    if width > MAX_WIDTH or any("\t" in line for line in lines):
        return None
    used = bytearray(width + 1)
    body = [line for line in lines[1:] if not RULE.fullmatch(line)]
    for line in body:
        for m in _TOKEN.finditer(line):
            used[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    data = bytes(used)
    words = list(_TOKEN.finditer(lines[0]))
    for w in words:
        used[w.start() : w.end()] = b"\x01" * (w.end() - w.start())
    spans: list[list[int]] = []
    for pos in range(width + 1):
        if used[pos] and (pos == 0 or not used[pos - 1]):
            spans.append([pos, pos])
        if used[pos]:
            spans[-1][1] = pos + 1
    columns: list[tuple[int, int, list[re.Match[str]]]] = []
    for start, end in spans:
        inside = [w for w in words if start <= w.start() < end]
        empty = not any(data[start:end])
        if inside and empty and columns and inside[0].start() - columns[-1][2][-1].end() == 1:
            columns[-1] = (columns[-1][0], end, columns[-1][2] + inside)
        elif inside:
            columns.append((start, end, inside))
        elif columns:
            columns[-1] = (columns[-1][0], end, columns[-1][2])
        elif _labels([line[start:end] for line in body]):
            columns.append((start, end, []))
        elif not _marks([line[start:end] for line in body]):
            return None
    names: list[str] = []
    for _start, _end, inside in columns:
        if any(b.start() - a.end() > 1 for a, b in pairwise(inside)):
            return None
        names.append(lines[0][inside[0].start() : inside[-1].end()] if inside else INDEX)
    if len(names) < 3 or len(set(names)) < len(names):
        return None
    if not all(_NAME.fullmatch(n) for n in names):
        return None
    rows = [[line[s:e].strip() for s, e, _w in columns] for line in lines[1:]]
    for i, (start, end, inside) in enumerate(columns):
        last = i == len(columns) - 1
        head_end = inside[-1].end() - start if last else None
        if not _aligned([line[start:end] for line in body], head_end):
            return None
    return names, rows


def _labels(cells: list[str]) -> bool:
    """Whether every cell is one word with a letter or a digit: a row's label."""
    return all(len(c.split()) == 1 and any(ch.isalnum() for ch in c) for c in cells)


def _marks(cells: list[str]) -> bool:
    """Whether every cell is blank or one mark (no letter or digit)."""
    return all(len(c.strip()) <= 1 and not c.strip().isalnum() for c in cells)


def _aligned(cells: list[str], head_end: int | None) -> bool:
    """Whether the cells all start at one position or all end at one; the last column's
    (``head_end``: where its name ends) end there only when its name ends there too, as a
    right-aligned number column's does (free text ends anywhere)."""
    starts = {len(c) - len(c.lstrip()) for c in cells if c.strip()}
    ends = {len(c.rstrip()) for c in cells if c.strip()}
    return len(starts) <= 1 or (ends <= {head_end} if head_end is not None else len(ends) <= 1)
