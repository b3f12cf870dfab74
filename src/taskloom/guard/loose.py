"""The words of a count or list question that look like conditions yet tie to nothing.

"How many testcases failed?" over records with no field or value ``failed`` must not be
answered with every testcase: a count that drops a condition is wrong, and worse than no
count. :func:`loose_words` names the words an exact answer would drop. A word is
condition-like unless it is one of these:

- a stop word, a connective ("is", "with", "whose"), a negation, or a word that points
  ("these", "those": "how many of these issues are closed?");
- a word of counting ("how many", "number", "records", "total", "altogether");
- a verb of existence or relation (``exist``, ``defined``, ``own``, ``contain``, ``run``,
  ``touch``, ``change``), compared by stem (:mod:`~taskloom.guard.stems`): it says that the
  counted records are there or relate to what the question names, not which of them count;
- the record noun: a word whose stem is a name the records sit under (``testcases`` for
  ``testcase``; ``test`` and ``case`` are parts of it), or the noun the question counts,
  the last word of the run of unread words right after "how many", "number of", "count",
  "which", "list" or "what" (``tests`` in "which tests failed?"), unless it reads as a
  participle (``-ed``, ``-ing``: "how many failed?");
- a field the question names without a condition (the thing counted or asked for), or a
  word whose stem is that of a part of the name of a field a condition is on ("tagged"
  for ``tagList`` in "which tickets are tagged billing?");
- the result itself: the word after "this" or "these" ("this diff"), the last word of
  the question after "in the", "of the" or "from the" ("in the log"), or the subject of a
  closing "do/does/did the <noun> <verb of relation>?" ("did the query return?");
- the verb closing "do/does/did <subject> <verb>?" when the subject holds no loose word
  ("how many orders did customer 117 place?"): it relates the records to the subject.

A quoted word, a number, an adjective or any other verb is a condition; the guard says
which such words it could not read rather than count without them.
"""

from __future__ import annotations

from collections.abc import Iterable

from taskloom.guard.groups import Group
from taskloom.guard.question import FIELD_INTRO, Tok, connective
from taskloom.guard.rank import STOPWORDS, parts_of
from taskloom.guard.stems import stem

_COUNTING = frozenset(
    {"count", "number", "total", "records", "record", "items", "item", "entries", "entry",
     "result", "results", "altogether", "overall", "here", "ones", "many", "much", "distinct",
     "unique", "different", "separate", "individual", "listed", "shown"}
)  # fmt: skip
"""Words of a count that name nothing in the data: "how many records are in the result"."""
_NEGATIONS = frozenset(
    {"not", "no", "never", "non", "t", "none", "aren", "isn", "don", "doesn", "didn", "wasn",
     "weren", "hasn", "haven", "hadn", "won", "can", "cannot"}
)  # fmt: skip
_DO = frozenset({"do", "does", "did"})
_RELATIONS = frozenset(
    stem(w)
    for w in (
        "exist", "define", "declare", "present", "contain", "include", "hold", "own",
        "belong", "run", "use", "touch", "change", "affect", "appear", "occur", "find",
        "return", "match", "make", "get", "see", "mention", "cover", "involve", "live",
        "sit", "go", "come", "take", "got", "made", "ran", "went", "came", "took", "seen",
        "found", "held", "found",
    )
)  # fmt: skip
"""Verbs of existence or relation, by stem."""
_OPENERS = (("how", "many"), ("number", "of"), ("count", "of"), ("count",), ("which",),
            ("list",), ("what",), ("total", "of"), ("name", "all"))  # fmt: skip
_SOURCE_BEFORE = frozenset({"this", "these"})
_POINTING = frozenset({"this", "these", "that", "those"})
"""Words that point at records the question already names: "how many of these are open"."""
_TAIL = frozenset({"in", "of", "from"})


