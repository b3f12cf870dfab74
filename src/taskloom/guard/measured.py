"""Questions on a table's sizes or percentages (:mod:`~taskloom.guard.quantities`): "which
filesystem is the fullest?", "which directory takes the most space?", "how many entries are
1G or bigger?".

The column is the one sizes or percentages column the question names; else the one of the
kind its words mean: ``fullest``, ``emptiest`` a percentage, ``biggest``, ``largest``,
``smallest``, ``most space`` or a size it writes (``1G``, ``500 MB``) a size; a word of
rank (``most``, ``lowest``…) with the one such column the question names ranks by it
("which container uses the most CPU?" over ``CPU %``). Several such
columns and none named: no answer, which is said. A comparison is read around the size or
percentage written (``over``, ``more than``, ``at least``, ``under``…, or ``or bigger``,
``or smaller`` after it); a size or percentage with none is no comparison. The question's
other words are read as conditions on the rows, and a word no field or value takes makes
no answer (:mod:`~taskloom.guard.loose`). Rows are ranked or counted by the quantity, every
one read; the answer says how the column was read.
"""

from __future__ import annotations

import re

from taskloom.guard.exact import Exact, filter_path
from taskloom.guard.groups import WILD, groups
from taskloom.guard.jsondoc import JsonDoc
from taskloom.guard.jsonpath import find, path_of
from taskloom.guard.loose import loose_words
from taskloom.guard.quantities import BYTES, PERCENT, percent, quantity_columns, size, value
from taskloom.guard.question import Condition, Tok, conditions, tokenize
from taskloom.guard.table import Table
from taskloom.guard.tally import SHOWN_EXTREMES, Tally, extreme, ranks

_FULL = {"fullest": True, "emptiest": False}
_BIG = {"biggest": True, "largest": True, "smallest": False, "heaviest": True}
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACE = re.compile(r"\b(most|least) (?:disk )?space\b", re.I)
_BEFORE = {
    ("over",): ">", ("above",): ">", ("exceeding",): ">", ("more", "than"): ">",
    ("bigger", "than"): ">", ("larger", "than"): ">", ("greater", "than"): ">",
    ("at", "least"): ">=", ("under",): "<", ("below",): "<", ("less", "than"): "<",
    ("smaller", "than"): "<", ("at", "most"): "<=",
}  # fmt: skip
_AFTER = {"bigger": ">=", "larger": ">=", "more": ">=", "greater": ">=", "above": ">=",
          "smaller": "<=", "less": "<=", "below": "<="}  # fmt: skip
_READ = {
    BYTES: "read as bytes: K, M, G, T alone or with i/iB as powers of 1024, kB, MB, GB, TB as"
    " powers of 1000",
    PERCENT: "read as a percentage",
}


