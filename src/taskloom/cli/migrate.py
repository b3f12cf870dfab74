"""``taskloom migrate-db``: move a database to another backend (usually SQLite → PostgreSQL)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated

import typer

from taskloom.cli.common import err, print_text
from taskloom.domain.errors import Interrupted, InvalidInput

PROGRESS_EVERY_S = 1.0
"""The least time between two progress lines of one table (its first and last always show):
a table of millions of rows tells how far it is, not each thousand rows."""


def _progress(table: str, done: int, total: int) -> None:
    """One progress line on stderr, so stdout carries only the final summary."""
    err.print(f"  {table}: {done:,}/{total:,} rows", markup=False)


def _now_and_then() -> Callable[[str, int, int], None]:
    """:func:`_progress` for a table's first and last count, and at most once every
    :data:`PROGRESS_EVERY_S` between them."""
    due = 0.0

    def told(table: str, done: int, total: int) -> None:
        nonlocal due
        now = time.monotonic()
        if done in (0, total) or now >= due:
            _progress(table, done, total)
            due = now + PROGRESS_EVERY_S

    return told


def migrate_db(
    source: Annotated[str, typer.Option("--from", help="Database to copy from (sqlite:///…).")],
    target: Annotated[
        str, typer.Option("--to", help="Empty database to copy into (postgresql://…).")
    ],
) -> None:
    """Copy every table (boards, goals, queue, stash, events, cursors) into an empty database.

    Both databases are migrated to the current schema first; the copy is one transaction on
    the destination, ids are kept, so SSE clients can resume with their Last-Event-ID. The
    source may be a database an earlier development build of taskloom made (schema 0011).

    Example: taskloom migrate-db --from sqlite:///.taskloom/taskloom.db --to postgresql://app@db/taskloom
    """
    from taskloom.store.copy import copy_database

    for flag, url in (("--from", source), ("--to", target)):
        if not url.strip():  # the store's message names --db, which this command lacks
            raise InvalidInput(
                f"{flag} is empty: give a database URL (sqlite:///path.db, postgresql://…)"
            )
    try:
        copied = copy_database(source, target, _now_and_then())
    except KeyboardInterrupt:  # 130 alone says nothing of the destination
        raise Interrupted(
            "nothing was copied (the copy is one transaction); the destination is as it was"
        ) from None
    if copied.left_out:
        err.print(
            f"  left out {copied.left_out:,} task events an earlier build stored in an older"
            " format (past states of tasks that are copied)",
            markup=False,
        )
    if copied.written_since:
        err.print(
            f"  note: the source gained {copied.written_since:,} events while it was copied"
            " (writers still running); their changes are not in the destination: stop every"
            " writer, then copy again into an empty database",
            markup=False,
        )
    rows, where = sum(copied.rows.values()), f"from {copied.source} to {copied.target}"
    print_text(f"copied {rows:,} rows in {len(copied.rows)} tables {where}")
