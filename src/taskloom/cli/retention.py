"""``taskloom retention``: how much of the event log a database keeps.

The policy is stored in the database and applied by every process that writes to it (see
:mod:`taskloom.store.retention`), so it is set once, not passed to each command.
"""

from __future__ import annotations

import re
import time
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any

import typer

from taskloom.cli.common import (
    DbOption,
    JsonOption,
    check_range,
    note,
    open_db,
    open_existing,
    print_json,
    print_text,
)
from taskloom.domain.common import UNSET
from taskloom.domain.errors import InvalidInput
from taskloom.domain.text import counted

if TYPE_CHECKING:
    from taskloom.client import Taskloom

app = typer.Typer(
    help="Show or set how much of the event log the database keeps (every writer applies it).\n\n"
    "Example: taskloom retention set --keep 50000 --older-than 7d",
    no_args_is_help=True,
)

MAX_KEEP = 2**63 - 1  # the database's largest integer
MAX_AGE_DAYS = 36525  # 100 years, the longest duration the queue takes
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
AGE = "--older-than"
"""The age flag of every retention command: ``tasks prune``, ``retention set``, ``serve``."""
AGE_EXAMPLES = "30d, 12h, 30m, 90s, 2w or 1d12h"


def parse_seconds(text: str, *, none: bool = False) -> float:
    """``7d``, ``12h``, ``30m``, ``90s``, ``2w`` (or ``1d12h``), or ``0``, in seconds; with
    ``none``, ``none`` too (as ``0``). A bare number other than 0 has no unit: refused."""
    cleaned = text.strip().lower()
    if cleaned == "0" or (none and cleaned == "none"):
        return 0.0
    if not cleaned or _DURATION.sub("", cleaned):
        also = " (or none)" if none else ""
        raise InvalidInput(
            f"{AGE} takes a duration such as 7d, 12h, 30m or 90s{also}, not {text!r}"
        )
    return sum(float(n) * _UNITS[unit] for n, unit in _DURATION.findall(cleaned))


def parse_age(text: str) -> timedelta | None:
    """An event age limit: a duration as :func:`parse_seconds` reads it; ``0`` (``0d`` too)
    or ``none``: no age limit (``None``). One over the policy's limit is refused here,
    before any database is opened."""
    from taskloom.store.retention import RetentionPolicy

    seconds = parse_seconds(text, none=True)
    if not seconds:
        return None
    age = timedelta(seconds=_at_most_a_century(seconds))
    RetentionPolicy(None, age)  # one the policy refuses, refused now
    return age


def task_age(text: str) -> float:
    """``tasks prune``'s age, in seconds: a duration (``0``: every finished task)."""
    return _at_most_a_century(parse_seconds(text))


def _at_most_a_century(seconds: float) -> float:
    """Every age flag's one limit, in the flag's words."""
    if seconds > MAX_AGE_DAYS * 86400:
        raise InvalidInput(f"{AGE} must be at most {MAX_AGE_DAYS}d (100 years)")
    return seconds


def days_alias(days: float, flag: str) -> float:
    """A deprecated age flag that counts days (``tasks prune --days``, ``serve
    --retain-days``): checked as before, a one-line note on stderr naming :data:`AGE`,
    and returned in seconds."""
    check_range(days, flag, 0, MAX_AGE_DAYS)  # NaN and inf fail too
    shown = format(Decimal(repr(days)), "f")  # 1e-05 as 0.00001, which the flag reads
    shown = shown.rstrip("0").rstrip(".") if "." in shown else shown
    note(f"{flag} is deprecated; use {AGE} {shown + 'd' if days else '0'}")
    return days * 86400


def one_age(given: str | None, alias: float | None, flag: str) -> None:
    """Refuse :data:`AGE` given with its deprecated alias ``flag``."""
    if given is not None and alias is not None:
        raise InvalidInput(f"give {AGE} or {flag}, not both ({flag} is its old name)")


def save(tl: Taskloom, *, keep: Any = UNSET, older_than: Any = UNSET) -> str:
    """Store the limits given (``None``: no such limit) as the database's policy; the policy
    now in force, in words."""
    from taskloom.store.retention import set_policy

    return set_policy(tl.store, tl.now(), keep=keep, older_than=older_than).describe()


@app.command("set")
def set_(
    keep: Annotated[
        int | None,
        typer.Option(
            "--keep", help="Keep the newest N events (0: no count limit).", show_default=False
        ),
    ] = None,
    older_than: Annotated[
        str | None,
        typer.Option(
            AGE,
            help=f"Drop events older than this: {AGE_EXAMPLES} (0 or none: no age limit).",
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Set the database's event retention, and apply it now.

    A limit left out stays as it was. Every process that writes to the database applies the
    policy from then on (after its first write, then every 1,000 writes or second of
    writing), a bounded batch at a time; a reader whose place in the log was pruned gets the
    current state instead.

    Example: taskloom retention set --keep 50000 --older-than 7d
    """
    from taskloom.store.retention import apply_all, event_counts

    if keep is None and older_than is None:
        raise InvalidInput("give --keep, --older-than or both")
    changes: dict[str, Any] = {}
    if keep is not None:
        if not 0 <= keep <= MAX_KEEP:
            raise InvalidInput(f"--keep must be from 0 to {MAX_KEEP}")
        changes["keep"] = keep or None
    if older_than is not None:
        changes["older_than"] = parse_age(older_than)
    tl = open_db(db)
    before = event_counts(tl.store)["events"]
    # The write that saves the policy applies it too (every writer's first commit does), so
    # what was pruned is counted from the log, not from the batches below.
    described = save(tl, **changes)
    apply_all(tl.store, tl.now, progress=_Progress())
    report = _report(tl)
    pruned = max(0, before - report["events"])
    if as_json:
        print_json({**report, "pruned": pruned})
        return
    print_text(f"event retention: {described}")
    print_text(f"pruned {counted(pruned, 'event')} now")


@app.command("show")
def show(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Show the database's event retention, what its event log holds, and its stash log.

    The stash log's lines older than 30 days go, whatever the policy.

    Example: taskloom retention show
    """
    report = _report(open_existing(db))
    if as_json:
        print_json(report)
        return
    default = " (the default: change it with taskloom retention set)" if report["default"] else ""
    print_text(f"event retention: {report['described']}{default}")
    line = f"events kept: {report['events']:,}"
    if report["events"]:
        line += f" (oldest {report['oldest']}, newest {report['newest']})"
    print_text(line)
    print_text(
        f"stash log lines kept: {report['stash_log_lines']:,}"
        f" (none older than {report['stash_log_days']} days)"
    )


def _report(tl: Taskloom) -> dict[str, Any]:
    from taskloom.store.retention import (
        DEFAULT_POLICY,
        STASH_LOG_AGE,
        event_counts,
        read_policy,
        stash_log_lines,
    )

    with tl.store.read() as tx:
        stored = read_policy(tx)
    policy = stored or DEFAULT_POLICY
    return {
        **policy.to_dict(),
        "default": stored is None,
        "described": policy.describe(),
        **event_counts(tl.store),
        "stash_log_lines": stash_log_lines(tl.store),
        "stash_log_days": STASH_LOG_AGE.days,
    }


class _Progress:
    """Tells stderr how many events a long prune has deleted so far, at most once a second."""

    def __init__(self) -> None:
        self.due = time.monotonic() + 1

    def __call__(self, deleted: int) -> None:
        if time.monotonic() >= self.due:
            note(f"{counted(deleted, 'event')} pruned so far", prefix="")
            self.due = time.monotonic() + 1
