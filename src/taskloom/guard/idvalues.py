"""The field an id the question writes belongs to, when no field holds it as indexed.

Two kinds of id are read as conditions beside the ones a question names:

- a number written after a word ("order 5012", "customer 217"): the field that holds that
  number and whose name has that word (``customer.id``), else, when no field's name has
  it, the one id field (``id``, ``number``, ``…_id``) that holds the number. A number
  after a word of position or size ("top 5", "page 2", "line 40") is no id;
- an identifier (``req-08094-3ad2``, an ISO time) that no field's indexed
  values hold, while one field of more distinct values than are indexed holds values of
  its shape: the same runs of letters and digits, of the same lengths, between the same
  separators. The JSONPath that answers still reads every record, so an id the data
  lacks matches nothing;
- an abbreviated hash: seven or more hexadecimal digits (``6282283158``) that begin
  exactly one indexed value of one field, of a field that holds no shorter values; the
  condition is that whole value (``commit == '628228315…'``).
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import islice

from taskloom.guard.groups import Field, Group
from taskloom.guard.rank import parts_of

NOT_AN_ID = frozenset(
    {
        "top", "first", "last", "next", "previous", "page", "pages", "line", "lines",
        "limit", "after", "before", "since", "until", "over", "under", "than", "least",
        "most", "step", "version", "v", "port", "level", "tier", "day", "days", "hour",
        "hours", "minute", "minutes", "second", "seconds", "year", "years",
    }
)  # fmt: skip
_RUN = re.compile(r"[^\W_]+")
_HEX = re.compile(r"[0-9a-f]{7,63}")
SAMPLED = 50
"""Indexed values of a field whose shapes are compared with an id's."""


def _id_field(name: tuple[str, ...]) -> bool:
    key = name[-1].lower()
    return key in ("id", "number", "no", "num") or key.endswith(("_id", "id"))


def number_field(group: Group, word: str, number: int) -> tuple[str, ...] | None:
    """The field ``number`` written after ``word`` is the id of, or ``None``."""
    low = word.lower().rstrip("s")
    if not word.isalpha() or low in NOT_AN_ID or word.lower() in NOT_AN_ID:
        return None
    holders = [n for n, s in group.fields.items() if ("number", number) in s.values]
    named = [n for n in holders if low in {p.rstrip("s") for k in n for p in parts_of(k)}]
    if named:
        return named[0] if len(named) == 1 else None
    if any(low in {p.rstrip("s") for k in n for p in parts_of(k)} for n in group.fields):
        return None  # the word names a field that does not hold the number
    ids = [n for n in holders if _id_field(n)]
    return ids[0] if len(ids) == 1 else None


def shape(text: str) -> str:
    """``req-08094-3ad2`` → ``3-5-4``: each run of letters and digits by its length."""
    return _RUN.sub(lambda m: str(len(m.group(0))), text)


def shaped_field(group: Group, word: str) -> tuple[str, ...] | None:
    """The one field of more distinct values than are indexed whose values have the shape
    of ``word``, or ``None``."""
    wanted = shape(word)
    fits = [name for name, stats in group.fields.items() if stats.many and _fits(stats, wanted)]
    return fits[0] if len(fits) == 1 else None


def _fits(stats: Field, wanted: str) -> bool:
    texts = [v for (kind, v) in islice(stats.values, SAMPLED) if kind == "string"]
    if not texts:
        return False
    common, n = Counter(shape(t) for t in texts).most_common(1)[0]
    return common == wanted and n * 2 > len(texts)


def prefixed_value(group: Group, word: str) -> tuple[tuple[str, ...], str] | None:
    """The field and its one indexed value that the abbreviated hash ``word`` begins, or
    ``None`` (see the module docs)."""
    low = word.lower()
    if not _HEX.fullmatch(low):
        return None
    found = [
        (name, value)
        for name, stats in group.fields.items()
        if not stats.many
        for kind, value in stats.values
        if kind == "string" and prefixed_value_of(value, low)
    ]
    return found[0] if len(found) == 1 else None


def prefixed_value_of(value: str, word: str) -> bool:
    """Whether ``word`` is an abbreviated hash of ``value``."""
    low = word.lower()
    return bool(_HEX.fullmatch(low)) and len(value) > len(low) and value.lower().startswith(low)
