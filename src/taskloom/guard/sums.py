"""Top records by a number their members hold: "which pod has the most restarts?" over
records that hold ``containers: [{"restartCount": 3}, …]``.

A question that asks for the highest or lowest of a number (:func:`~taskloom.guard.tally.extreme`)
and names a number key of an array field's member objects ranks the records that hold the
array by the sum of that key over each record's members. A key is named by the stems of
its parts (:mod:`~taskloom.guard.stems`) less the parts that only say it counts
(``count``, ``total``, ``num``…): "restarts" for ``restartCount``, "retries" for
``numRetries``; or by its whole name.

The ranking is not read when a plain field of the record is named so (that field ranks
them), or when the noun after "which" or "what" names the array's members ("which
container…": each member is a record of its own group then). When several array fields
hold the key, the one whose members hold it most often is summed.

A question that names no such key but names an array field of the records itself ("which
issue has the most labels?", "which package has the fewest dependencies?") ranks the
records by how many members that array holds. An array is named by its name's stems, or by
them less a last part that only says it is a list (``list``, ``set``, ``array``: "points"
for ``pointlist``, "tags" for ``tag_set``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from taskloom.guard.groups import Group
from taskloom.guard.jsondoc import is_array, is_object
from taskloom.guard.question import Tok
from taskloom.guard.rank import STOPWORDS, parts_of
from taskloom.guard.stems import stem
from taskloom.guard.tally import Tally

_COUNTING = frozenset({"count", "counts", "total", "totals", "num", "number", "amount", "n"})
_ASKING = frozenset({"which", "what"})
_LISTING = ("list", "set", "array", "arr", "items")


@dataclass(frozen=True, slots=True)
class Summed:
    """The array field of a record and the number key of its members that are summed."""

    array: tuple[str, ...]
    key: tuple[str, ...]
    """The summed key of the members, or ``()``: the members are counted."""

    def label(self) -> str:
        if not self.key:
            return f"number of {'.'.join(self.array)}[*] members per record"
        return f"sum of {'.'.join(self.array)}[*].{'.'.join(self.key)} per record"


def _stems(key: str) -> tuple[str, ...]:
    parts = parts_of(key)
    kept = [p for p in parts if p not in _COUNTING] or parts
    return tuple(stem(p) for p in kept)


def _spans(key: str, said: list[str]) -> set[tuple[int, int]]:
    """Where the question's word stems (``said``) name ``key``: its whole name, or a run
    of words whose stems are its parts' (counting parts left out)."""
    whole = stem(key)
    out = {(i, i + 1) for i, word in enumerate(said) if word == whole}
    want = _stems(key)
    n = len(want)
    out.update((i, i + n) for i in range(len(said) - n + 1) if tuple(said[i : i + n]) == want)
    return out


def summed_member(group: Group, tokens: list[Tok]) -> Summed | None:
    """The member key the question ranks ``group``'s records by the sum of (see the module
    docs), or ``None``."""
    said = [stem(t.text) if not t.quoted and not t.op else "" for t in tokens]
    found: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = []
    spans: set[tuple[int, int]] = set()
    for name, stats in group.fields.items():
        for key, member in stats.members.items():
            if key and member.kinds == {"number"} and (at := _spans(key[-1], said)):
                found.append((member.present, name, key))
                spans |= at
    if not found:
        return _counted_array(group, tokens, said)
    for name, stats in group.fields.items():
        if not stats.kinds & {"array", "object"} and spans & _spans(name[-1], said):
            return None  # a plain field of the record is named so: it ranks them
    _n, array, key = max(found, key=lambda f: f[0])
    noun = _asked_noun(tokens)
    if noun and noun in {stem(p) for p in parts_of(array[-1])}:
        return None
    return Summed(array, key)


def _list_spans(key: str, said: list[str]) -> set[tuple[int, int]]:
    """Where ``said`` names the array field ``key``: as :func:`_spans` does, or by its name
    less a last part or suffix that says it is a list (``pointlist``, ``tag_set``)."""
    out = _spans(key, said)
    low = key.lower()
    parts = parts_of(key)
    for suffix in _LISTING:
        if len(parts) > 1 and parts[-1] == suffix:
            out |= _spans("_".join(parts[:-1]), said)
        elif len(parts) == 1 and low.endswith(suffix) and len(low) - len(suffix) >= 3:
            out |= _spans(low[: -len(suffix)], said)
    return out


def _counted_array(group: Group, tokens: list[Tok], said: list[str]) -> Summed | None:
    """The array field of ``group``'s records the question names, to rank them by how many
    members it holds; ``None`` when none is named, several are, or the noun asked for names
    its members."""
    named = [
        name
        for name, stats in group.fields.items()
        if name and stats.kinds - {"null"} == {"array"} and _list_spans(name[-1], said)
    ]
    if len(named) != 1:
        return None
    array = named[0]
    noun = _asked_noun(tokens)
    if noun and _list_spans(array[-1], [noun]):
        return None
    return Summed(array, ())


def _asked_noun(tokens: list[Tok]) -> str:
    """The stem of the first word after "which" or "what" that is no stop word."""
    for i, tok in enumerate(tokens):
        if tok.text.lower() in _ASKING:
            rest = (t for t in tokens[i + 1 :] if t.text.lower() not in STOPWORDS)
            nxt = next(rest, None)
            return stem(nxt.text) if nxt is not None else ""
    return ""


def rank_sums(matches: Iterable[tuple[str, Any]], summed: Summed, highest: bool) -> Tally:
    """The records of ``matches`` ((path, record) pairs) with the highest (or lowest) sum
    of the summed key over their members; a record whose members hold none is missing."""
    out = Tally(summed.key, highest=highest, label=summed.label())
    heap: list[tuple[Any, int, str, Any]] = []
    for n, (path, record) in enumerate(matches):
        out.records += 1
        total = _total(record, summed)
        if total is None:
            out.missing += 1
            continue
        out.rank(total if highest else -total, n, path, record, heap)
    best = sorted(heap, reverse=True)
    out.extremes = [(k if highest else -k, p, r) for k, _n, p, r in best]
    return out


def _total(record: Any, summed: Summed) -> int | float | None:
    members: Any = record
    for part in summed.array:
        members = members.get(part) if is_object(members) else None
    if not is_array(members):
        return None
    if not summed.key:
        return len(members)
    total: int | float | None = None
    for member in members:
        value: Any = member
        for part in summed.key:
            value = value.get(part) if is_object(value) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            total = value if total is None else total + value
    return total
