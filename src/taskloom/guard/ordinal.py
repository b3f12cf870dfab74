"""The record at a position a question names: "the last item", "the first entry".

A question asks for one when it says ``first``, ``last``, ``final``, ``latest``,
``newest``, ``oldest``, ``earliest`` or ``most recent`` before a word naming a record
(``item``, ``record``, ``entry``, ``line``, ``row``, ``element``, ``event``, ``object``,
``message``, ``one``) or, in JSON, the array the records sit in (``the last issue`` of
``issues``), and is no count or list. In JSON the array is the root, or an array of
objects among the root's members (two levels at most) that the question names, else the
longest. ``latest``, ``newest``, ``most recent``, ``oldest`` and ``earliest`` pick by the
records' first field that holds a time in every record when there is one, else by position
(the last or the first). A field whose every value reads as an instant
(:mod:`~taskloom.guard.instants`: ISO times in any offset, epoch numbers, RFC 2822 and log
times) is ordered by instant; one whose values all start with an ISO date but do not all
read as instants is ordered as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from taskloom.guard.exact import intent
from taskloom.guard.instants import instant, instants
from taskloom.guard.jsondoc import JsonDoc, is_array, is_object

_ASKS = re.compile(
    r"\b(first|last|final|latest|newest|oldest|earliest|most recent)\s+([a-z_]+)", re.I
)
NOUNS = frozenset(
    ("item", "record", "entry", "line", "row", "element", "event", "object", "message", "one")
)
_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_BY_TIME = {"latest": True, "newest": True, "most recent": True, "oldest": False, "earliest": False}


@dataclass(slots=True, frozen=True)
class Ordinal:
    last: bool
    """The last (or, by time, the latest) rather than the first (the earliest)."""
    by_time: bool
    noun: str


@dataclass(slots=True)
class Picked:
    parts: tuple[int | str, ...]
    record: Any
    total: int
    rule: str
    """How the record was picked, as the answer says it."""


def asked(question: str) -> Ordinal | None:
    """The position ``question`` asks for, or ``None``."""
    if intent(question) == "count":
        return None
    m = _ASKS.search(question)
    if m is None:
        return None
    word, noun = m.group(1).lower(), m.group(2).lower()
    last = word in ("last", "final") or _BY_TIME.get(word, False)
    return Ordinal(last, word in _BY_TIME, noun.removesuffix("s"))


def generic(ordinal: Ordinal) -> bool:
    return ordinal.noun in NOUNS


def picked_json(doc: JsonDoc, ordinal: Ordinal, question: str) -> Picked | None:
    """The record of ``doc`` at the asked position, or ``None``."""
    words = {w.lower().removesuffix("s") for w in re.findall(r"[A-Za-z_]+", question)}
    best: tuple[int, int, tuple[int | str, ...], Any] | None = None
    for parts, array in _arrays(doc.root(), (), 2):
        name = str(parts[-1]).lower().removesuffix("s") if parts else ""
        named = int(name == ordinal.noun) * 2 + int(name in words)
        if best is None or (named, len(array)) > (best[0], best[1]):
            best = (named, len(array), parts, array)
    if best is None or not best[1] or not (generic(ordinal) or best[0] >= 2):
        return None
    _named, size, parts, array = best
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)
    if ordinal.by_time:
        found = _by_time(array, ordinal.last)
        if found is not None:
            index, key, timed = found
            word = "latest" if ordinal.last else "earliest"
            rule = f"the {word} {key} of the {size:,} records of {where}[*]"
            rule += ", times compared as instants" if timed else ", compared as text"
            return Picked((*parts, index), array[index], size, rule)
    index = size - 1 if ordinal.last else 0
    rule = f"the {'last' if ordinal.last else 'first'} of the {size:,} records of {where}[*]"
    return Picked((*parts, index), array[index], size, rule)


def _arrays(node: Any, parts: tuple[int | str, ...], depth: int) -> Iterator[tuple[Any, Any]]:
    if is_array(node):
        if len(node) and is_object(node[0]):
            yield parts, node
        return
    if not is_object(node) or depth <= 0:
        return
    for key, value in node.items():
        if is_array(value) or is_object(value):
            yield from _arrays(value, (*parts, key), depth - 1)


def _by_time(array: Any, latest: bool) -> tuple[int, str, bool] | None:
    """The index of the latest (or earliest) record by the first field that holds a time in
    every record, that field, and whether its values were compared as instants."""
    first = array[0]
    for key, value in first.items():
        dated = isinstance(value, str) and _DATE.match(value)
        if not dated and instant(value, key) is None:
            continue
        values = [r.get(key) if is_object(r) else None for r in array]
        order: list[Any] | None = instants(values, key)
        timed = order is not None
        if order is None and all(isinstance(v, str) and _DATE.match(v) for v in values):
            order = values
        if order is None:
            continue
        ranked = order
        pick = max if latest else min
        index = pick(range(len(ranked)), key=lambda i: (ranked[i], i if latest else -i))
        return index, key, timed
    return None
