"""Exact answers to count, list-all and filter questions, with the JSONPath that gives them.

"How many languages have type C?" has one right answer, which a ranking of three records
only looks like. :func:`answer` reads such a question against the result's own records:

1. records are grouped by where they sit (:mod:`~taskloom.guard.groups`): the items of an
   array, or the members of a map of records (``$.shapes.*``), with the fields they hold;
2. the question is read against each group (:mod:`~taskloom.guard.question`): a field
   it names (``type``; ``site admin`` for ``site_admin``) followed by a value that field
   holds in the group (``C``, ``'open'``, ``true``) or by a comparison (``more than 10``,
   ``>= 3``) is a condition; with none, a value of the question that only one field of
   the group holds is one;
3. the group with the most conditions (then the one the question names, then the largest)
   is queried with the JSONPath the conditions make, and every match is counted.

The answer is the count, the matches, or the values of the field the question asks for,
with the JSONPath, which ``read_result(path=...)`` pages through. A count or list question
whose conditions cannot be read off the data gets no count: it is told so, with a JSONPath
built from the data's own fields to adapt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from taskloom.domain.stash import child_path
from taskloom.guard.filetally import file_field, tally_files
from taskloom.guard.flags import add_flags
from taskloom.guard.groups import WILD, Field, Group, groups
from taskloom.guard.jsondoc import JsonDoc
from taskloom.guard.jsonpath import find, path_of
from taskloom.guard.loose import held_word, loose_words
from taskloom.guard.nested import (
    add_empties,
    add_pairs,
    counted_members,
    holder_path,
    member_path,
    noun,
    outer_of,
    unwrapped,
)
from taskloom.guard.presence import add_presence
from taskloom.guard.question import (
    Condition,
    Reading,
    Tok,
    conditions,
    identifier,
    literal,
    named_parts,
    pin,
    support,
    tokenize,
)
from taskloom.guard.rank import parts_of
from taskloom.guard.speed import measured_field
from taskloom.guard.stems import stem
from taskloom.guard.sums import rank_sums, summed_member
from taskloom.guard.tally import Tally, asks_tally, extreme, ranks_numbers, says_tally, tally
from taskloom.guard.totals import asks_total

MAX_SHOWN = 200
"""Matches whose values an answer carries; the rest are paged with ``read_result``."""

_COUNT = re.compile(r"\b(?:how many|number of|count|total of)\b", re.I)
_LIST = re.compile(r"^\s*(?:list|enumerate|name all|which|what are)\b|\b(?:all|every|each)\b", re.I)


@dataclass(slots=True)
class Exact:
    """An exact answer (``exact``), or why there is none and what to ask instead."""

    kind: str  # "count" | "list" | "lookup" | "tally"
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
    tally: Tally | None = None
    """For kind ``"tally"``: the asked field's values over the selected records."""


def intent(question: str) -> str | None:
    """``"count"``, ``"list"`` or ``None`` (a lookup or an open question)."""
    if _COUNT.search(question):
        return "count"
    if _LIST.search(question):
        return "list"
    return None


@dataclass(slots=True)
class _Choice:
    score: tuple[int, ...]
    group: Group
    """The group as the question pins it (``$.shapes.InventoryConfiguration``)."""
    found: Group
    """The group as found (``$.shapes[*]``)."""
    read: Reading
    pinned: set[int]


