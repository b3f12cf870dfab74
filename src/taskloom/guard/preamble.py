"""The lines a table is preceded by: a report's comment lines (``# generated …`` above a
CSV's header) or a summary block ended by a blank line (``top -b``'s load, tasks and memory
lines above its process table).

A preamble is either the leading lines that start with ``#``, or the lines up to the first
blank line (and the blank lines after it) when that line is at most :data:`PREAMBLE_LINES`
lines in. The caller reads the rest as a table, only when the whole text reads as none,
and numbers its lines as the whole text's.
"""

from __future__ import annotations

PREAMBLE_LINES = 12
"""The most lines a summary block above a table may hold."""


def preamble(lines: list[str]) -> int:
    """How many leading lines of ``lines`` are a preamble (0: none)."""
    comments = 0
    while comments < len(lines) and lines[comments].lstrip().startswith("#"):
        comments += 1
    if comments:
        return comments
    for i, line in enumerate(lines[: PREAMBLE_LINES + 1]):
        if not line.strip():
            rest = i + 1
            while rest < len(lines) and not lines[rest].strip():
                rest += 1
            return rest if i else 0
    return 0
