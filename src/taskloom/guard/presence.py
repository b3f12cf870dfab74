"""Conditions that a field is there: "which tests failed?" over records of which only the
failing ones hold a ``failure``.

A field is a presence field of its group when some records lack it or hold it null, empty
or false, and it is no list (a list's members are matched as values,
:mod:`~taskloom.guard.members`). A word of the question sets the condition that such a
field is present (set, and not null, empty or false) when

- its stem is the field's name's stem (:mod:`~taskloom.guard.stems`): "failed", "fails"
  and "failure" for ``failure``, "errored" for ``error``, "skipped" for ``skipped``; or
- it names the field whole after "have", "has", "had", "having" or "with" (an article
  between) and no value follows it: "how many testcases have a failure?", but not
  "have name X"; or
- it is the noun a count counts, right after "how many" or "number of", and names whole a
  field of scalars (not a list or an object, whose members a count counts), no value of
  it read: "how many tests were skipped?" over events of which
  only a test's hold a ``Test``. A field every record holds, named so, names the records
  themselves ("how many packages are …" over rows that each have a ``Package``): no
  condition, and the field is not asked for.

A number field whose name is a noun and a word that only says it counts (``reply_count``,
``numRetries``, ``error_total``) is named by that noun after "have", "has", "had", "having"
or "with" and no value ("how many messages have replies?", "which jobs had retries?"),
when no field is named by it otherwise: the condition that the count is above zero.

A word right after a count's or a list's noun ("how many hosts failed?", "which hosts were
unreachable?") that names whole a field of
counts (whole numbers, none below zero, some zero) and ends the question or comes before a
stop word, with no value after it, in a question that
neither ranks nor tallies, sets the condition that the count is above zero: "how many hosts
failed?" over ``failed=0``/``failed=1``.

A word made of ``un`` and a word whose stem is the field's name's stem, or that stem less a
last letter or two (``assign`` for ``assignee``, ``own`` for ``owner``), sets the condition
that the field is absent (missing, or null, empty or false): "how many issues are
unassigned?" over issues whose ``assignee`` is null when no one is assigned.

A presence condition ranks with the conditions read from a value alone: a reading of the
same words as a field and its value is preferred.

The word must be read by no other condition, must not be negated ("did not fail": that
word stays unread, so no exact count is stated), and must meet exactly one presence field
of the group; a field named whole is no longer asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskloom.guard.groups import MAX_TALLIED, Field, Group
from taskloom.guard.question import Condition, Reading, Tok, negated
from taskloom.guard.rank import STOPWORDS, parts_of
from taskloom.guard.stems import stem
from taskloom.guard.tally import ranks, says_tally

_HAVE = frozenset({"have", "has", "had", "having", "with"})
_ARTICLES = frozenset({"a", "an", "any", "some", "the"})
_EMPTY = (("null", None), ("string", ""), ("bool", False))
_COUNTING = frozenset({"count", "counts", "total", "num", "number", "n"})
_BE = frozenset({"is", "are", "was", "were", "has", "have", "had"})
_UN = "un"
_AGENT_LETTERS = 2
"""The most letters a field's stem may hold past an ``un`` word's (``assign``-``e``)."""


@dataclass(frozen=True, slots=True)
class Absent(Condition):
    """The condition that a field is missing, or null, empty or false."""

    def jsonpath(self, via: tuple[str | int | None, ...] = ()) -> str:
        return f"!({Condition(self.field, 'present', None).jsonpath(via)})"

    def text(self) -> str:
        return f"{'.'.join(self.field)} is absent"


def partly_present(group: Group, stats: Field) -> bool:
    """Whether some records of ``group`` lack the field or hold it null, empty or false."""
    if not stats.present or "array" in stats.kinds:
        return False
    seen = min(group.records, MAX_TALLIED)
    return stats.present < seen or any(key in stats.values for key in _EMPTY)


def add_presence(group: Group, tokens: list[Tok], read: Reading, selects: bool) -> None:
    """Add to ``read`` the presence conditions the question sets (see the module docs);
    only a count or a list (``selects``) sets them."""
    if not selects:
        return
    _counted_field(group, tokens, read)
    _nonzero(group, tokens, read)
    _counted_verb(group, tokens, read)
    fields: dict[str, list[tuple[str, ...]]] = {}
    for name, stats in group.fields.items():
        if partly_present(group, stats):
            fields.setdefault(stem(name[-1]), []).append(name)
    if not fields:
        return
    taken = {c.field for c in read.conditions}
    for i, tok in enumerate(tokens):
        word = tok.text.lower()
        if i in read.used or tok.op or tok.quoted or word in STOPWORDS:
            continue
        names = [n for n in fields.get(stem(word), ()) if n not in taken]
        absent = not names and _unmade(word, fields)
        if absent:
            names = [n for n in absent if n not in taken]
        top = [n for n in names if len(n) == min(len(m) for m in names)]
        if len(top) != 1 or negated(tokens, i):
            continue
        name = top[0]
        if absent:
            read.conditions.append(Absent(name, "absent", None))
            read.bare += 1
            read.used.add(i)
            read.named.discard(i)
            taken.add(name)
            continue
        counted = _counted(tokens, i) and _scalar(group.fields[name])
        said = (_after_have(tokens, i) and _closes(tokens, i)) or counted
        if _names(word, name[-1]) and not said:
            continue
        read.conditions.append(Condition(name, "present", None))
        read.bare += 1
        read.used.add(i)
        read.named.discard(i)
        taken.add(name)
        if name in read.targets:
            read.targets.remove(name)


def _nonzero(group: Group, tokens: list[Tok], read: Reading) -> None:
    """The conditions that a count field is above zero, named by what it counts (see the
    module docs)."""
    named: set[str] = set()
    counts: dict[str, list[tuple[str, ...]]] = {}
    for name, stats in group.fields.items():
        parts = parts_of(name[-1])
        named.add(stem(name[-1]))
        kept = [p for p in parts if p not in _COUNTING]
        if stats.kinds - {"null"} == {"number"} and len(kept) == 1 and len(parts) > 1:
            counts.setdefault(stem(kept[0]), []).append(name)
    taken = {c.field for c in read.conditions}
    for i, tok in enumerate(tokens):
        word = stem(tok.text)
        if i in read.used or tok.op or tok.quoted or word in named or negated(tokens, i):
            continue
        names = [n for n in counts.get(word, ()) if n not in taken]
        if len(names) != 1 or not (_after_have(tokens, i) and _closes(tokens, i)):
            continue
        _above_zero(read, i, names[0])
        taken.add(names[0])


def _above_zero(read: Reading, at: int, name: tuple[str, ...]) -> None:
    """Read the word at ``at`` as the condition that the count field ``name`` is above zero."""
    read.conditions.append(Condition(name, ">", 0))
    read.bare += 1
    read.used.add(at)
    read.named.discard(at)
    if name in read.targets:
        read.targets.remove(name)


def _counter(stats: Field) -> bool:
    """Whether a field holds whole numbers, none below zero and some zero: a count."""
    numbers = [v for kind, v in stats.values if kind != "null"]
    kinds = {kind for kind, _v in stats.values} - {"null"}
    return (
        kinds == {"number"} and 0 in numbers and all(isinstance(v, int) and v >= 0 for v in numbers)
    )


def _counted_verb(group: Group, tokens: list[Tok], read: Reading) -> None:
    """The condition that a count field is above zero, named whole (its name as written,
    not another form: "starred" is no ``stars``) by the word right after a count's or
    list's noun (:func:`_subject_verb`) that ends the question or comes before a stop word
    ("how many hosts failed?" over a recap's ``failed=0``/``failed=1``), not negated, read
    by no other condition; never in a question that ranks or tallies ("which file has the
    highest errorCount?" asks for the field, not for records where it is above zero)."""
    if any(ranks(t.text) or says_tally(t.text) for t in tokens):
        return
    counts = [n for n, stats in group.fields.items() if len(n) == 1 and _counter(stats)]
    taken = {c.field for c in read.conditions}
    for i, tok in enumerate(tokens):
        if i in read.used or tok.op or tok.quoted or negated(tokens, i):
            continue
        names = [n for n in counts if n not in taken and _names(tok.text.lower(), n[0])]
        if len(names) != 1 or not _closes(tokens, i) or not _subject_verb(tokens, i):
            continue
        _above_zero(read, i, names[0])
        taken.add(names[0])


def _subject_verb(tokens: list[Tok], at: int) -> bool:
    """Whether token ``at`` follows the noun a count counts or a list lists, perhaps with a
    form of "be" or "have" between: "how many hosts failed", "which hosts were
    unreachable"."""
    if at >= 1 and tokens[at - 1].text.lower() in _BE:
        at -= 1
    if at < 2:
        return False
    before = tokens[at - 2].text.lower()
    return _counted(tokens, at - 1) or (before in ("which", "what") and at == 2)


def _unmade(word: str, fields: dict[str, list[tuple[str, ...]]]) -> list[tuple[str, ...]]:
    """The presence fields an ``un`` word denies ("unassigned": ``assignee``), if any."""
    if not word.startswith(_UN) or len(word) < len(_UN) + 4:
        return []
    root = stem(word[len(_UN) :])
    return [
        name
        for key, names in fields.items()
        if key.startswith(root) and len(key) - len(root) <= _AGENT_LETTERS
        for name in names
    ]


def _names(word: str, key: str) -> bool:
    """Whether ``word`` is the field's name itself (or its plural), not another form."""
    return word.rstrip("s") == key.lower().rstrip("s")


def _closes(tokens: list[Tok], at: int) -> bool:
    """Whether no value follows token ``at``: it ends the question or a stop word comes
    next ("have name X" names a value of ``name``; "have a failure?" its presence)."""
    nxt = tokens[at + 1] if at + 1 < len(tokens) else None
    return nxt is None or (not nxt.quoted and nxt.text.lower() in STOPWORDS)


def _after_have(tokens: list[Tok], at: int) -> bool:
    """Whether "have", "has", "had", "having" or "with" comes before token ``at``, perhaps
    with an article between."""
    at -= 1
    while at >= 0 and tokens[at].text.lower() in _ARTICLES:
        at -= 1
    return at >= 0 and tokens[at].text.lower() in _HAVE


def _counted(tokens: list[Tok], at: int) -> bool:
    """Whether token ``at`` is the noun a count counts: right after "how many" or
    "number of"."""
    before = tuple(t.text.lower() for t in tokens[max(at - 2, 0) : at])
    return before in (("how", "many"), ("number", "of"))


def _counted_field(group: Group, tokens: list[Tok], read: Reading) -> None:
    """A count's noun that names whole a field every record holds names the records: it
    is no longer asked for, and sets no condition."""
    for i, tok in enumerate(tokens):
        if i in read.used or tok.quoted or not _counted(tokens, i):
            continue
        for name in list(read.targets):
            stats = group.fields[name]
            whole = len(name) == 1 and _names(tok.text.lower(), name[0]) and _scalar(stats)
            if whole and stats.present and not partly_present(group, stats):
                read.targets.remove(name)
                read.used.add(i)
                read.named.discard(i)


def _scalar(stats: Field) -> bool:
    return not stats.kinds & {"object", "array"}