def answer(doc: JsonDoc, question: str) -> Exact | None:
    """The exact answer to ``question`` over ``doc``, an :class:`Exact` saying why there is
    none for a count or list question, or ``None`` when the question is no such question
    and no filter answers it (the ranking answers it then).

    A group whose records a wider group holds too (``$.paths[*].get`` within
    ``$.paths[*][*]``) is read only when the question names it (``get``). Two groups that
    fit the question equally well with different conditions (``login u3``
    read as the login of each issue's ``user`` and of its ``assignee``) make no exact
    answer: which one is meant is a guess."""
    kind = intent(question)
    tokens = tokenize(question)
    best: _Choice | None = None
    rival: _Choice | None = None
    found_groups = groups(doc)
    choices: list[_Choice] = []
    said_words = {t.text.lower() for t in tokens}
    for group in found_groups:
        if group.folded and not {n.lower() for n in group.folded} & said_words:
            continue  # the wider group holds these records; only its name would pick them
        read = conditions(group, tokens, kind is not None)
        add_flags(group, tokens, read, kind is not None)
        add_presence(group, tokens, read, kind is not None)
        add_empties(group, tokens, read, kind is not None)
        add_pairs(group, tokens, read)
        pattern, pins = pin(group, tokens, read.used)
        named = named_parts(group, tokens)
        said = len(read.conditions) - read.bare
        asks = support(read.targets[0], tokens) if read.targets else 0
        left = pattern.count(WILD)  # a record the question names beats a group of them
        score = (
            said + len(pins), named, said, asks, read.bare, -left, group.records, -len(pattern)
        )  # fmt: skip
        choice = _Choice(score, Group(pattern, group.records, group.fields), group, read, pins)
        choices.append(choice)
        if best is None or score > best.score:
            best, rival = choice, None
        elif score == best.score and read.conditions and rival is None:
            rival = choice
    if kind is None and best is not None and not best.read.targets:
        inner = [c for c in choices if unwrapped(best.found, best.read, c.found, c.read)]
        best, rival = (inner[0], None) if len(inner) == 1 else (best, rival)
    if best is None:
        if kind is None:
            return None
        return Exact(kind, False, note="this result holds no list of records to count or list")
    if kind != "count" and (highest := extreme(question)) is not None:
        summed = _summed(doc, choices, tokens, highest)
        if summed is not None:
            return summed
    ranks = _ranked_by(best.group, question, ())  # "… the most missed statements?" ranks
    if kind != "count" and says_tally(question) and not best.read.targets and ranks is None:
        files = _files(doc, best, tokens)  # "which file has the most results?"
        if files is not None:
            return files
    group, read, pinned = best.group, best.read, best.pinned
    conds, targets = read.conditions, read.targets
    said, named, bare = best.score[0], best.score[1], read.bare  # said: conditions and pins
    if rival is not None and conds:
        ours = filter_path(group, tuple(conds))
        theirs = filter_path(rival.group, tuple(rival.read.conditions))
        if ours != theirs:
            return None if kind is None else _not_exact(kind, group, why=_tie(ours, theirs))
    asked = [t for t in targets if not group.fields[t].kinds <= {"object", "array"}]
    tallied = asked and kind != "count" and WILD in group.pattern
    if tallied and _unread_identifier(tokens, read.used | pinned):
        tallied = False  # "which runner does job-7 use?" names one record: no tally
    if not asked and kind != "count" and WILD in group.pattern:
        by = _ranked_by(group, question, ())  # "which job has the longest timeout?"
        if by is not None and not _unread_identifier(tokens, read.used | pinned):
            return _tallied(doc, question, group, tuple(conds), by[0])
    ranked = tallied and ranks_numbers(question, group.fields[asked[0]]) is not None
    if tallied and not ranked and len(asked) > 1:  # "which sku has the highest unit_price?"
        by = _ranked_by(group, question, asked[0])
        ranked = by is not None and by[0] in asked[1:]
    if tallied and (ranked or asks_tally(question, kind, len(conds), group.fields[asked[0]])):
        return _tallied(doc, question, group, tuple(conds), asked[0])
    if WILD not in group.pattern:  # one record, named: the field asked of it
        if not targets or (kind == "count" and asked):
            return None
        found = _evaluate(doc, kind or "lookup", group, (), targets[0])
    elif kind == "count" and asked:
        return _not_exact(kind, group, asked[0])
    elif not said and not bare and read.ambiguous and kind is not None:
        return _not_exact(kind, group, why=_ambiguous(read.ambiguous))
    elif kind == "count" and (loose := _loose(kind, tokens, read, pinned, group)):
        return _not_exact(kind, group, why=loose)
    elif (
        kind == "count" and not said and not bare and (held := held_word(group, tokens, read.used))
    ):
        return _not_exact(
            kind, group, why=f"the question's {held!r} could not be read as a condition"
        )
    elif not said and not bare and kind is None and asked and _totalled(question, group, asked):
        found = _evaluate(doc, "lookup", group, (), asked[0])  # every record holding it
    elif not said and not bare:
        main = _main(best.found, found_groups) and not targets
        if kind != "count" or not (named or main):
            return None if kind is None else _not_exact(kind, group)
        found = _evaluate(doc, kind, group, (), ())
    else:
        found = _evaluate(doc, kind or "lookup", group, tuple(conds), targets[0] if targets else ())
    if not found.total and (kind != "count" or pinned):
        return None  # nothing matches the question as read: the ranking answers instead
    if kind == "list" and found.total > 1 and (loose := _loose(kind, tokens, read, pinned, group)):
        return _not_exact(kind, group, why=loose)
    if kind == "count" and WILD in group.pattern and conds:
        word = noun(tokens, read.used)
        if outer_of(group.pattern) is not None and all(c.within is None for c in conds):
            return _holders_counted(doc, found, group, found_groups, tuple(conds), word)
        return _members_counted(doc, found, group, tuple(conds), word)
    return found


