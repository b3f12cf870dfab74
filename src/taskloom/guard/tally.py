"""A tally of one field over the records a question selects, for the questions a filter
does not answer: "which service has the most errors?", "what are the distinct values of
status?", "which users are running processes?", "which process uses the most RSS?".

A question asks for a tally when it names a field with no value and says ``most``,
``least``, ``distinct``, ``unique`` or ``different``, or when it is a list of a field of
few distinct values with no condition. The tally counts the field's values (each count
a plain number) over every record the conditions select, read whole by the JSONPath, so
each count is exact. A number field of many distinct values asked for with ``most``,
``highest``… is not tallied: its records are ranked by it, highest (or lowest) first; so is
one of few values asked for with a word of magnitude (``highest``, ``largest``, ``longest``,
``lowest``, ``smallest``, ``shortest``, ``max``, ``min``: "which file has the highest
errorCount?", "which job has the longest timeout?"), which asks for the record, not for
how often each value occurs. A field whose every value is a string writing a decimal
number (``"2213.5"``) ranks as a number field.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from taskloom.domain.text import counted
from taskloom.guard.compact import dumps
from taskloom.guard.groups import NUMERAL, Field
from taskloom.guard.jsondoc import is_array, is_object

_TALLY = re.compile(r"\b(?:most(?! recent)|least|fewest|distinct|unique|different)\b", re.I)
_HIGH = re.compile(
    r"\b(?:most(?! recent)|highest|largest|biggest|longest|max(?:imum)?|greatest|top|slowest)\b",
    re.I,
)
_LOW = re.compile(
    r"\b(?:least|lowest|smallest|shortest|fewest|min(?:imum)?|fastest|quickest)\b", re.I
)
_MAGNITUDE = re.compile(
    r"\b(?:highest|largest|biggest|longest|greatest|max(?:imum)?|lowest|smallest|shortest"
    r"|min(?:imum)?)\b",
    re.I,
)
SHOWN_VALUES = 30
"""Values a tally lists, most frequent first; the rest are summed as one line."""
SHOWN_EXTREMES = 3
SHOWN_TIED = 30
"""Names listed of the records that share the highest (lowest) value, when more than
:data:`SHOWN_EXTREMES` do: each of them answers the question as well."""
_NAMING = ("name", "id", "key", "title", "login", "number", "address", "path", "uri", "url")


@dataclass(slots=True)
class Tally:
    target: tuple[str, ...]
    counts: Counter[Any] = field(default_factory=Counter)
    records: int = 0
    """Records the conditions select (those holding no value of the field included)."""
    missing: int = 0
    extremes: list[tuple[Any, str, Any]] = field(default_factory=list)
    """For a ranked number field: (value, path of its record, the record), best first."""
    highest: bool = True
    label: str = ""
    """What the extremes rank, when it is not the target itself ("sum of
    containers[*].restarts per record")."""
    tied: int = 0
    """Records holding the best value (the first extreme's)."""
    tied_names: list[str] = field(default_factory=list)
    """The names of the first :data:`SHOWN_TIED` of them."""
    tied_key: Any = None

    def rank(self, key: Any, n: int, path: str, record: Any, heap: list[Any]) -> None:
        """Keep the record in ``heap`` when it is among the best (``key`` is its value,
        negated for the lowest first), and count it when it ties the best value seen."""
        item = (key, -n, path, record)
        if len(heap) < SHOWN_EXTREMES:
            heapq.heappush(heap, item)
        elif item > heap[0]:
            heapq.heapreplace(heap, item)
        if self.tied and key == self.tied_key:
            self.tied += 1
            if len(self.tied_names) < SHOWN_TIED:
                self.tied_names.append(record_name(record, path))
        elif not self.tied or key > self.tied_key:
            self.tied, self.tied_key, self.tied_names = 1, key, [record_name(record, path)]


def record_name(record: Any, path: str) -> str:
    """What names a record in a list: its first naming field's value (``name``, ``id``…,
    any case), else its first short text value, else its path."""
    if is_object(record):
        lower = {str(k).lower(): v for k, v in record.items()}
        for key in _NAMING:
            value = lower.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool):
                return str(value)
        for value in record.values():
            if isinstance(value, str) and 0 < len(value) <= 100:
                return value
    return path


