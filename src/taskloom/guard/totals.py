"""The total and the mean of the numbers an exact answer selects, when the question asks
for one: "what is the total amount of the paid orders in eur?", "what is the average
duration of the failed jobs?", "sum the units sold in Oslo".

A question asks for one when it says ``total``, ``sum``, ``combined``, ``average``,
``avg`` or ``mean`` and is no count ("total number of" counts). The numbers are the values
of every match of the answer's JSONPath (not only those shown): numbers, or text that is
one number (a table's cell, ``"41404.44"``), or, when each match is an object, its one
number member whose name a word of the question says by stem ("content size" for
``content.size``). One match that holds no such number makes no total: a total of part of
the matches would read as the whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from taskloom.guard.jsondoc import is_object
from taskloom.guard.rank import parts_of
from taskloom.guard.stems import stem

_TOTAL = re.compile(r"\b(?:total|sum|summed|combined|average|avg|mean)\b", re.I)
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def asks_total(question: str) -> bool:
    """Whether the question asks for the total or the mean of the values it selects."""
    return bool(_TOTAL.search(question))


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        try:
            return Decimal(value.strip())
        except InvalidOperation:
            return None
    return None


def _member(value: Any, said: set[str]) -> str | None:
    """The one number member of an object whose name the question says."""
    named = [
        key
        for key, member in value.items()
        if _number(member) is not None and {stem(p) for p in parts_of(str(key))} & said
    ]
    return named[0] if len(named) == 1 else None


def total_line(values: Iterable[Any], question: str, label: str) -> str:
    """The total and the mean of ``values`` (every match of ``label``, a JSONPath), or
    ``""`` when one of them holds no number the question names."""
    said = {stem(w) for w in re.findall(r"[^\W_]+", question)}
    numbers: list[Decimal] = []
    key: str | None = None
    for value in values:
        if is_object(value):
            key = key if key is not None else _member(value, said)
            value = value.get(key) if key is not None else None
        number = _number(value)
        if number is None:
            return ""
        numbers.append(number)
    if not numbers:
        return ""
    total = sum(numbers, Decimal(0))
    mean = total / len(numbers)
    if mean != mean.to_integral():
        mean = mean.quantize(Decimal("0.0001"))
    what = f"{label}.{key}" if key else label
    return (
        f"Total of {what} over all {len(numbers):,} matches: {_plain(total)}"
        f" (mean {_plain(mean)}, min {_plain(min(numbers))}, max {_plain(max(numbers))})."
    )


def _plain(number: Decimal) -> str:
    text = format(number.normalize(), "f") if number != number.to_integral() else f"{number:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
