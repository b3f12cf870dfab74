"""The record groups of a JSON result, and what their fields hold.

Records are grouped by where they sit: the items of an array, or the members of an object
whose members are all objects (a map of records keyed by name, ``$.shapes.*``), form a
group, written as a pattern with a wildcard for each index or member name. The items of an
array that holds no object (the rows of a matrix, a list of names) are records too, with no
fields: a count counts them, and no condition selects among them. A group keeps how many
records it has, and for each field (one level of nesting too: ``user.login``) the kinds
and the values its first records hold, and for an array field the short
scalar values its first members hold (a tag, a label's name: :mod:`~taskloom.guard.members`),
which is what a question's words are matched against (:mod:`~taskloom.guard.exact`).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from taskloom.domain.stash import child_path
from taskloom.guard.jsondoc import JsonDoc, LazyObject, is_array, is_object

WILD = None
NUMERAL = re.compile(r"-?(?:0|[1-9]\d{0,15})(?:\.\d+)?")
"""A string that writes a plain decimal number (not ``007``, not ``1e3``)."""
"""The wildcard of a group's pattern: any index, or any member of a map of records."""
MAX_VALUES = 2_000
"""Distinct values of one field tracked; a field with more (ids) takes any value of its type."""
MAX_TALLIED = 20_000
"""Records of one group whose fields are read for the values a question may name; past
them a field takes any value of its type (the JSONPath still counts every record)."""
MAX_RECORD_FIELDS = 1_000
"""Fields read of one record: its first members and theirs. An object of 200,000 members (a
map of records keyed by name, which is also one record of the group above it; a table of
counts keyed by word) is data, not 200,000 fields a question may name, and reading it as
fields took sixty times its text. A field past them is unknown to a question, which then
gets no exact answer on it."""
MAX_MEMBERS = 32
"""Members of an array field read per record for the values they hold (:attr:`Field.members`)."""
MAX_MEMBER_KEYS = 16
"""Keys of one member object whose values are read."""
MEMBER_DEPTH = 3
"""The most keys that lead from a member object to a value it nests and a question names."""
MAX_NAME_CHARS = 100
"""The longest member value read: a value that names something (a label, a tag, a login)
is short; a longer one is prose, which no question compares whole."""


@dataclass(slots=True)
class Field:
    present: int = 0
    values: Counter[tuple[str, Any]] = field(default_factory=Counter)
    many: bool = False
    kinds: set[str] = field(default_factory=set)
    numerals: int = 0
    """How many of its values are strings that write a plain decimal number (``"2213.5"``,
    as a query API that returns every cell as text writes it)."""
    members: dict[tuple[str, ...], Field] = field(default_factory=dict)
    """For an array field, the values its members hold: under ``()`` its scalar members
    (``tags: ["a", "b"]``), under a key the short scalar values of its member objects'
    field of that key (``labels: [{"name": "bug"}]`` under ``("name",)``)."""


@dataclass(slots=True)
class Group:
    pattern: tuple[str | int | None, ...]
    records: int = 0
    fields: dict[tuple[str, ...], Field] = field(default_factory=dict)
    keys: dict[int, set[str]] = field(default_factory=dict)
    """For a wildcard that stands for the members of a map, the member names it covers."""
    folded: set[str] = field(default_factory=set)
    """When a group with a wildcard in place of some of its names holds its records too
    (``$.paths[*].get`` in ``$.paths[*][*]``), those names."""

    @property
    def name(self) -> str:
        named = [p for p in self.pattern if isinstance(p, str)]
        return named[-1] if named else ""

    def path(self) -> str:
        out = "$"
        for part in self.pattern:
            out = f"{out}[*]" if part is WILD else child_path(out, part)
        return out


def kind_of(value: Any) -> str:
    if is_object(value):
        return "object"
    if is_array(value):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else "string"


def _map_like(node: Mapping[str, Any]) -> bool:
    """Whether an object's members are records keyed by name, not fields: three or more,
    every one an object."""
    if len(node) < 3:
        return False
    if isinstance(node, LazyObject):  # a large map's members are parsed once, by the walk
        return node.all_objects()
    return all(is_object(value) for value in node.values())


def groups(doc: JsonDoc) -> list[Group]:
    """The record groups of a document (see the module docs), largest first."""
    found: dict[tuple[str | int | None, ...], Group] = {}
    names: dict[tuple[str | int | None, ...], set[str]] = {}
    root = doc.root()
    stack: list[tuple[tuple[str | int | None, ...], Iterator[tuple[Any, Any]]]] = []
    pending: list[tuple[tuple[str | int | None, ...], Any]] = [((), root)]
    while pending or stack:
        if pending:
            pattern, node = pending.pop()
            if is_object(node):
                group = found.setdefault(pattern, Group(pattern))
                group.records += 1
                if group.records <= MAX_TALLIED:
                    _tally(group, node)
                elif group.records == MAX_TALLIED + 1:
                    for stats in group.fields.values():
                        stats.many = True  # a value not seen yet may be in the rest
                        for member in stats.members.values():
                            member.many = True
                wild = _map_like(node)
                if wild:
                    seen = names.setdefault((*pattern, WILD), set())
                    if len(seen) < MAX_VALUES:
                        seen.update(node)
                stack.append((pattern, _children(node, wild)))
            elif is_array(node):
                stack.append((pattern, _rows(found, pattern, node)))
            continue
        pattern, children = stack[-1]
        for key, value in children:
            if is_object(value) or is_array(value):
                pending.append(((*pattern, key), value))
                break
        else:
            stack.pop()
    out = [g for g in found.values() if WILD in g.pattern and g.records > 1]
    _fold_named(out, found.values(), names)
    for group in out:
        for i, part in enumerate(group.pattern):
            if part is WILD and group.pattern[: i + 1] in names:
                group.keys[i] = names[group.pattern[: i + 1]]
    return sorted(out, key=lambda g: (-g.records, repr(g.pattern)))