def asks_tally(question: str, kind: str | None, conditions: int, stats: Field) -> bool:
    """Whether a question that names a field with no value asks for a tally of it: it says
    so, or it lists a field of few distinct values (every one indexed, under half the
    records) with no condition."""
    if _TALLY.search(question):
        return True
    few = not stats.many and len(stats.values) * 2 <= stats.present
    return kind == "list" and not conditions and few


def says_tally(question: str) -> bool:
    """Whether the question says ``most``, ``least``, ``distinct``…: a word of a tally."""
    return bool(_TALLY.search(question))


def ranks_numbers(question: str, stats: Field) -> bool | None:
    """``True`` (highest first) or ``False`` (lowest first) when the question asks for the
    records with the extreme values of a number field of many values, or of any number field
    with a word of magnitude (``highest``, ``smallest``…); else ``None``."""
    numerals = stats.kinds == {"string"} and stats.numerals == stats.present
    if stats.kinds != {"number"} and not numerals:
        return None
    if len(stats.values) * 4 < stats.present and not _MAGNITUDE.search(question):
        return None
    return extreme(question)


def ranks(word: str) -> bool:
    """Whether ``word`` is a word of rank (``most``, ``lowest``, ``top``…)."""
    return bool(_HIGH.fullmatch(word) or _LOW.fullmatch(word))


def extreme(question: str) -> bool | None:
    """``False`` when the question asks for the lowest ("least", "fewest", "min"), ``True``
    for the highest ("most", "top", "max"), else ``None``."""
    if _LOW.search(question):
        return False
    return True if _HIGH.search(question) else None


def tally(matches: Any, target: tuple[str, ...], highest: bool | None) -> Tally:
    """The tally (or, with ``highest`` set, the extremes) of ``target`` over ``matches``:
    (path, record) pairs."""
    out = Tally(target, highest=highest is not False)
    heap: list[tuple[Any, int, str, Any]] = []
    for n, (path, record) in enumerate(matches):
        out.records += 1
        value: Any = record
        for key in target:
            value = value.get(key) if is_object(value) else None
        if value is None or is_object(value) or is_array(value):
            out.missing += 1
            continue
        if highest is None:
            out.counts[value] += 1
            continue
        if isinstance(value, str):
            if not NUMERAL.fullmatch(value):
                out.missing += 1
                continue
            value = float(value)
        out.rank(value if highest else -value, n, path, record, heap)
    best = sorted(heap, reverse=True)
    out.extremes = [(k if out.highest else -k, p, r) for k, _n, p, r in best]
    return out


def describe(found: Tally, where: str, over: str) -> str:
    """The tally as an answer's summary: ``where`` the conditions, ``over`` the records."""
    name = found.label or ".".join(found.target)
    scope = f"the {found.records:,} records matching {where}" if where else over
    if found.extremes:
        word = "highest" if found.highest else "lowest"
        values = ", ".join(dumps(v) for v, _p, _r in found.extremes)
        out = (
            f"The {counted(len(found.extremes), 'record')} with the {word} {name}, over every"
            f" one of {scope}: {values} (shown below)."
        )
        if found.tied > len(found.extremes):
            names = ", ".join(found.tied_names)
            more = found.tied - len(found.tied_names)
            out += (
                f" {found.tied:,} records share the {word} value {dumps(found.extremes[0][0])}:"
                f" {names}{f', … {more:,} more' if more > 0 else ''}."
            )
        return out
    lines = [
        f"Tally of {name} (exact counts, every one of {scope} read):"
        f" {counted(len(found.counts), 'distinct value')}"
    ]
    top = found.counts.most_common(SHOWN_VALUES)
    lines += [f"  {dumps(v)}: {n}" for v, n in top]
    rest = len(found.counts) - len(top)
    if rest:
        others = sum(found.counts.values()) - sum(n for _v, n in top)
        lines.append(f"  … {counted(rest, 'other value')}: {others:,}")
    if found.missing:
        lines.append(f"  (no value: {found.missing:,})")
    return "\n".join(lines)
