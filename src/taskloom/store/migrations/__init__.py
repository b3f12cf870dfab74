"""Numbered SQL migrations, one folder per backend, applied in order on open."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from importlib import resources
from typing import Any

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


_NAME = re.compile(r"\d{4}_[a-z0-9_]+\.sql")
FOREIGN_SHOWN = 5
"""How many of another application's tables a refusal to use its database names."""


def is_taskloom_history(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> bool:
    """Whether a ``schema_migrations`` table (its column names and ``(version, name)`` rows)
    is taskloom's: Rails, golang-migrate, dbmate and Ecto keep a table of that name too, and
    taskloom's rows and tables went into theirs. Empty is taskloom's: another process may
    have just created it, in the transaction that goes on to fill it."""
    if list(columns) != ["version", "name"]:
        return False
    return all(
        isinstance(version, int)
        and isinstance(name, str)
        and _NAME.fullmatch(name) is not None
        and int(name[:4]) == version
        for version, name in rows
    )


def refuse_foreign(tables: Sequence[str], where: str, instead: str) -> None:
    """Refuse a database whose ``tables`` (and views) are another application's: ``where``
    names it, ``instead`` says what to use."""
    shown = ", ".join(tables[:FOREIGN_SHOWN]) + (", …" if len(tables) > FOREIGN_SHOWN else "")
    raise StoreError(f"{where} is not a taskloom database (it has tables: {shown}); {instead}")
