"""A value that recurs in one field reads as a condition on that field, however many
distinct values the field holds.

"How many tmpfs mounts are there?" over a disk listing whose ``Filesystem`` column holds
sixty device names: ``tmpfs`` is the value of one row in twenty or more (three at least)
and of no other field, so the question counts the rows holding it. A value few rows hold (a
name, an id) is no such reading, since a question's word may equal it by chance; nor is a
value two fields hold, nor one of a field whose values were not all counted.
"""

from __future__ import annotations

from taskloom.guard.groups import Group


def recurring_holders(group: Group, word: str) -> list[tuple[str, ...]]:
    """The one field of ``group`` that holds ``word`` as a whole value in at least one
    record in twenty (and three), every value of it counted; else no field."""
    found: list[tuple[str, ...]] = []
    for name, stats in group.fields.items():
        held = stats.values.get(("string", word), 0)
        if not held:
            continue
        if stats.many or held < max(3, stats.present // 20):
            return []
        found.append(name)
    return found if len(found) == 1 else []