def _holders_counted(
    doc: JsonDoc,
    found: Exact,
    group: Group,
    found_groups: list[Group],
    conds: tuple[Condition, ...],
    word: str,
) -> Exact:
    """A count of the members of a list inside records (``$[*].items[*]``): the records
    holding a matching member when the count's noun names them rather than the list
    (:mod:`~taskloom.guard.nested`), and no exact count when the two counts differ and
    the noun names neither."""
    at, keys = outer_of(group.pattern) or (0, ())
    outer = next((g for g in found_groups if g.pattern == group.pattern[: at + 1]), None)
    if outer is None:
        return found
    path = holder_path(group.pattern, conds)
    holders = Exact("count", True, path, group=outer.path(), records=outer.records)
    holders.conditions = conds
    _collect(doc, holders)
    if holders.total == found.total:
        return found
    counts = counted_members(outer, keys, word)
    if counts is not None:
        return found if counts else holders
    return _not_exact("count", group, why=_either(word, holders, found, keys))


def _either(word: str, holders: Exact, members: Exact, keys: tuple[str, ...]) -> str:
    return (
        f"{word or 'the count'!r} may count the {holders.total:,} records holding a match"
        f" ({holders.path}) or the {members.total:,} matching members of their"
        f" {'.'.join(keys)} ({members.path}): name one"
    )


def _collect(doc: JsonDoc, out: Exact) -> None:
    """Count the matches of ``out.path``, keeping the first :data:`MAX_SHOWN`."""
    for parts, value in find(doc.root(), out.path):
        out.total += 1
        if len(out.shown) < MAX_SHOWN:
            out.shown.append((path_of(parts), value))
            out.names.append(parts[-1] if parts else "$")


def _members_counted(
    doc: JsonDoc, found: Exact, group: Group, conds: tuple[Condition, ...], word: str
) -> Exact:
    """A count whose condition tests the members of a list in each record
    (:mod:`~taskloom.guard.nested`): the records, the matching members when the count's
    noun names the list, and no exact count when the two differ and the noun names
    neither. Two conditions on the members of one list may be met by one member or by
    two: no exact count."""
    inner = [c for c in conds if c.within is not None]
    if len({c.field for c in inner}) < len(inner):
        tested = ".".join(inner[0].field)
        why = (
            f"several conditions test the members of {tested}, one member or several may meet them"
        )
        return _not_exact("count", group, why=why)
    if len(inner) != 1:
        return found
    cond = inner[0]
    path = member_path(filter_path(group, tuple(c for c in conds if c is not cond)), cond)
    members = Exact(
        "count", True, path, group=group.path(), records=group.records, conditions=conds
    )
    _collect(doc, members)
    if members.total == found.total:
        return found
    counts = counted_members(group, cond.field, word)
    if counts is not None:
        return members if counts else found
    return _not_exact("count", group, why=_either(word, found, members, cond.field))


def _loose(
    kind: str | None, tokens: list[Tok], read: Reading, pinned: set[int], group: Group
) -> str:
    """Why a count, or a list of records, may not be exact: the condition-like words of
    the question no field or value of ``group`` took (:mod:`~taskloom.guard.loose`), else
    ``""``. A list of a field's values, or of the one record the question names ("which
    node is pod X scheduled on?"), reads its records by what it names; its other words
    describe them."""
    if kind is None or (kind == "list" and read.targets):
        return ""
    fields = [c.field for c in read.conditions]
    loose = loose_words(tokens, read.used | pinned | read.named, group, fields)
    if not loose:
        return ""
    words = ", ".join(repr(w) for w in loose)
    return f"the question's {words} could not be read as conditions on these records"


def _tallied(
    doc: JsonDoc, question: str, group: Group, conds: tuple[Condition, ...], target: tuple[str, ...]
) -> Exact:
    """The tally of ``target`` over the records ``conds`` select, every one read."""
    path = filter_path(group, conds)
    highest = ranks_numbers(question, group.fields[target])
    ranked_by = None if highest is not None else _ranked_by(group, question, target)
    asked = target
    if ranked_by is not None:
        target, highest = ranked_by
    matches = ((path_of(parts), value) for parts, value in find(doc.root(), path))
    found = tally(matches, target, highest)
    out = Exact("tally", True, path, found.records, group.path(), group.records, conds)
    out.target, out.tally = target, found
    if asked != target and _repeats(group.fields[asked]):
        out.note = (
            f"records ranked one by one by {'.'.join(target)}; the records sharing a"
            f" {'.'.join(asked)} are not summed"
        )
    return out


def _totalled(question: str, group: Group, asked: list[tuple[str, ...]]) -> bool:
    """Whether the question asks for the total of a number field, with no condition: "what
    is the total allocated_storage?" reads every record that holds it."""
    return asks_total(question) and group.fields[asked[0]].kinds - {"null"} == {"number"}


def _unread_identifier(tokens: list[Tok], used: set[int]) -> bool:
    """Whether the question holds an identifier (``test-bravo-61``) no condition reads: it
    names a record, so a tally over every record would drop it."""
    return any(identifier(t.text) and i not in used for i, t in enumerate(tokens))


