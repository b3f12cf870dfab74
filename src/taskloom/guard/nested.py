"""Records that hold a list of records: a lint report's files with their ``messages``, an
order with its ``items``, a pod with its ``containers``.

A condition on the members of such a list (``messages[*].ruleId == 'eqeqeq'``) selects the
records that hold one matching member. A count of them and a count of the matching members
differ when a record holds several: "how many eqeqeq problems" may mean either. The count's
noun decides (:func:`counted_members`): the list's name (``messages``), or a noun that names
no collection ("records", "entries"), counts the members, which hold the condition's fields
themselves; the records' collection (``Instances``) or the first word of a field of the
record (``filePath`` for "files") counts the records. When the two counts differ and the
noun says neither, there is no exact count.

A list's members written as ``{"Key": …, "Value": …}`` pairs (a cloud resource's tags) read
as fields of their record: "tagged Name=web-1" is the condition that one member holds
``Name`` under its key and ``web-1`` under its value (:func:`add_pairs`). "Have no messages"
and "without messages" are the condition that the list is empty (:func:`add_empties`).
"""

from __future__ import annotations

from dataclasses import dataclass

from taskloom.domain.stash import child_path
from taskloom.guard.groups import WILD, Group
from taskloom.guard.question import FIELD_INTRO, Condition, Reading, Tok, connective, literal
from taskloom.guard.rank import STOPWORDS, parts_of
from taskloom.guard.stems import stem

_NOUN_AFTER = (("how", "many"), ("number", "of"))
_GENERIC = frozenset(stem(w) for w in ("records", "entries", "items", "objects", "elements"))
"""Nouns that name no collection: they count what holds the condition's fields itself, the
members."""
_PAIR_KEYS = ("key", "name")
"""Member keys whose value names the field a pair holds, the likeliest first."""


@dataclass(frozen=True, slots=True)
class Empty(Condition):
    """The condition that an array field holds no member."""

    def jsonpath(self, via: tuple[str | int | None, ...] = ()) -> str:
        at = "@"
        for key in (*via, *self.field):
            at = child_path(at, key)  # type: ignore[arg-type]
        return f"length({at})==0"

    def text(self) -> str:
        return f"{'.'.join(self.field)} is empty"


@dataclass(frozen=True, slots=True)
class Pair(Condition):
    """The condition that one member of an array field holds ``name`` under ``key`` and
    ``value`` under ``within``."""

    key: tuple[str, ...] = ()
    name: str = ""

    def jsonpath(self, via: tuple[str | int | None, ...] = ()) -> str:
        at = "@"
        for part in (*via, *self.field):
            at = child_path(at, part)  # type: ignore[arg-type]
        named, held = "@", "@"
        for part in self.key:
            named = child_path(named, part)
        for part in self.within or ():
            held = child_path(held, part)
        test = f"{named}=={literal(self.name)} && {held}=={literal(self.value)}"
        return f"{at}[?{test}]"

    def text(self) -> str:
        base = ".".join(self.field) + "[*]"
        return f"{base}.{'.'.join(self.key)} == {literal(self.name)} && {base}" + (
            f".{'.'.join(self.within or ())} == {literal(self.value)}"
        )


def noun(tokens: list[Tok], used: set[int]) -> str:
    """The noun a count or list counts: the first word after "how many", "number of" or a
    leading "which" that no condition took and no stop word is; else ``""``."""
    low = [t.text.lower() for t in tokens]
    starts = [i + 2 for i in range(len(low) - 1) if (low[i], low[i + 1]) in _NOUN_AFTER]
    if low and low[0] == "which":
        starts.append(1)
    for start in starts:
        for i in range(start, min(start + 4, len(tokens))):
            if i in used or tokens[i].quoted or tokens[i].op or low[i] in STOPWORDS:
                continue
            return low[i]
    return ""


def counted_members(group: Group, keys: tuple[str, ...], word: str) -> bool | None:
    """Whether the count's noun ``word`` counts the members of the list at ``keys`` in
    each record of ``group`` (``True``), the records (``False``), or neither (``None``)."""
    root = stem(word)
    if not root:
        return None
    if root == stem(keys[-1]):
        return True
    if group.name and root == stem(group.name):
        return False
    if root in _GENERIC:
        return True
    own = {
        stem(parts_of(name[0])[0])
        for name, stats in group.fields.items()
        if len(name) == 1 and parts_of(name[0]) and not stats.kinds & {"object", "array"}
    }
    return False if root in own else None


def unwrapped(outer: Group, read: Reading, inner: Group, inner_read: Reading) -> bool:
    """Whether a lookup read against ``outer`` as one condition on the members of a list
    reads against ``inner``, the group of that list's members, as the same condition on
    their own field: the member that holds the value is the record looked up."""
    if len(read.conditions) != 1 or len(inner_read.conditions) != 1:
        return False
    cond, own = read.conditions[0], inner_read.conditions[0]
    return (
        type(cond) is Condition
        and cond.within is not None
        and inner.pattern == (*outer.pattern, *cond.field, WILD)
        and own == Condition(cond.within, cond.op, cond.value)
    )