def _fold_named(
    wild: list[Group], every: Iterable[Group], names: dict[tuple[Any, ...], set[str]]
) -> None:
    """Fold into each group the records a JSONPath wildcard of its pattern also reaches but
    the walk put under a name: the members of a map of two records (too few to be taken
    for a map) are what ``$.defs[*].properties[*]`` reaches too."""
    by_length: dict[int, list[Group]] = {}
    for group in wild:
        by_length.setdefault(len(group.pattern), []).append(group)
    for other in list(every):
        for group in by_length.get(len(other.pattern), ()):
            if other is group or not _reaches(group.pattern, other.pattern):
                continue
            group.records += other.records
            for i, part in enumerate(group.pattern):
                key = other.pattern[i]
                if part is WILD and isinstance(key, str):
                    names.setdefault(group.pattern[: i + 1], set()).add(key)
                    other.folded.add(key)
            for name, stats in other.fields.items():
                _merge(group.fields.setdefault(name, Field()), stats)


def _reaches(pattern: tuple[Any, ...], other: tuple[Any, ...]) -> bool:
    return pattern != other and all(
        p is WILD or p == o for p, o in zip(pattern, other, strict=True)
    )


def _merge(into: Field, stats: Field) -> None:
    into.present += stats.present
    into.kinds |= stats.kinds
    into.many |= stats.many
    for key, n in stats.values.items():
        if key in into.values or len(into.values) < MAX_VALUES:
            into.values[key] += n
        else:
            into.many = True
    for inner, member in stats.members.items():
        _merge(into.members.setdefault(inner, Field()), member)


def _rows(
    found: dict[tuple[str | int | None, ...], Group],
    pattern: tuple[str | int | None, ...],
    node: Iterable[Any],
) -> Iterator[tuple[Any, Any]]:
    """An array's items as the walk reads them, once; when none is an object, they are
    counted as the records (rows) of the group ``pattern[*]``."""
    rows, objects = 0, False
    for value in node:
        rows += 1
        objects = objects or is_object(value)
        yield WILD, value
    if rows and not objects:
        key = (*pattern, WILD)
        found.setdefault(key, Group(key)).records += rows


def _children(node: Mapping[str, Any], wild: bool) -> Iterator[tuple[Any, Any]]:
    return ((WILD if wild else key, value) for key, value in node.items())


def _tally(group: Group, node: Mapping[str, Any]) -> None:
    """Note the fields of one record, up to :data:`MAX_RECORD_FIELDS` of them."""
    left = MAX_RECORD_FIELDS
    for key, value in node.items():
        if is_object(value) and not hasattr(value, "span"):
            for inner, leaf in itertools.islice(value.items(), left - 1):
                _note(group, (key, inner), leaf)
                left -= 1
        _note(group, (key,), value)
        left -= 1
        if left <= 0:
            return


def _note(group: Group, name: tuple[str, ...], value: Any) -> None:
    stats = group.fields.get(name)
    if stats is None:
        stats = group.fields[name] = Field()
    stats.present += 1
    kind = kind_of(value)
    stats.kinds.add(kind)
    if kind == "string" and NUMERAL.fullmatch(value):
        stats.numerals += 1
    if kind == "array":
        _note_members(stats, value)
    if kind in ("object", "array"):
        return  # a container is asked for, never compared whole
    key = (kind, value)
    if key in stats.values or len(stats.values) < MAX_VALUES:
        stats.values[key] += 1
    else:
        stats.many = True


def _note_members(stats: Field, array: Iterable[Any]) -> None:
    """Note the values the first :data:`MAX_MEMBERS` members of an array field hold; past
    them, a member field takes any value of its type."""
    members = stats.members
    for n, member in enumerate(array):
        if n == MAX_MEMBERS:
            for inner in members.values():
                inner.many = True
            return
        if is_object(member):
            for key, leaf in itertools.islice(_leaves(member, ()), MAX_MEMBER_KEYS):
                kind = _name_kind(leaf)
                if kind:
                    _add(members, key, kind, leaf)
        else:
            kind = _name_kind(member)
            if kind:
                _add(members, (), kind, member)


def _leaves(node: Mapping[str, Any], at: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """A member object's values with their keys; an object that holds only objects (a
    wrapper) is read through, to :data:`MEMBER_DEPTH` keys, its values under the keys that
    lead to them: a SARIF result's ``locations[*].physicalLocation.artifactLocation.uri``.
    An object that holds a value of its own is read no deeper (an instance's ``State.Name``
    is its group's field, not its reservation's)."""
    wrapper = all(is_object(value) for value in node.values())
    for key, value in node.items():
        if not is_object(value):
            yield (*at, key), value
        elif wrapper and len(at) + 1 < MEMBER_DEPTH:
            yield from _leaves(value, (*at, key))


def _name_kind(value: Any) -> str:
    """The kind of a member value a question may name (a scalar, a short text), else ``""``."""
    if isinstance(value, str):
        return "string" if len(value) <= MAX_NAME_CHARS else ""
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, int | float) else ""


def _add(
    members: dict[tuple[str, ...], Field], key: tuple[str, ...], kind: str, value: Any
) -> None:
    stats = members.get(key)
    if stats is None:
        stats = members[key] = Field()
    stats.present += 1
    stats.kinds.add(kind)
    values = stats.values
    if (kind, value) in values or len(values) < MAX_VALUES:
        values[kind, value] += 1
    else:
        stats.many = True
