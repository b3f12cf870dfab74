"""How a question reads against one record group: the fields it names, the conditions it
sets on them, the records it names by key, and the words it leaves unread.

"How many languages have type C?" reads, against the group ``$['639-3'][*]``, as the
condition ``type == 'C'``; "the shape InventoryConfiguration" pins the map wildcard of
``$.shapes.*`` to that member. :mod:`~taskloom.guard.exact` reads a question against every
group and answers from the one it fits best.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from functools import partial
from typing import Any

from taskloom.domain.stash import child_path
from taskloom.guard.fieldwords import key_support, mirrored, turned_mentions
from taskloom.guard.groups import WILD, Field, Group
from taskloom.guard.idvalues import (
    NOT_AN_ID,
    number_field,
    prefixed_value,
    prefixed_value_of,
    shaped_field,
)
from taskloom.guard.levels import SEVERITIES
from taskloom.guard.members import first_member, member_holders
from taskloom.guard.rank import STOPWORDS, parts_of
from taskloom.guard.recurring import recurring_holders
from taskloom.guard.stems import stem

_TOKEN = re.compile(r"\"([^\"]*)\"|'([^']*)'|`([^`]*)`|(>=|<=|!=|==|=|>|<)|([^\s\"'`,;?!()<>=]+)")
_SPECIFIC = re.compile(r"[^/]/+[^/]|\w:\w")
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
FIELD_INTRO = frozenset({"have", "has", "having", "with", "whose", "where", "by"})
"""Before a word, they make it a field: "records that have shape X"."""
_GREATER = {"more": ">", "greater": ">", "over": ">", "above": ">", "higher": ">", "larger": ">"}
_LESS = {"less": "<", "fewer": "<", "under": "<", "below": "<", "lower": "<", "smaller": "<"}
_OPS = {">": ">", "<": "<", ">=": ">=", "<=": "<=", "=": "==", "==": "==", "!=": "!="}


@dataclass(frozen=True, slots=True)
class Condition:
    field: tuple[str, ...]
    op: str
    value: Any
    within: tuple[str, ...] | None = None
    """For an array field, the key of its members the value is compared with (``()``: the
    members themselves): the condition holds when one member matches
    (:mod:`~taskloom.guard.members`)."""

    def jsonpath(self, via: tuple[str | int | None, ...] = ()) -> str:
        """The test of this condition in a filter; ``via``: the keys from the filtered
        node down to the record. A condition on an array's members is a nested filter,
        true when it selects a member: ``@.labels[?@.name=='bug']``."""
        at = "@"
        for key in (*via, *self.field):
            at = child_path(at, key)  # type: ignore[arg-type]
        if self.op == "present":  # set, and not null, empty or false
            return f"{at} && {at}!=null && {at}!='' && {at}!=false"
        test = f"{'==' if self.op == '==' else self.op}{literal(self.value)}"
        if self.within is None:
            return at + test
        member = "@"
        for key in self.within:
            member = child_path(member, key)
        return f"{at}[?{member}{test}]"

    def text(self) -> str:
        name = ".".join(self.field)
        if self.within is not None:
            name += "[*]" + "".join(f".{key}" for key in self.within)
        if self.op == "present":
            return f"{name} is present"
        return f"{name} {self.op} {literal(self.value)}"


def literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return json.dumps(value)


@dataclass(frozen=True, slots=True)
class Tok:
    text: str
    quoted: bool
    op: bool


def tokenize(question: str) -> list[Tok]:
    out = []
    for m in _TOKEN.finditer(question):
        quoted = next((g for g in m.groups()[:3] if g is not None), None)
        if quoted is not None:
            out.append(Tok(quoted, True, False))
        elif m.group(4):
            out.append(Tok(m.group(4), False, True))
        else:
            out.append(Tok(m.group(5).rstrip(".:"), False, False))
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


def _mentions(tokens: list[Tok], name: tuple[str, ...]) -> list[tuple[int, int, int]]:
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
    out += turned_mentions([t.text for t in tokens], [t.quoted or t.op for t in tokens], name)
    return sorted(set(out), key=lambda m: (-m[0], m[1]))


def _number(text: str) -> int | float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return int(value) if value.is_integer() and "." not in text else value


def _match_value(stats: Field, tokens: list[Tok], at: int) -> tuple[Any, int] | None:
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


def _comparison(tokens: list[Tok], at: int, step: int) -> tuple[str, float, int] | None:
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


def _compared_from(tokens: list[Tok], at: int) -> int:
    """The first token of the comparison written just before token ``at``."""
    for size in (3, 2):
        got = _comparison(tokens, at - size, 1) if at >= size else None
        if got is not None and got[2] == at:
            return at - size
    return at


@dataclass(slots=True)
class Reading:
    """What the question says of one group: its conditions (``bare`` of them read from a
    value alone), the fields it asks for, the tokens the conditions use, and the words
    that name several fields at once (``login`` for ``user.login`` and ``assignee.login``)."""

    conditions: list[Condition]
    bare: int
    targets: list[tuple[str, ...]]
    used: set[int]
    ambiguous: list[tuple[str, list[tuple[str, ...]]]]
    named: set[int]
    """The tokens that name a field the question sets no condition on."""


def _condition(
    stats: Field, name: tuple[str, ...], tokens: list[Tok], start: int, stop: int, flags: bool
) -> tuple[Condition, range] | None:
    """The condition the question sets on the field it names at ``start:stop``, and the
    tokens it takes, if any."""
    at = stop
    while at < len(tokens) and tokens[at].text.lower() in _CONNECT and not tokens[at].op:
        at += 1
    ahead = _comparison(tokens, at, 1)
    cmp = ahead or _comparison(tokens, start, -1)
    if cmp is not None:
        if "number" in stats.kinds:
            span = range(start, cmp[2]) if ahead else range(_compared_from(tokens, start), stop)
            return Condition(name, cmp[0], cmp[1]), span
        return None
    value = _match_value(stats, tokens, at)
    if value is not None:
        return Condition(name, "==", value[0]), range(start, value[1])
    member = first_member(stats, lambda inner: _match_value(inner, tokens, at))
    if member is not None:
        (held, after) = member[1]
        return Condition(name, "==", held, member[0]), range(start, after)
    before = _value_before(stats, tokens, start)
    if before is not None:
        return Condition(name, "==", before[0]), range(before[1], stop)
    if flags and "bool" in stats.kinds and stats.kinds <= {"bool", "null"}:
        denied = negated(tokens, start)
        return Condition(name, "==", not denied), range(start - denied, stop)
    return None


def _value_before(stats: Field, tokens: list[Tok], start: int) -> tuple[Any, int] | None:
    """A text value the field holds written just before its name, in up to four words
    ("delete actions", "human actor", "did Ivo Nguyen author"), and its first token; or
    ``None``."""
    if stats.many:
        return None
    for size in (4, 3, 2, 1):
        piece = tokens[start - size : start] if start >= size else []
        if not piece or any(t.op or (size > 1 and t.quoted) for t in piece):
            continue
        words = [t.text.lower() for t in piece]
        if words[0] in STOPWORDS or words[0] in _CONNECT or words[-1] in _CONNECT:
            continue
        value = _held(stats, " ".join(t.text for t in piece), piece[0].quoted)
        if isinstance(value, str):
            return value, start - size
    return None


def conditions(group: Group, tokens: list[Tok], selects: bool = False) -> Reading:
    """What the question says of ``group``'s fields (see :class:`Reading`); of the fields
    it names with no condition, the one whose other words the question also says is asked
    for first.

    A field named by its last key alone (``login``), which other fields of the group end
    with too, is read only when one of them holds the value written after it; else the
    word is ambiguous and no field takes it. In a count or a list (``selects``), a
    true-or-false field named with no value is a condition that it is true ("how many
    events are resolved?"), false after a negation ("… are not resolved?"), unless the
    question writes ``true`` or ``false`` itself."""
    flags = selects and not any(t.text.lower() in ("true", "false") for t in tokens)
    found: list[Condition] = []
    used: set[int] = set()
    unresolved: list[tuple[int, int, tuple[str, ...]]] = []
    ambiguous: list[tuple[str, list[tuple[str, ...]]]] = []
    segments = {p.lower().rstrip("s") for p in group.pattern if isinstance(p, str)}
    mentions = [
        (sure, -len(name), start, stop, name)
        for name in group.fields
        for sure, start, stop in _mentions(tokens, name)
    ]
    alike: dict[tuple[int, int], list[tuple[str, ...]]] = {}
    for sure, _len, start, stop, name in mentions:
        if sure == 1:
            alike.setdefault((start, stop), []).append(name)
    for sure, _len, start, stop, name in sorted(mentions, key=lambda m: (-m[0], m[1], m[2])):
        stats = group.fields[name]
        if used & set(range(start, stop)):
            continue
        if _names_record(tokens, start, stop, segments):
            continue
        rivals = alike.get((start, stop), []) if sure == 1 else []
        if len(rivals) > 1:
            readings = [
                (other, got)
                for other in rivals
                if (got := _condition(group.fields[other], other, tokens, start, stop, flags))
            ]
            if len(readings) > 1:
                word = " ".join(t.text for t in tokens[start:stop])
                ambiguous.append((word, rivals))
                used.update(range(start, stop))
                continue
            if readings and readings[0][0] != name:
                continue  # the field that holds the value takes the word
        got = _condition(stats, name, tokens, start, stop, flags)
        if got is not None and used & set(got[1]):
            got = None
        if got is not None:
            found.append(got[0])
            used.update(got[1])
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
    mentioned = {i for start, stop, _name in unresolved for i in range(start, stop)}
    values, taken = _bare_values(group, tokens, used | mentioned)
    found += values
    bare = sum(1 for c in values if not (isinstance(c.value, str) and _hashed(c.value, tokens)))
    used |= taken
    targets = [name for _start, (_n, name) in sorted(best.items())]
    return Reading(found, bare, targets, used, ambiguous, mentioned - used)


def connective(word: str) -> bool:
    """Whether ``word`` joins a field to its value ("is", "with", "whose", "the")."""
    return word in _CONNECT


def negated(tokens: list[Tok], at: int) -> bool:
    """Whether the word before token ``at`` negates it: "not", "no", "never", "non", or
    a contraction's "n't" ("aren't")."""
    if at < 1:
        return False
    word = tokens[at - 1].text.lower()
    if word in ("not", "no", "never", "non"):
        return True
    return word == "t" and at >= 2 and tokens[at - 2].text.lower().endswith("n")


def _hashed(value: str, tokens: list[Tok]) -> bool:
    """Whether the question writes ``value`` as an abbreviated hash: a condition as sure
    as a field named with its value, since one record's value begins so."""
    return any(prefixed_value_of(value, t.text) for t in tokens)


def _bare_values(
    group: Group, tokens: list[Tok], used: set[int]
) -> tuple[list[Condition], set[int]]:
    """Conditions from values alone: a word (or quoted phrase) of the question that exactly
    one field of the group holds, a field of few distinct values unless the word is quoted
    or an identifier (``req-08094-3ad2``) or a value it repeats
    (:mod:`~taskloom.guard.recurring`); failing that, a severity in another case or
    number, or another form of a one-word value ("skipped" for ``skip``)."""
    found: list[Condition] = []
    taken: set[int] = set()
    said = [t.text for t in tokens if not t.quoted]
    for i, tok in enumerate(tokens):
        if i in used or tok.op or (not tok.quoted and tok.text.lower() in STOPWORDS):
            continue
        if not tok.quoted and (
            tok.text.lower() in _CONNECT or tok.text.lower() == group.name.lower()
        ):
            continue
        holders = [name for name, stats in group.fields.items() if _few_hold(stats, tok=tok)]
        value = tok.text
        holders = mirrored(group, holders, ("string", value), said)
        if not holders and not tok.quoted:
            holders = recurring_holders(group, tok.text)
        if not holders and not tok.quoted:
            holders, value = _level_holders(group, tok.text)
        if not holders and not tok.quoted:
            holders, value = _stem_holders(group, tok.text)
        inside = [] if holders else member_holders(group, partial(_few_hold, tok=tok))
        if len(inside) == 1:
            found.append(Condition(inside[0][0], "==", tok.text, inside[0][1]))
            taken.add(i)
            continue
        if len(holders) == 1:
            found.append(Condition(holders[0], "==", value))
            taken.add(i)
        elif not holders and not tok.quoted:
            got = _id_condition(group, tokens, i) or _code_condition(group, tokens, i)
            if got is not None:
                found.append(got)
                taken.add(i)
    return found, taken


def _few_hold(stats: Field, *, tok: Tok) -> bool:
    """Whether a field holds the word as one of its values, and so takes it alone as a
    condition: a field of few distinct values, unless the word is quoted, an identifier,
    a path (``src/app.py``: a ``/`` between its parts) or a tag (``env:prod``)."""
    return ("string", tok.text) in stats.values and (
        tok.quoted or identifier(tok.text) or _few(stats) or bool(_SPECIFIC.search(tok.text))
    )


def _few(stats: Field) -> bool:
    """Whether a field holds few distinct values: at most 20, or one in 50 records."""
    return bool(stats.present and len(stats.values) <= max(20, stats.present // 50))


def _stem_holders(group: Group, word: str) -> tuple[list[tuple[str, ...]], str]:
    """The field of few values holding the one one-word value whose stem is ``word``'s
    (:mod:`~taskloom.guard.stems`: "skipped" for ``skip``, "sdists" for ``sdist``,
    "running" for ``Running``), and that value; else no field."""
    root = stem(word)
    if len(root) < 3 or not any(c.isalpha() for c in root):
        return [], word
    found = [
        (name, v)
        for name, stats in group.fields.items()
        if not stats.many and _few(stats)
        for kind, v in stats.values
        if kind == "string" and v != word and " " not in v and stem(v) == root
    ]
    return ([found[0][0]], found[0][1]) if len(found) == 1 else ([], word)


def _level_holders(group: Group, word: str) -> tuple[list[tuple[str, ...]], str]:
    """The fields of few values that hold a severity ``word`` names in another case or
    number ("errors" for ``ERROR``), and that value."""
    low = word.lower()
    if low not in SEVERITIES and low.rstrip("s") not in SEVERITIES:
        return [], word
    found = [
        (name, v)
        for name, stats in group.fields.items()
        if not stats.many
        for kind, v in stats.values
        if kind == "string" and v.lower() in (low, low.rstrip("s"))
    ]
    return [n for n, _v in found], (found[0][1] if len(found) == 1 else word)


def _id_condition(group: Group, tokens: list[Tok], at: int) -> Condition | None:
    """The condition an id sets (:mod:`~taskloom.guard.idvalues`): a number after a word,
    or an identifier no indexed value holds."""
    text = tokens[at].text
    number = _number(text)
    prefixed = prefixed_value(group, text)
    if prefixed is not None:
        return Condition(prefixed[0], "==", prefixed[1])
    if isinstance(number, int) and text.isdigit() and at and not tokens[at - 1].op:
        name = number_field(group, tokens[at - 1].text, number)
        return None if name is None else Condition(name, "==", number)
    if identifier(text):
        name = shaped_field(group, text)
        return None if name is None else Condition(name, "==", text)
    return None


def _code_condition(group: Group, tokens: list[Tok], at: int) -> Condition | None:
    """The condition a bare whole number sets when exactly one field of few distinct values
    holds it ("requests that returned 404": ``status == 404``); not after a word of
    position, size or comparison ("top 5", "more than 3")."""
    text = tokens[at].text
    before = tokens[at - 1].text.lower() if at else ""
    if not text.isdigit() or (at and tokens[at - 1].op):
        return None
    if before in NOT_AN_ID or before in _GREATER or before in _LESS or before == "than":
        return None
    number = int(text)
    holders = [
        name
        for name, stats in group.fields.items()
        if not stats.many and _few(stats) and ("number", number) in stats.values
    ]
    return Condition(holders[0], "==", number) if len(holders) == 1 else None


def identifier(word: str) -> bool:
    """Whether ``word`` reads as an identifier: letters and digits both, four or more
    characters."""
    return len(word) >= 4 and any(c.isdigit() for c in word) and any(c.isalpha() for c in word)


def _names_record(tokens: list[Tok], start: int, stop: int, segments: set[str]) -> bool:
    """Whether the word at ``start`` names a collection of the group rather than a field:
    "the shape X" (the record X), "how many shapes have …" (the records); only after
    "have" or "with" is it the field ("members that have shape X")."""
    if stop - start != 1:
        return False
    word = tokens[start].text.lower().rstrip("s")
    before = tokens[start - 1].text.lower() if start else ""
    return word in segments and before not in FIELD_INTRO


def named_parts(group: Group, tokens: list[Tok]) -> int:
    """How many of the group's collections the question names (``shapes`` in
    ``$.shapes.*``, ``members`` in ``$.shapes.*.members.*``); a word after "have" or
    "with" is a field, not a collection."""
    said = {
        t.text.lower().rstrip("s")
        for i, t in enumerate(tokens)
        if not t.quoted and not (i and tokens[i - 1].text.lower() in FIELD_INTRO)
    }
    pattern = group.pattern
    return sum(
        1
        for p, after in itertools.pairwise(pattern)
        if isinstance(p, str) and after is WILD and p.lower().rstrip("s") in said
    )


def support(name: tuple[str, ...], tokens: list[Tok]) -> int:
    """How many keys of an asked field's path the question says (``owner`` and
    ``repos_url`` for ``owner.repos_url``): the more, the surer it is the field meant."""
    return key_support(name, [t.text for t in tokens if not t.quoted])


def pin(
    group: Group, tokens: list[Tok], taken: set[int]
) -> tuple[tuple[str | int | None, ...], set[int]]:
    """The group's pattern with each map wildcard the question names a member of (as
    written, by a word no condition uses) replaced by that member (``$.shapes.*`` →
    ``$.shapes.InventoryConfiguration``), and the tokens that name them."""
    pattern = list(group.pattern)
    pinned: set[int] = set()
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
            pinned.add(exact[0])
            used.add(exact[0])
    return tuple(pattern), pinned
