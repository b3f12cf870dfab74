"""``taskloom doctor``: check the database, report stuck, orphaned, poisoned and dead tasks."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from taskloom.cli.common import (
    MAX_LIMIT,
    DbOption,
    JsonOption,
    check_range,
    open_existing,
    print_json,
    print_text,
)


def doctor(
    fix: Annotated[bool, typer.Option("--fix", help="Repair what is found.")] = False,
    poisoned_at: Annotated[
        int,
        typer.Option(
            "--poisoned-at",
            help="Attempts after which a ready task counts as poisoned (--fix cancels it).",
        ),
    ] = 5,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check the database and report stuck, orphaned, poisoned and dead tasks; --fix repairs.

    Stashed results past their TTL are counted too. --fix reclaims, cancels and purges, and
    never touches live work (a task whose lease has not ended). Each category lists at most
    20 task ids, and how many more there are; --json lists them all.

    Example: taskloom doctor --fix
    """
    check_range(poisoned_at, "--poisoned-at", 1, MAX_LIMIT)
    # A missing database is an error with or without --fix: a mistyped path must not look
    # like a healthy, empty queue.
    from taskloom.store.stash import count_expired, purge_stash

    tl = open_existing(db)
    tl.store.check()  # a damaged file is an error here, whatever its size
    report: dict[str, Any] = {
        "database": "ok",
        **tl.queue.doctor(fix=fix, poisoned_at=poisoned_at),
    }
    with tl.store.read() as tx:
        report["expired_stash_results"] = count_expired(tx, tl.now())
    if fix:  # the key is there whenever --fix is, so a script reads one shape; the purge
        # also drops the summaries of threads whose results are gone, expired or not
        report["purged_stash_results"] = purge_stash(tl.store, tl.now())
    if as_json:
        print_json(report)
        return
    print_text("database: ok")
    del report["database"]
    for category, found in report.items():
        if isinstance(found, int):
            print_text(f"{category.replace('_', ' ')}: {found:,}")
        elif category != "fixed" or fix:  # nothing is fixed without --fix: no line to read
            print_text(f"{category}: {len(found):,}" + _listed(found))
    if report["dead"]:
        print_text("(dead tasks run again after `taskloom tasks requeue ID` or `--all-dead`)")


LISTED = 20
"""The most ids the text report lists per category: a category of thousands is a count and
a sample, and ``--json`` lists them all."""


def _listed(ids: list[str]) -> str:
    """The ids after a category's count: all of them up to :data:`LISTED`, else that many and
    how many more there are."""
    if not ids:
        return ""
    shown = "  " + " ".join(ids[:LISTED])
    if len(ids) > LISTED:
        shown += f"  … and {len(ids) - LISTED:,} more (--json lists them all)"
    return shown
