"""A table a SQL client draws with rules and bars, read by its cells.

Two layouts are read:

- **boxed**: rule lines of dashes (or ``=``) joined by ``+`` (``+----+------+``) above and
  below the header and after the last row, every other line a row ``| 1 | ada |`` opened
  and closed by a bar;
- **ruled**: a header line of bar-separated names, then one rule line (``----+------``),
  then rows of as many bar-separated cells.

Cells are split on the bars and stripped. A footer the client writes after the rows
(``3 rows in set``, ``(3 rows)``) is at most two lines below the last row. Any other line,
or a row of another number of cells, makes the text no such table (``None``).
"""

from __future__ import annotations

import re

RULE = re.compile(r"\s*\+?[-=]{2,}(?:\+[-=]{2,})+\+?\s*")
MAX_FOOTER = 2


def bordered_rows(lines: list[str]) -> tuple[list[str], list[tuple[int, list[str]]]] | None:
    """The header's names and each row's line number (1-based) and cells, or ``None``."""
    if len(lines) < 3:
        return None
    if RULE.fullmatch(lines[0]):
        boxed = True
    elif RULE.fullmatch(lines[1]) and "|" in lines[0]:
        boxed = False
    else:
        return None
    rows: list[tuple[int, list[str]]] = []
    end = len(lines)
    for number, line in enumerate(lines, 1):
        if RULE.fullmatch(line):
            continue
        cells = _cells(line, boxed)
        if cells is None:
            end = number - 1
            break
        rows.append((number, cells))
    if len(lines) - end > MAX_FOOTER or len(rows) < 3:
        return None
    names = rows[0][1]
    if len(names) < 2 or len(set(names)) < len(names) or not all(names):
        return None
    if any(len(cells) != len(names) for _n, cells in rows[1:]):
        return None
    return names, rows[1:]


def _cells(line: str, boxed: bool) -> list[str] | None:
    text = line.strip()
    if boxed:
        if len(text) < 2 or text[0] != "|" or text[-1] != "|":
            return None
        text = text[1:-1]
    elif "|" not in text:
        return None
    return [c.strip() for c in text.split("|")]
