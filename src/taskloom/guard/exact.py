"""Exact answers to count, list-all and filter questions, with the JSONPath that gives them.

"How many languages have type C?" has one right answer, which a ranking of three records
only looks like. :func:`answer` reads such a question against the result's own records:

1. records are grouped by where they sit (:mod:`~taskloom.guard.groups`): the items of an
   array, or the members of a map of records (``$.shapes.*``), with the fields they hold;
2. a field the question names (``type``; ``site admin`` for ``site_admin``) followed by a
   value that field holds in the group (``C``, ``'open'``, ``true``) or by a comparison
   (``more than 10``, ``>= 3``) is a condition; with none, a value of the question that
   only one field of the group holds is one;
3. the group with the most conditions (then the one the question names, then the largest)
   is queried with the JSONPath the conditions make, and every match is counted.

The answer is the count, the matches, or the values of the field the question asks for,
with the JSONPath, which ``read_result(path=...)`` pages through. A count or list question
whose conditions cannot be read off the data gets no count: it is told so, with a JSONPath
built from the data's own fields to adapt.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from taskloom.domain.stash import child_path
from taskloom.guard.groups import WILD, Field, Group, groups
from taskloom.guard.jsondoc import JsonDoc
from taskloom.guard.jsonpath import find, path_of
from taskloom.guard.rank import STOPWORDS, parts_of

MAX_SHOWN = 200
"""Matches whose values an answer carries; the rest are paged with ``read_result``."""

_COUNT = re.compile(r"\b(?:how many|number of|count|total of)\b", re.I)
_LIST = re.compile(r"^\s*(?:list|enumerate|name all|which|what are)\b|\b(?:all|every|each)\b", re.I)
_TOKEN = re.compile(r"\"([^\"]*)\"|'([^']*)'|`([^`]*)`|(>=|<=|!=|==|=|>|<)|([^\s\"'`,;?!()<>=]+)")
_CONNECT = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "being",
        "equals",
        "equal",
        "to",
        "of",
        "as",
        "set",
        "with",
        "has",
        "have",
        "having",
        "a",
        "an",
        "the",
        "that",
        "value",
        "field",
        ":",
        "whose",
        "where",
    ]
)
_DETERMINERS = frozenset({"the", "a", "an", "this", "that"})
"""Before a collection's name, they make it name a record: "the shape X"."""
_FIELD_INTRO = frozenset({"have", "has", "having", "with", "whose", "where", "by"})
"""Before a word, they make it a field: "records that have shape X"."""
_GREATER = {"more": ">", "greater": ">", "over": ">", "above": ">", "higher": ">", "larger": ">"}
_LESS = {"less": "<", "fewer": "<", "under": "<", "below": "<", "lower": "<", "smaller": "<"}
_OPS = {">": ">", "<": "<", ">=": ">=", "<=": "<=", "=": "==", "==": "==", "!=": "!="}


@dataclass(frozen=True, slots=True)
class Condition:
    field: tuple[str, ...]
    op: str
    value: Any

    def jsonpath(self, via: tuple[str | int | None, ...] = ()) -> str:
        """The test of this condition in a filter; ``via``: the keys from the filtered
        node down to the record."""
        at = "@"
        for key in (*via, *self.field):
            at = child_path(at, key)  # type: ignore[arg-type]
        return f"{at}{'==' if self.op == '==' else self.op}{_literal(self.value)}"

    def text(self) -> str:
        return f"{'.'.join(self.field)} {self.op} {_literal(self.value)}"


@dataclass(slots=True)
class Exact:
    """An exact answer (``exact``), or why there is none and what to ask instead."""

    kind: str  # "count" | "list" | "lookup"
    exact: bool
    path: str = ""
    total: int = 0
    group: str = ""
    records: int = 0
    conditions: tuple[Condition, ...] = ()
    target: tuple[str, ...] = ()
    shown: list[tuple[str, Any]] = field(default_factory=list)
    names: list[int | str] = field(default_factory=list)
    """The last path part (member name or index) of each match shown."""
    note: str = ""


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return json.dumps(value)