def measured(table: Table, question: str) -> Exact | None:
    """The rows of ``table`` ranked or counted by a sizes or percentages column, an answer
    saying why there is none, or ``None`` when the question asks no such thing."""
    columns = quantity_columns(table)
    if not columns:
        return None
    tokens = tokenize(question)
    words = [t.text.lower() for t in tokens]
    mine: set[int] = set()
    highest: bool | None = None
    kind = ""
    for i, w in enumerate(words):
        if w in _FULL or w in _BIG:
            highest, kind = (_FULL | _BIG)[w], PERCENT if w in _FULL else BYTES
            mine.add(i)
    space = _SPACE.search(question)
    if space and highest is None:
        highest, kind = space.group(1).lower() == "most", BYTES
        mine |= {i for i, w in enumerate(words) if w in ("most", "least", "disk", "space")}
    compared = _comparison(tokens)
    if compared is not None:
        if highest is not None:
            return None
        kind = compared[2]
        mine |= compared[3]
    named = [c for c in columns if _bare(c) in words or c.lower() in words]
    if not kind and len(named) == 1 and (ranked := extreme(question)) is not None:
        highest, kind = ranked, columns[named[0]]  # "which container uses the most CPU?"
        mine |= {i for i, w in enumerate(words) if ranks(w)}
    if not kind:
        return None
    mine |= {i for i, w in enumerate(words) for c in named if w in (c.lower(), _bare(c))}
    fits = [c for c in named if columns[c] == kind] or (
        [] if named else [c for c, k in columns.items() if k == kind]
    )
    asks = "count" if compared is not None else "tally"
    if len(fits) != 1:
        if not fits:
            return None
        return Exact(asks, False, note=f"the question fits the columns {', '.join(fits)}: name one")
    column = fits[0]
    doc = JsonDoc(table.document())
    group = next(g for g in groups(doc) if g.pattern.count(WILD) == 1 and len(g.pattern) <= 2)
    read = conditions(group, tokens, True)
    conds = tuple(c for c in read.conditions if c.field != (column,))
    fields = [c.field for c in conds]
    loose = loose_words(tokens, read.used | read.named | mine, group, fields)
    if loose:
        return Exact(
            asks, False, note=f"the question's {', '.join(map(repr, loose))} could not be read"
        )
    path = filter_path(group, conds)
    rows = [(path_of(p), r) for p, r in find(doc.root(), path)]
    sized = [(v, p, r) for p, r in rows if (v := value(r.get(column), kind)) is not None]
    how = f"{column} {_READ[kind]}"
    if compared is not None:
        op, limit = compared[0], int(compared[1]) if compared[1].is_integer() else compared[1]
        hits = [(p, r) for v, p, r in sized if _holds(v, op, limit)]
        out = Exact("count", True, path, len(hits), group.path(), group.records)
        out.conditions = (*conds, Condition((column,), op, limit))
        out.shown = hits[:200]
        out.note = f"{how}; {compared[4]} is {limit:,.0f} {'%' if kind == PERCENT else 'bytes'}"
        return out
    ordered = sorted(sized, key=lambda s: s[0], reverse=bool(highest))
    best = ordered[:SHOWN_EXTREMES]
    found = Tally((column,), records=len(rows), highest=bool(highest), label=how)
    found.extremes = [(table.records[_index(p)][column], p, r) for _v, p, r in best]
    found.missing = len(rows) - len(sized)
    out = Exact("tally", True, path, len(best), group.path(), group.records, conds)
    out.target, out.tally = (column,), found
    ties = sum(s[0] == ordered[0][0] for s in ordered) if ordered else 0
    if ties > 1:
        out.note = f"{ties} rows share the {'highest' if highest else 'lowest'} {column}"
    return out


def _bare(column: str) -> str:
    """A column's name as a question writes it: ``cpu`` for ``CPU %`` or ``%CPU``."""
    return column.lower().strip("% ")


def _index(path: str) -> int:
    return int(path[path.rindex("[") + 1 : -1])


def _holds(v: float, op: str, limit: float) -> bool:
    return {">": v > limit, ">=": v >= limit, "<": v < limit, "<=": v <= limit}[op]


def _comparison(tokens: list[Tok]) -> tuple[str, float, str, set[int], str] | None:
    """The comparison with a size or percentage the question writes: its operator, the
    quantity, its kind, the tokens it takes and the quantity as written."""
    words = [t.text.lower() for t in tokens]
    for i, tok in enumerate(tokens):
        text, used = tok.text, {i}
        joined = text + tokens[i + 1].text if i + 1 < len(tokens) else text
        if _NUMBER.fullmatch(text) and size(joined) not in (None, size(text)):
            text, used = text + " " + tokens[i + 1].text, {i, i + 1}
        read: tuple[float, str] | None
        pct = percent(text)
        sized = size(text)
        if pct is not None:
            read = (pct, PERCENT)
        elif sized is not None and sized[1]:
            read = (sized[0], BYTES)
        else:
            continue
        op = _operator(words, min(used), max(used))
        if op is None:
            return None
        return op[0], read[0], read[1], used | op[1], text
    return None


def _operator(words: list[str], first: int, last: int) -> tuple[str, set[int]] | None:
    for before, op in _BEFORE.items():
        start = first - len(before)
        if start >= 0 and tuple(words[start:first]) == before:
            return op, set(range(start, first))
    if last + 2 < len(words) + 1 and words[last + 1 : last + 2] == ["or"]:
        after = words[last + 2] if last + 2 < len(words) else ""
        if after in _AFTER:
            return _AFTER[after], {last + 1, last + 2}
    return None