def outer_of(pattern: tuple[str | int | None, ...]) -> tuple[int, tuple[str, ...]] | None:
    """For a group of the members of a list inside records (``$[*].items[*]``): where the
    records' wildcard sits in ``pattern`` and the list's keys (``("items",)``)."""
    wild = [i for i, p in enumerate(pattern) if p is WILD]
    if len(wild) < 2 or wild[-1] - wild[-2] < 2:
        return None
    keys = pattern[wild[-2] + 1 : wild[-1]]
    if wild[-1] != len(pattern) - 1 or not all(isinstance(k, str) for k in keys):
        return None
    return wild[-2], tuple(str(k) for k in keys)


def holder_path(pattern: tuple[str | int | None, ...], conds: tuple[Condition, ...]) -> str:
    """The JSONPath of the records holding a member of a list that meets every one of
    ``conds`` (``$[?@.items[?@.sku=='x' && @.qty>1]]``), for ``pattern`` the group of
    the list's members."""
    found = outer_of(pattern)
    assert found is not None
    at, keys = found
    inner = "@"
    for key in keys:
        inner = child_path(inner, key)
    test = " && ".join(c.jsonpath() for c in conds)
    return Group(pattern[:at]).path() + f"[?{inner}[?{test}]]"


def member_path(group_path: str, cond: Condition) -> str:
    """The JSONPath of the members that meet ``cond`` within the records ``group_path``
    selects."""
    path = group_path
    for key in cond.field:
        path = child_path(path, key)
    test = Condition(cond.within or (), cond.op, cond.value).jsonpath()
    if isinstance(cond, Pair):
        test = Condition(cond.key, "==", cond.name).jsonpath() + " && " + test
    return f"{path}[?{test}]"


def add_empties(group: Group, tokens: list[Tok], read: Reading, selects: bool) -> None:
    """Add to ``read`` the condition that an array field is empty where a count or a list
    (``selects``) names it whole after "have no", "with no" or "without"."""
    if not selects:
        return
    arrays = {
        name[-1].lower().rstrip("s"): name
        for name, stats in group.fields.items()
        if len(name) == 1 and stats.kinds == {"array"}
    }
    for i, tok in enumerate(tokens):
        name = arrays.get(tok.text.lower().rstrip("s"))
        if name is None or i in read.used or tok.quoted or i < 1:
            continue
        before = tokens[i - 1].text.lower()
        denied = before == "without" or (
            before == "no" and i >= 2 and tokens[i - 2].text.lower() in FIELD_INTRO
        )
        if not denied or any(c.field == name for c in read.conditions):
            continue
        read.conditions.append(Empty(name, "empty", None))
        read.used.update((i - 1, i))
        read.named.discard(i)
        if name in read.targets:
            read.targets.remove(name)


def add_pairs(group: Group, tokens: list[Tok], read: Reading) -> None:
    """Make a condition on a pair list's value member a condition on the pair where the
    question writes the pair's name just before the value ("Name=web-1", "Name is web-1",
    "team: infra"): the name's word is then read, and no longer asks for a field; a
    condition the name's word set alone on the same list is dropped into it, and one read
    from a value alone is then as sure as a field named with its value."""
    for cond in list(read.conditions):
        if cond.within is None or type(cond) is not Condition or not isinstance(cond.value, str):
            continue
        stats = group.fields.get(cond.field)
        at = next((i for i, t in enumerate(tokens) if t.text == cond.value), None)
        if stats is None or at is None:
            continue
        before = at - 1
        while before >= 0 and (tokens[before].op or connective(tokens[before].text.lower())):
            before -= 1
        if before < 0 or (before == at - 1 and not tokens[at - 1].op):
            continue  # the name must be joined to the value by "=", ":" or "is"
        word = tokens[before].text
        keys = [
            key
            for key, member in stats.members.items()
            if key != cond.within
            and key
            and key[-1].lower() in _PAIR_KEYS
            and ("string", word) in member.values
        ]
        if len(keys) != 1:
            continue
        alone = Condition(cond.field, "==", word, keys[0])
        if before in read.used and alone not in read.conditions:
            continue
        bare = (at - 1 not in read.used) + (alone in read.conditions)
        read.conditions = [c for c in read.conditions if c != alone]
        n = read.conditions.index(cond)
        read.conditions[n] = Pair(cond.field, cond.op, cond.value, cond.within, keys[0], word)
        read.bare -= bare
        read.used.update(range(before, at + 1))
        read.named.discard(before)
        read.targets[:] = [t for t in read.targets if t[-1].lower() != word.lower()]
