"""Numbered SQL migrations, one folder per backend, applied in order on open."""

from __future__ import annotations

from collections.abc import Collection
from importlib import resources

from taskloom.domain.errors import StoreError


def load(dialect: str) -> list[tuple[int, str, str]]:
    """``(number, name, sql)`` for every migration file of a backend, in order."""
    folder = resources.files(__name__) / dialect
    out = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            number = int(entry.name.split("_", 1)[0])
            out.append((number, entry.name, entry.read_text(encoding="utf-8")))
    return sorted(out)


def refuse_newer(applied: Collection[int], dialect: str, name: str) -> None:
    """Refuse a database a newer taskloom migrated: this one would write rows without the
    columns, triggers or events the newer schema relies on (it used to go ahead)."""
    newer = sorted(set(applied) - {number for number, _, _ in load(dialect)})
    if newer:
        raise StoreError(
            f"the database {name} has migrations {newer} that this taskloom does not know (a newer"
            " taskloom wrote it): upgrade taskloom to use it"
        )
