"""True-or-false fields named by an adjective: "how many vulnerabilities are in direct
dependencies?" over records with a boolean ``isDirect``.

A field is a flag of its group when every value it holds is ``true``, ``false`` or null,
or one text of a pair that spells them (``t``/``f``, as ``psql`` writes a boolean;
``yes``/``no``), whose text for true (or false) the condition then compares.
Its adjective is its last key's name with a leading ``is``, ``has`` or ``can`` part
removed: ``direct`` for ``isDirect``, ``private`` for ``is_private``, ``wiki`` for
``hasWiki``, ``archived`` for ``archived``. A run of words of a count or list question whose
stems are those of the adjective's parts (:mod:`~taskloom.guard.stems`) sets the condition
``field == true``; ``field == false`` when the run is negated ("not direct", "non-archived",
"no wiki", "without a wiki").

The words must be read by no other condition and meet exactly one flag of the group (the
shortest name among several alike); a flag already conditioned is not read twice. Such a
condition ranks with the conditions read from a value alone. A noun the adjective comes
with is read as any other word: "in direct dependencies" over records that hold no
dependency is no exact count, since the records may not be what "dependencies" names.
"""

from __future__ import annotations

from taskloom.guard.groups import Field, Group
from taskloom.guard.question import Condition, Reading, Tok, negated
from taskloom.guard.rank import STOPWORDS, parts_of
from taskloom.guard.stems import stem

_PREFIXES = frozenset({"is", "has", "can"})
_NON = ("non-", "non_", "not-")
_ARTICLES = frozenset({"a", "an", "any", "the"})
_WITHOUT = frozenset({"without", "lacking"})
_SPELLED = (("t", "f"), ("true", "false"), ("yes", "no"), ("y", "n"))


def is_flag(stats: Field) -> bool:
    """Whether every value the field holds is ``true``, ``false`` or null (and one is a
    boolean)."""
    return "bool" in stats.kinds and stats.kinds <= {"bool", "null"}


def spelled(stats: Field) -> tuple[str, str] | None:
    """The texts a field of text flags writes for true and for false, when every value it
    holds is one of a pair (``t``/``f``, as ``psql`` writes a boolean; ``true``/``false``,
    ``yes``/``no``, ``y``/``n``, any case) or null; else ``None``."""
    if "string" not in stats.kinds or not stats.kinds <= {"string", "null"} or stats.many:
        return None
    texts = [v for kind, v in stats.values if kind == "string"]
    low = {t.lower() for t in texts}
    for yes, no in _SPELLED:
        if low <= {yes, no}:
            case = str.upper if texts[0].isupper() else str.lower
            by_low = {t.lower(): t for t in texts}
            return by_low.get(yes, case(yes)), by_low.get(no, case(no))
    return None


def adjective(key: str) -> tuple[str, ...]:
    """The stems of the words that name a flag ``key``: its parts, less a leading ``is``,
    ``has`` or ``can``."""
    parts = parts_of(key)
    if len(parts) > 1 and parts[0] in _PREFIXES:
        parts = parts[1:]
    return tuple(stem(p) for p in parts)


def add_flags(group: Group, tokens: list[Tok], read: Reading, selects: bool) -> None:
    """Add to ``read`` the flag conditions the question sets (see the module docs); only a
    count or a list (``selects``) sets them."""
    if not selects:
        return
    flags: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    texts: dict[tuple[str, ...], tuple[str, str]] = {}
    for name, stats in group.fields.items():
        pair = spelled(stats)
        if pair is not None:
            texts[name] = pair
        if is_flag(stats) or pair is not None:
            flags.setdefault(adjective(name[-1]), []).append(name)
    if not flags:
        return
    taken = {c.field for c in read.conditions}
    words = [_word(t) for t in tokens]
    for i in range(len(tokens)):
        for stems, names in flags.items():
            n = len(stems)
            span = range(i, i + n)
            if i + n > len(tokens) or read.used & set(span):
                continue
            if any(tokens[j].quoted or tokens[j].op for j in span):
                continue
            if tuple(stem(w[1]) for w in words[i : i + n]) != stems:
                continue
            if n == 1 and words[i][1] in STOPWORDS:
                continue
            free = [m for m in names if m not in taken]
            top = [m for m in free if len(m) == min(len(k) for k in free)]
            if len(top) != 1:
                continue
            denied, first = _denied(tokens, words, i)
            pair = texts.get(top[0])
            value = (pair[1] if denied else pair[0]) if pair else not denied
            read.conditions.append(Condition(top[0], "==", value))
            read.bare += 1
            took = set(range(first, i + n))
            read.used |= took
            read.named -= took
            taken.add(top[0])
            if top[0] in read.targets:
                read.targets.remove(top[0])
            break


def _word(tok: Tok) -> tuple[bool, str]:
    """A token as (written with a "non-" prefix, the word without it)."""
    low = tok.text.lower()
    for prefix in _NON:
        if low.startswith(prefix) and len(low) > len(prefix):
            return True, low[len(prefix) :]
    return False, low


def _denied(tokens: list[Tok], words: list[tuple[bool, str]], at: int) -> tuple[bool, int]:
    """Whether the adjective at ``at`` is negated, and the first token its condition takes:
    a "non-" prefix, "not", "no", "n't" just before, or "without" (an article between)."""
    if words[at][0]:
        return True, at
    if negated(tokens, at):
        return True, at - 1
    before = at - 1
    while before >= 0 and tokens[before].text.lower() in _ARTICLES:
        before -= 1
    if before >= 0 and tokens[before].text.lower() in _WITHOUT:
        return True, before
    return False, at
