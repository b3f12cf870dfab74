"""Values held in an array inside each record: ``tags: ["urgent", "db"]``,
``labels: [{"name": "bug"}, …]``.

"How many issues have the label bug?" sets a condition on an array field: that one of its
members is ``bug`` (a scalar member) or holds ``bug`` in one of its fields (a member
object). :mod:`~taskloom.guard.groups` notes the values an array field's members hold,
under the member key that holds them (:attr:`~taskloom.guard.groups.Field.members`); this
module reads a question's value against them. A value of the record's own fields is read
first: a member is matched only when no such field holds the value.

When several member keys hold a value, the one that reads as a name is taken: the scalar
members themselves, then a key such as ``name``, ``login``, ``title`` or ``label``, then
the key seen first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from taskloom.guard.groups import Field, Group
from taskloom.guard.rank import parts_of

T = TypeVar("T")

_NAMES = ("name", "login", "username", "title", "label", "tag", "key", "slug", "value", "id")
"""Keys of a member object whose values name it, the likeliest first."""


def ordered(stats: Field) -> list[tuple[tuple[str, ...], Field]]:
    """The member keys of an array field with the values they hold, names first."""

    def rank(key: tuple[str, ...]) -> int:
        if not key:
            return -1
        parts = parts_of(key[-1])
        return min((_NAMES.index(p) for p in parts if p in _NAMES), default=len(_NAMES))

    return sorted(stats.members.items(), key=lambda item: rank(item[0]))


def first_member(
    stats: Field, match: Callable[[Field], T | None]
) -> tuple[tuple[str, ...], T] | None:
    """The first member key (names first) of an array field for which ``match`` reads a
    value, with what it read."""
    for key, member in ordered(stats):
        got = match(member)
        if got is not None:
            return key, got
    return None


def member_holders(
    group: Group, holds: Callable[[Field], bool]
) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each array field of ``group`` (its name, and the member key) whose members hold a
    value, as ``holds`` says: one per array field, its name-like key first."""
    out = []
    for name, stats in group.fields.items():
        if not stats.members:
            continue
        found = first_member(stats, lambda member: True if holds(member) else None)
        if found is not None:
            out.append((name, found[0]))
    return out
