"""Numbered SQL migrations, one folder per backend, applied in order on open.

Each backend's schema is ``0001_schema.sql``; a change to it is the next numbered file, never
an edit of one a database may have recorded. Each database keeps a ledger,
``schema_migrations (version, name)``, of the files applied to it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from taskloom.domain.errors import NotFound, StoreBusy, StoreError


def load(dialect: str) -> list[tuple[int, str, str]]:
    """``(number, name, sql)`` for every migration file of a backend, in order."""
    folder = resources.files(__name__) / dialect
    out = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            number = int(entry.name.split("_", 1)[0])
            out.append((number, entry.name, entry.read_text(encoding="utf-8")))
    return sorted(out)


def held_up(where: str, wait_s: float) -> StoreBusy:
    """The error of a migration that did not get its lock within ``wait_s`` (a caller that
    must answer at once, a hook, bounds its wait: ``Store.migrate_wait_s``)."""
    return StoreBusy(
        f"{where} needs a schema migration and another process held its lock past {wait_s:g} s"
    )


EARLIER_BUILDS = {
    "0001_core.sql": {"sqlite": 11, "postgres": 11},
    "0001_initial.sql": {"sqlite": 7, "postgres": 5},
}
"""The earlier development builds, by the file their ledgers begin with: each one's last
schema, per backend. A last schema holds this build's tables and columns (or fewer of them)
and its task-event format (and events of older ones, which a copy leaves out), so
``taskloom migrate-db`` copies from it."""


def earlier_schema(applied: Mapping[int, str], dialect: str) -> int | None:
    """The schema number of a database an earlier development build made (the highest version
    its ledger records), or ``None`` for a database of this build's line. ``applied`` is the
    ledger: version → file name. An earlier build's ledger records a version this build has
    under another file's name."""
    known = {number: file for number, file, _ in load(dialect)}
    if any(known.get(version, file) != file for version, file in applied.items()):
        return max(applied)
    return None


def pending(
    applied: Mapping[int, str], dialect: str, where: str, url: str, *, copy_source: bool = False
) -> list[tuple[int, str, str]]:
    """The migrations a database whose ledger is ``applied`` lacks, in order.

    Refuses a database a newer taskloom migrated (this one would write rows without the
    columns, triggers or events the newer schema relies on) and one an earlier development
    build made, saying what to do in one line; ``where`` names the database, ``url`` is how
    to name it to ``migrate-db``. As the source of a copy (``copy_source``), a database at an
    earlier build's last schema (:data:`EARLIER_BUILDS`) is read as it is: nothing is
    pending; one with no ledger at all is refused, not given taskloom's tables (an empty
    PostgreSQL database or schema, a mistyped name: the source is only read, and "0 rows
    copied" would pass for a copy)."""
    if copy_source and not applied:
        raise NotFound(f"{where} has no taskloom tables: there is nothing to copy from it")
    earlier = earlier_schema(applied, dialect)
    last = EARLIER_BUILDS.get(applied.get(1, ""), {}).get(dialect)
    if earlier is not None and earlier == last and copy_source:
        return []
    if earlier is not None:
        made = f"{where} was made by an earlier development build of taskloom"
        made += f" (schema {earlier:04d})"
        if earlier == last:
            raise StoreError(
                f"{made}: copy it into a new database with `taskloom migrate-db --from {url}"
                " --to NEW_URL`, or delete it"
            )
        copies = "" if last is None else f" (it copies that build's last schema, {last:04d})"
        raise StoreError(f"{made}, which this taskloom neither opens nor copies{copies}: delete it")
    migrations = load(dialect)
    newer = sorted(set(applied) - {number for number, _, _ in migrations})
    if newer:
        raise StoreError(
            f"{where} has migrations {newer} that this taskloom does not know (a newer"
            " taskloom wrote it): upgrade taskloom to use it"
        )
    return [m for m in migrations if m[0] not in applied]


_NAME = re.compile(r"\d{4}_[a-z0-9_]+\.sql")
FOREIGN_SHOWN = 5
"""How many of another application's tables a refusal to use its database names."""


def is_taskloom_history(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> bool:
    """Whether a ``schema_migrations`` table (its column names and ``(version, name)`` rows)
    is taskloom's ledger: other migration tools keep a table of that name too. Empty is
    taskloom's: another process may have just created it, in the transaction that goes on
    to fill it."""
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