def _repeats(stats: Field) -> bool:
    """Whether a field's values repeat across its records (a name several records share)."""
    return not stats.many and len(stats.values) < stats.present


def _ranked_by(
    group: Group, question: str, target: tuple[str, ...]
) -> tuple[tuple[str, ...], bool] | None:
    """The number field to rank records by, and the order, when the question asks for the
    record with the highest or lowest of something ("which line item cost the most?",
    "which command uses the most CPU?"): the one number field of many values a part of
    whose name a word of the question says, by stem (``cost`` for ``unblended_cost``,
    ``cpu`` for ``%CPU``); of several, the one whose whole name the question writes. The
    field the question names (``line_item``, ``COMMAND``) is then shown in the ranked
    records, not tallied: a tally of it would count how often each value occurs, which the
    question does not ask."""
    highest = extreme(question)
    if highest is None:
        return None
    said = {stem(w) for w in re.findall(r"[^\W_]+", question)} - {stem(p) for p in target}
    found = [
        name
        for name, field_stats in group.fields.items()
        if name != target
        and ranks_numbers(question, field_stats) is not None
        and {stem(p) for p in parts_of(name[-1])} & said
    ]
    if len(found) > 1:  # "unit_price" written whole picks it over "units"
        written = {w.lower() for w in re.findall(r"[\w%#.-]+", question)}
        found = [name for name in found if name[-1].lower() in written]
    if not found:  # "which test was the slowest?", "which object is the largest?"
        measured = measured_field(
            question,
            (n for n in group.fields if n != target),
            lambda n: ranks_numbers(question, group.fields[n]) is not None,
        )
        found = [] if measured is None else [measured]
    return (found[0], highest) if len(found) == 1 else None


def _summed(doc: JsonDoc, choices: list[_Choice], tokens: list[Tok], highest: bool) -> Exact | None:
    """The records ranked by the sum of a number their members hold, when the question
    asks for the highest or lowest of one (:mod:`~taskloom.guard.sums`): of the groups
    whose records hold it, the one the question fits best, with its conditions."""
    held = [
        (choice, summed)
        for choice in choices
        if WILD in choice.group.pattern
        and (summed := summed_member(choice.group, tokens)) is not None
    ]
    if not held:
        return None
    choice, summed = max(held, key=lambda h: h[0].score)
    group, conds = choice.group, tuple(choice.read.conditions)
    path = filter_path(group, conds)
    matches = ((path_of(parts), value) for parts, value in find(doc.root(), path))
    found = rank_sums(matches, summed, highest)
    if not found.extremes:
        return None
    out = Exact("tally", True, path, found.records, group.path(), group.records, conds)
    out.target, out.tally = summed.key, found
    return out


def _files(doc: JsonDoc, choice: _Choice, tokens: list[Tok]) -> Exact | None:
    """The tally of the field the question names as its files
    (:mod:`~taskloom.guard.filetally`), over the records its conditions select."""
    group, conds = choice.group, tuple(choice.read.conditions)
    field_key = file_field(group, tokens) if WILD in group.pattern else None
    if field_key is None:
        return None
    path = filter_path(group, conds)
    matches = ((path_of(parts), value) for parts, value in find(doc.root(), path))
    found = tally_files(matches, *field_key)
    out = Exact("tally", True, path, found.records, group.path(), group.records, conds)
    out.target, out.tally = found.target, found
    return out


def _tie(ours: str, theirs: str) -> str:
    return (
        f"the question reads as well as {ours} as {theirs}, which count different records"
        " (name the field whole, e.g. 'user login' rather than 'login')"
    )


def _ambiguous(words: list[tuple[str, list[tuple[str, ...]]]]) -> str:
    word, names = words[0]
    fields = ", ".join(".".join(n) for n in names[:6])
    return f"'{word}' names several fields ({fields}): name one whole"


def _main(group: Group, found: list[Group]) -> bool:
    """Whether ``group`` is the collection a count that names none means ("how many are
    there?"): it has at least twice the records of every group it does not hold. The groups
    inside its records (each issue's ``user``, ``labels``) are parts of them, not rivals:
    a question meaning those names them."""
    size = len(group.pattern)
    return all(
        group.records >= 2 * other.records
        for other in found
        if other is not group
        and not (len(other.pattern) > size and other.pattern[:size] == group.pattern)
    )


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
    _collect(doc, out)
    return out


def _not_exact(kind: str, group: Group, named: tuple[str, ...] = (), *, why: str = "") -> Exact:
    """No condition could be read off the data (``why``, if said): say so, with a filter
    to adapt."""
    example = _example(group, named)
    fields = ", ".join(".".join(n) for n in list(group.fields)[:12])
    what = why or (
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
        common = [literal(v) for (_k, v), _n in stats.values.most_common(8)]
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