def loose_words(
    tokens: list[Tok], read: set[int], group: Group, fields: Iterable[tuple[str, ...]] = ()
) -> list[str]:
    """The condition-like words of the question no reading of ``group`` took (see the
    module docs); ``read``: the tokens its conditions, pins and field names take;
    ``fields``: the fields its conditions are on."""
    names = _record_names(group)
    said = {stem(p) for name in fields for key in name for p in (key, *parts_of(key))}
    loose = []
    noun = _counted_noun(tokens, read)
    for i, tok in enumerate(tokens):
        if i in read or i == noun or tok.op:
            continue
        if tok.quoted:
            loose.append(i)
            continue
        word = tok.text.lower()
        if _plain(word) or stem(word) in said:
            continue
        if _names_records(word, names) or names_source(tokens, i):
            continue
        loose.append(i)
    if loose and _done_by(tokens, loose[-1], loose):
        loose.pop()
    return [tokens[i].text for i in loose]


def _done_by(tokens: list[Tok], at: int, loose: list[int]) -> bool:
    """Whether the word at ``at`` is the verb closing "do/does/did <subject> <verb>?" whose
    subject is no negation and sets no loose word ("how many orders did customer 117
    place?", "how many files does this diff change?"): it relates the records to the
    subject, which the conditions read."""
    if at != len(tokens) - 1 or tokens[at].quoted:
        return False
    do = max((i for i in range(at) if tokens[i].text.lower() in _DO), default=None)
    if do is None or any(do < i < at for i in loose):
        return False
    between = [tokens[i].text.lower() for i in range(do + 1, at)]
    return any(not _plain(w) for w in between) and not _NEGATIONS & set(between)


def _plain(word: str) -> bool:
    """A word that sets no condition: a stop word, connective, negation, counting word or
    verb of relation."""
    return (
        word in STOPWORDS
        or connective(word)
        or word in FIELD_INTRO
        or word in _NEGATIONS
        or word in _POINTING
        or word in _COUNTING
        or stem(word) in _RELATIONS
        or not any(c.isalnum() for c in word)
    )


def _record_names(group: Group) -> set[str]:
    out = set()
    for part in group.pattern:
        if isinstance(part, str):
            out.add(stem(part))
            out.update(stem(p) for p in parts_of(part) if len(p) >= 3)
    return out


def _names_records(word: str, names: set[str]) -> bool:
    """Whether ``word`` names the records: its stem is a record name, or is part of one
    (``test`` of ``testcase``)."""
    root = stem(word)
    return root in names or (len(root) >= 3 and any(root in n for n in names))


def _counted_noun(tokens: list[Tok], read: set[int]) -> int | None:
    """The token of the noun the question counts or lists: the last of the unread words
    right after its opener (skipping words taken as conditions and stop words), unless it
    reads as a participle."""
    low = [t.text.lower() for t in tokens]
    for opener in _OPENERS:
        n = len(opener)
        at = next((i + n for i in range(len(low) - n + 1) if tuple(low[i : i + n]) == opener), None)
        if at is None:
            continue
        while at < len(tokens) and (at in read or low[at] in STOPWORDS):
            at += 1
        last = None
        while at < len(tokens) and at not in read and not tokens[at].op and not _plain(low[at]):
            last, at = at, at + 1
        if last is None or low[last].endswith(("ed", "ing")) or tokens[last].quoted:
            return None
        return last
    return None


def names_source(tokens: list[Tok], at: int) -> bool:
    """Whether the word at ``at`` names the result itself: after "this" or "these", the
    question's last word after "in the", "of the" or "from the", or the subject of a
    closing "do/does/did the <noun> <verb of relation>?" ("did the query return?")."""
    before = tokens[at - 1].text.lower() if at else ""
    if before in _SOURCE_BEFORE:
        return True
    last = at == len(tokens) - 1
    if last and at >= 2 and before == "the" and tokens[at - 2].text.lower() in _TAIL:
        return True
    return (  # "how many rows did the query return?": the query made the result
        at == len(tokens) - 2
        and at >= 2
        and before == "the"
        and tokens[at - 2].text.lower() in _DO
        and stem(tokens[-1].text.lower()) in _RELATIONS
    )


def held_word(group: Group, tokens: list[Tok], read: set[int]) -> str:
    """A word of the question no reading took (``read``: the tokens taken) that a field of
    ``group`` holds as a whole value, else ``""``: a count of every record would leave out
    the condition it names."""
    for i, tok in enumerate(tokens):
        if i in read or tok.op or tok.text.lower() in STOPWORDS:
            continue
        if any(("string", tok.text) in stats.values for stats in group.fields.values()):
            return tok.text
    return ""
