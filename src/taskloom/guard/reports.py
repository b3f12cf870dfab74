"""A table printed in blocks under one repeated header read as one table.

Tools that sample or group print their header again above each block: one block per
interval (``iostat -x 5``), per group (a consumer-group describe), or every screenful (a
sampler that repeats its two header lines). The header is a line of at least three names
(no numbers) that occurs at least twice, directly above a row. Each block is its header
and the lines below it up to a blank line or the next repeated line; each is read as a
table on its own (its columns may be aligned to other widths), and their rows are one
table when every block names the same fields, numbered as the whole text's lines.

A question that names one block, ``the last report``, ``the first interval``, ``the
latest snapshot``, reads that block's rows alone, and those words are no condition on them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from taskloom.guard.table import Table

_NAME = re.compile(r"[A-Za-z_%#][\w%#+./:-]*")
_BLOCK = re.compile(
    r"\b(first|last|latest|final)\s+(?:report|block|interval|snapshot|iteration|sample set)s?\b",
    re.I,
)
_SCOPE = re.compile(rf"\b(?:in|of|from|for|during)\s+the\s+{_BLOCK.pattern[2:]}", re.I)
MIN_NAMES = 3


def _header(line: str) -> bool:
    words = line.split()
    return len(words) >= MIN_NAMES and all(_NAME.fullmatch(w) for w in words)


def _key(line: str) -> str:
    return " ".join(line.split())


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """The blocks under the repeated header with the most rows below it: each its header's
    index and the index past its last row; none when no header repeats. Lines are compared
    by their words, so a header padded to each block's widths is the same header."""
    keys = [_key(line) for line in lines]
    counts = Counter(k for k in keys if k)
    repeated = {k for k, n in counts.items() if n >= 2}
    found: dict[str, list[tuple[int, int]]] = {}
    for i, key in enumerate(keys[:-1]):
        below = keys[i + 1]
        if key in repeated and _header(key) and below and below not in repeated:
            end = i + 1
            while end < len(keys) and keys[end] and keys[end] not in repeated:
                end += 1
            found.setdefault(key, []).append((i, end))
    best = max(
        (b for b in found.values() if len(b) >= 2),
        key=lambda b: sum(end - start for start, end in b),
        default=[],
    )
    return best


def asked_block(question: str) -> str | None:
    """``"first"`` or ``"last"`` when the question names one block, else ``None``."""
    m = _BLOCK.search(question)
    if m is None:
        return None
    return "first" if m.group(1).lower() == "first" else "last"


def unscoped(question: str) -> str:
    """``question`` without the words that name one block (they are no condition on its
    rows)."""
    return " ".join(_SCOPE.sub(" ", question).split())


def repeated_table(
    lines: list[str], question: str, read: Callable[[str], Table | None]
) -> Table | None:
    """The rows of every block under a repeated header (of the one block the question
    names) as one table, each block read by ``read``; ``None`` when no header repeats or a
    block does not read as a table of the same fields."""
    blocks = _blocks(lines)
    if len(blocks) < 2:
        return None
    which = asked_block(question)
    chosen = blocks if which is None else [blocks[0 if which == "first" else -1]]
    out: Table | None = None
    names: list[str] | None = None
    for start, end in blocks:
        table = read("\n".join(lines[start:end]))
        if table is None or not table.records or not table.header:
            return None
        fields = list(table.records[0])
        if names is not None and fields != names:
            return None
        names = fields
        if (start, end) not in chosen:
            continue
        if out is None:
            out = Table(table.kind, header=start + table.header)
        out.records += table.records
        out.spans += [(a + start, b + start) for a, b in table.spans]
    if out is not None:
        told = f"the {which} of {len(blocks)} blocks" if which else f"{len(blocks)} blocks"
        out.kind = f"{out.kind} ({told} under one repeated header)"
    return out