# --- reading the question -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Tok:
    text: str
    quoted: bool
    op: bool


def _tokens(question: str) -> list[_Tok]:
    out = []
    for m in _TOKEN.finditer(question):
        quoted = next((g for g in m.groups()[:3] if g is not None), None)
        if quoted is not None:
            out.append(_Tok(quoted, True, False))
        elif m.group(4):
            out.append(_Tok(m.group(4), False, True))
        else:
            out.append(_Tok(m.group(5).rstrip(".:"), False, False))
    return [t for t in out if t.text or t.quoted]


def _names(name: tuple[str, ...]) -> list[tuple[list[str], int]]:
    """How a question may write a field, and how surely that names it: its whole name
    (``type``, ``user.login``, ``user login``, ``site admin``: 2), or for a nested field
    its last key alone (``login``: 1)."""
    key = name[-1]
    if len(name) == 1:
        spelled = [([key.lower()], 2), (parts_of(key), 2)]
    else:
        whole = [p for part in name for p in parts_of(part)]
        spelled = [
            ([".".join(name).lower()], 2),
            (whole, 2),
            ([key.lower()], 1),
            (parts_of(key), 1),
        ]
    return [(words, sure) for words, sure in spelled if words]


def _mentions(tokens: list[_Tok], name: tuple[str, ...]) -> list[tuple[int, int, int]]:
    """Where the question names the field: (how surely, first token, token after)."""
    low = [t.text.lower() for t in tokens]
    out = []
    for spelled, sure in _names(name):
        n = len(spelled)
        for i in range(len(low) - n + 1):
            got = low[i : i + n]
            same = got == spelled or (n == 1 and got[0].rstrip("s") == spelled[0].rstrip("s"))
            if same and not any(t.quoted for t in tokens[i : i + n]):
                out.append((sure, i, i + n))
    return sorted(set(out), key=lambda m: (-m[0], m[1]))


def _number(text: str) -> int | float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return int(value) if value.is_integer() and "." not in text else value


def _match_value(stats: Field, tokens: list[_Tok], at: int) -> tuple[Any, int] | None:
    """A value the field holds, written from token ``at``, and the token after it."""
    for size in (4, 3, 2, 1):
        piece = tokens[at : at + size]
        if len(piece) < size or (size > 1 and any(t.quoted or t.op for t in piece)):
            continue
        text = " ".join(t.text for t in piece)
        hit = _held(stats, text, piece[0].quoted)
        if hit is not None:
            return hit, at + size
    return None


def _held(stats: Field, text: str, quoted: bool) -> Any:
    if ("string", text) in stats.values:
        return text
    if quoted and "\\" in text:  # written as a JSON string: "^[^\\$]+$"
        try:
            unescaped = json.loads(f'"{text}"')
        except ValueError:
            unescaped = None
        if ("string", unescaped) in stats.values:
            return unescaped
    number = _number(text)
    if number is not None and ("number", number) in stats.values:
        return number
    if text in ("true", "false") and ("bool", text == "true") in stats.values:
        return text == "true"
    if text == "null" and ("null", None) in stats.values:
        return None
    lowered = [v for kind, v in stats.values if kind == "string" and v.lower() == text.lower()]
    if len(lowered) == 1:
        return lowered[0]
    if stats.many and quoted and "string" in stats.kinds:
        return text
    if stats.many and number is not None and stats.kinds == {"number"}:
        return number
    return None


