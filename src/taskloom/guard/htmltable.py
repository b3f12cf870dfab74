"""The largest table of an HTML page read as records: its header cells (``<th>``) name the
fields, each later row (``<tr>``) of as many data cells (``<td>``) is a record.

A cell's value is its text, whitespace collapsed. A row of another number of cells (a
caption row, a spanning cell) is no record. A page with no ``<table>``, or over
:data:`MAX_CHARS`, is not read (``None``); nothing the page refers to is fetched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

MAX_CHARS = 8_000_000
"""A page longer than this is not parsed for tables (the work is bounded)."""


@dataclass(slots=True)
class _Grid:
    header: list[str] = field(default_factory=list)
    rows: list[tuple[int, int, list[str]]] = field(default_factory=list)


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.done: list[_Grid] = []
        self.open: list[_Grid] = []
        self.row: list[str] | None = None
        self.heads = 0
        self.start = 0
        self.text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.open.append(_Grid())
        elif not self.open:
            return
        elif tag == "tr":
            self._end_row()
            self.row, self.heads, self.start = [], 0, self.getpos()[0]
        elif tag in ("td", "th") and self.row is not None:
            self._end_cell()
            self.text = []
            self.heads += tag == "th"

    def handle_endtag(self, tag: str) -> None:
        if not self.open:
            return
        if tag in ("td", "th"):
            self._end_cell()
        elif tag == "tr":
            self._end_row()
        elif tag == "table":
            self._end_row()
            self.done.append(self.open.pop())

    def handle_data(self, data: str) -> None:
        if self.text is not None:
            self.text.append(data)

    def _end_cell(self) -> None:
        if self.text is not None and self.row is not None:
            self.row.append(" ".join("".join(self.text).split()))
        self.text = None

    def _end_row(self) -> None:
        self._end_cell()
        if self.row is None or not self.open:
            return
        grid, row, self.row = self.open[-1], self.row, None
        if not row:
            return
        if not grid.header and self.heads == len(row):
            grid.header = row
        elif grid.header and len(row) == len(grid.header):
            grid.rows.append((self.start, self.getpos()[0], row))


def html_rows(text: str) -> tuple[list[str], list[tuple[int, int, list[str]]]] | None:
    """The header of the page's table with the most rows and each row's first and last
    line (1-based) and cells, or ``None``."""
    if len(text) > MAX_CHARS or "<table" not in text.lower():
        return None
    parser = _Tables()
    parser.feed(text)
    parser.close()
    grids = [g for g in parser.done if len(g.header) >= 2 and len(set(g.header)) == len(g.header)]
    if not grids:
        return None
    best = max(grids, key=lambda g: len(g.rows))
    return (best.header, best.rows) if len(best.rows) >= 2 else None