def _comparison(tokens: list[_Tok], at: int, step: int) -> tuple[str, float, int] | None:
    """``more than 10`` / ``> 10`` / ``at least 3`` read from ``at`` on (``step`` 1) or as
    the words just before it (``step`` -1: "more than 10 comments")."""
    words = [t.text.lower() for t in tokens]
    if step < 0:
        for size in (3, 2):
            start = at - size
            if start >= 0:
                got = _comparison(tokens, start, 1)
                if got is not None and got[2] == at:
                    return got
        return None
    i = at
    op = None
    if i < len(words) and tokens[i].op and tokens[i].text in _OPS:
        op, i = _OPS[tokens[i].text], i + 1
    elif i + 1 < len(words) and words[i] == "at" and words[i + 1] in ("least", "most"):
        op, i = (">=" if words[i + 1] == "least" else "<="), i + 2
    elif i < len(words) and (words[i] in _GREATER or words[i] in _LESS):
        op = _GREATER.get(words[i]) or _LESS[words[i]]
        i += 2 if i + 1 < len(words) and words[i + 1] == "than" else 1
    if op is None or op == "==" or i >= len(words):
        return None
    number = _number(words[i])
    return None if number is None else (op, number, i + 1)


def _conditions(
    group: Group, tokens: list[_Tok]
) -> tuple[list[Condition], int, list[tuple[str, ...]], set[int]]:
    """The conditions the question sets on ``group``'s fields, how many of them come from
    a value alone, the fields it names with no condition (the fields it asks for, the one
    whose other words the question also says first), and the tokens the conditions use."""
    found: list[Condition] = []
    used: set[int] = set()
    unresolved: list[tuple[int, int, tuple[str, ...]]] = []
    segments = {p.lower().rstrip("s") for p in group.pattern if isinstance(p, str)}
    mentions = [
        (sure, -len(name), start, stop, name)
        for name in group.fields
        for sure, start, stop in _mentions(tokens, name)
    ]
    for _sure, _len, start, stop, name in sorted(mentions, key=lambda m: (-m[0], m[1], m[2])):
        stats = group.fields[name]
        if used & set(range(start, stop)):
            continue
        if _names_record(tokens, start, stop, segments):
            continue
        at = stop
        while at < len(tokens) and tokens[at].text.lower() in _CONNECT and not tokens[at].op:
            at += 1
        cmp = _comparison(tokens, at, 1) or _comparison(tokens, start, -1)
        value = _match_value(stats, tokens, at) if cmp is None else None
        if cmp is not None and "number" in stats.kinds:
            found.append(Condition(name, cmp[0], cmp[1]))
            used.update(range(start, stop))
        elif value is not None:
            found.append(Condition(name, "==", value[0]))
            used.update(range(start, value[1]))
        elif not (stop - start == 1 and tokens[start].text.lower().rstrip("s") in segments):
            unresolved.append((start, stop, name))  # "the shape X" names the record instead
    said = {t.text.lower() for i, t in enumerate(tokens) if i not in used}
    best: dict[int, tuple[int, tuple[str, ...]]] = {}
    for start, stop, name in unresolved:
        if used & set(range(start, stop)):
            continue
        support = sum(1 for part in name if part.lower() in said)
        if start not in best or support > best[start][0]:
            best[start] = (support, name)
    bare = 0
    if not found:
        mentioned = {i for start, stop, _name in unresolved for i in range(start, stop)}
        found, taken = _bare_values(group, tokens, used | mentioned)
        bare = len(found)
        used |= taken
    return found, bare, [name for _start, (_n, name) in sorted(best.items())], used


def _bare_values(
    group: Group, tokens: list[_Tok], used: set[int]
) -> tuple[list[Condition], set[int]]:
    """Conditions from values alone: a word (or quoted phrase) of the question that exactly
    one field of the group holds."""
    found: list[Condition] = []
    taken: set[int] = set()
    for i, tok in enumerate(tokens):
        if i in used or tok.op or (not tok.quoted and tok.text.lower() in STOPWORDS):
            continue
        if not tok.quoted and (
            tok.text.lower() in _CONNECT or tok.text.lower() == group.name.lower()
        ):
            continue
        holders = [
            name
            for name, stats in group.fields.items()
            if ("string", tok.text) in stats.values
            and (
                tok.quoted or (stats.present and len(stats.values) <= max(20, stats.present // 50))
            )
        ]
        if len(holders) == 1:
            found.append(Condition(holders[0], "==", tok.text))
            taken.add(i)
    return found, taken


def _names_record(tokens: list[_Tok], start: int, stop: int, segments: set[str]) -> bool:
    """Whether the word at ``start`` names a collection of the group rather than a field:
    "the shape X" (the record X), "how many shapes have …" (the records); only after
    "have" or "with" is it the field ("members that have shape X")."""
    if stop - start != 1:
        return False
    word = tokens[start].text.lower().rstrip("s")
    before = tokens[start - 1].text.lower() if start else ""
    return word in segments and before not in _FIELD_INTRO


def _named_parts(group: Group, tokens: list[_Tok]) -> int:
    """How many of the group's collections the question names (``shapes`` in
    ``$.shapes.*``, ``members`` in ``$.shapes.*.members.*``); a word after "have" or
    "with" is a field, not a collection."""
    said = {
        t.text.lower().rstrip("s")
        for i, t in enumerate(tokens)
        if not t.quoted and not (i and tokens[i - 1].text.lower() in _FIELD_INTRO)
    }
    pattern = group.pattern
    return sum(
        1
        for p, after in itertools.pairwise(pattern)
        if isinstance(p, str) and after is WILD and p.lower().rstrip("s") in said
    )


def _support(name: tuple[str, ...], tokens: list[_Tok]) -> int:
    """How many keys of an asked field's path the question says (``owner`` and
    ``repos_url`` for ``owner.repos_url``): the more, the surer it is the field meant."""
    said = {t.text.lower().rstrip("s") for t in tokens if not t.quoted}
    return 1 + sum(1 for part in name if part.lower().rstrip("s") in said)


def _pins(
    group: Group, tokens: list[_Tok], taken: set[int]
) -> tuple[tuple[str | int | None, ...], int]:
    """The group's pattern with each map wildcard the question names a member of (as
    written, by a word no condition uses) replaced by that member (``$.shapes.*`` →
    ``$.shapes.InventoryConfiguration``)."""
    pattern = list(group.pattern)
    pinned = 0
    collections = {
        p.lower().rstrip("s")
        for p, after in itertools.pairwise(pattern)
        if isinstance(p, str) and after is WILD
    }
    used = set(taken) | {
        i for i, t in enumerate(tokens) if t.text.lower().rstrip("s") in collections
    }
    for at, names in group.keys.items():
        exact = [i for i, t in enumerate(tokens) if t.text in names and i not in used]
        if exact:
            pattern[at] = tokens[exact[0]].text
            pinned += 1
            used.add(exact[0])
    return tuple(pattern), pinned


def intent(question: str) -> str | None:
    """``"count"``, ``"list"`` or ``None`` (a lookup or an open question)."""
    if _COUNT.search(question):
        return "count"
    if _LIST.search(question):
        return "list"
    return None


def answer(doc: JsonDoc, question: str) -> Exact | None:
    """The exact answer to ``question`` over ``doc``, an :class:`Exact` saying why there is
    none for a count or list question, or ``None`` when the question is no such question
    and no filter answers it (the ranking answers it then)."""
    kind = intent(question)
    tokens = _tokens(question)
    best: tuple[tuple[int, ...], Group, list[Condition], list[Any], int] | None = None
    found_groups = groups(doc)
    for group in found_groups:
        conds, bare, targets, used = _conditions(group, tokens)
        pattern, pinned = _pins(group, tokens, used)
        named = _named_parts(group, tokens)
        said = len(conds) - bare
        asks = _support(targets[0], tokens) if targets else 0
        left = pattern.count(WILD)  # a record the question names beats a group of them
        score = (said + pinned, named, said, asks, bare, -left, group.records, -len(pattern))
        if best is None or score > best[0]:
            best = (score, Group(pattern, group.records, group.fields), conds, targets, pinned)
    if best is None:
        if kind is None:
            return None
        return Exact(kind, False, note="this result holds no list of records to count or list")
    (said, named, _conds, _asks, bare, _left, _size, _depth), group, conds, targets, pinned = best
    main = found_groups[0] is not None and (
        len(found_groups) == 1 or found_groups[0].records >= 2 * found_groups[1].records
    )
    asked = [t for t in targets if not group.fields[t].kinds <= {"object", "array"}]
    if WILD not in group.pattern:  # one record, named: the field asked of it
        if not targets or (kind == "count" and asked):
            return None
        found = _evaluate(doc, kind or "lookup", group, (), targets[0])
    elif kind == "count" and asked:
        return _not_exact(kind, group, asked[0])
    elif not said and not bare and not (kind == "count" and (named or main)):
        return None if kind is None else _not_exact(kind, group)
    else:
        found = _evaluate(doc, kind or "lookup", group, tuple(conds), targets[0] if targets else ())
    if not found.total and (kind != "count" or pinned):
        return None  # nothing matches the question as read: the ranking answers instead
    return found


def filter_path(group: Group, conds: tuple[Condition, ...], target: tuple[str, ...] = ()) -> str:
    """The JSONPath selecting the records of ``group`` that meet ``conds`` (or their
    ``target`` field)."""
    if not conds:
        base = group.path()
    else:
        last = max(i for i, p in enumerate(group.pattern) if p is WILD)
        via = group.pattern[last + 1 :]
        head = Group(group.pattern[:last]).path()
        base = head + "[?" + " && ".join(c.jsonpath(via) for c in conds) + "]"
        for key in via:
            base = child_path(base, key)  # type: ignore[arg-type]
    for key in target:
        base = child_path(base, key)
    return base


def _evaluate(
    doc: JsonDoc, kind: str, group: Group, conds: tuple[Condition, ...], target: tuple[str, ...]
) -> Exact:
    counted = kind == "count" and WILD in group.pattern
    path = filter_path(group, conds, () if counted else target)
    if kind == "count" and not counted:
        path += "[*]"  # the members of the named record's field
    out = Exact(kind, True, path, group=group.path(), records=group.records, conditions=conds)
    out.target = () if counted else target
    for parts, value in find(doc.root(), path):
        out.total += 1
        if len(out.shown) < MAX_SHOWN:
            out.shown.append((path_of(parts), value))
            out.names.append(parts[-1] if parts else "$")
    return out


def _not_exact(kind: str, group: Group, named: tuple[str, ...] = ()) -> Exact:
    """No condition could be read off the data: say so, with a filter to adapt."""
    example = _example(group, named)
    fields = ", ".join(".".join(n) for n in list(group.fields)[:12])
    what = (
        f"the question names {'.'.join(named)} but no value of it this result holds"
        if named
        else "no field and value of this result could be read from the question"
    )
    note = (
        f"{what}, so this is no {kind}. A JSONPath filter gives it exactly, e.g. {example}"
        f" (the {group.records:,} records of {group.path()} have fields: {fields})"
    )
    if named and named in group.fields:
        stats = group.fields[named]
        common = [_literal(v) for (_k, v), _n in stats.values.most_common(8)]
        note += f"; values of {'.'.join(named)} include {', '.join(common)}"
    return Exact(kind, False, group=group.path(), records=group.records, note=note)


def _example(group: Group, named: tuple[str, ...] = ()) -> str:
    """A filter on the field the question names, else on the group's most categorical
    field, with one of its values."""
    ranked = sorted(
        ((n, s) for n, s in group.fields.items() if s.values and not s.many),
        key=lambda f: (f[0] != named, len(f[1].values) < 2, len(f[1].values), f[0]),
    )
    if not ranked:
        return filter_path(group, ()) + " (add a filter [?@.field=='value'])"
    name, stats = ranked[0]
    value = stats.values.most_common(1)[0][0][1]
    return filter_path(group, (Condition(name, "==", value),))
