"""``taskloom retention``: how much of the event log a database keeps.

The policy is stored in the database and applied by every process that writes to it (see
:mod:`taskloom.store.retention`), so it is set once, not passed to each command.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from taskloom.cli.common import DbOption, JsonOption, open_db, open_existing, print_json, print_text
from taskloom.domain.common import UNSET
from taskloom.domain.errors import InvalidInput
from taskloom.domain.text import counted

if TYPE_CHECKING:
    from taskloom.client import Taskloom

app = typer.Typer(
    help="How much of the event log the database keeps: set once, applied by every writer.",
    no_args_is_help=True,
)

MAX_KEEP = 2**63 - 1  # the database's largest integer
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")


def parse_age(text: str) -> timedelta | None:
    """``7d``, ``12h``, ``30m``, ``90s``, ``2w`` (or ``1d12h``) as a duration; ``0`` or
    ``none``: no age limit (``None``)."""
    cleaned = text.strip().lower()
    if cleaned in ("0", "none"):
        return None
    if not cleaned or _DURATION.sub("", cleaned):
        raise InvalidInput(
            f"--older-than takes a duration such as 7d, 12h, 30m or 90s (or none), not {text!r}"
        )
    seconds = sum(float(n) * _UNITS[unit] for n, unit in _DURATION.findall(cleaned))
    try:
        return timedelta(seconds=seconds)
    except OverflowError:
        raise InvalidInput("--older-than is longer than any calendar holds") from None


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
            "--older-than",
            help="Drop events older than this: 7d, 12h, 30m, 90s (none: no age limit).",
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
    from taskloom.store.retention import BATCH, apply_policy, event_counts

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
    while apply_policy(tl.store, tl.now()) >= BATCH:
        pass
    report = _report(tl)
    pruned = max(0, before - report["events"])
    if as_json:
        print_json({**report, "pruned": pruned})
        return
    print_text(f"event retention: {described}")
    print_text(f"pruned {counted(pruned, 'event')} now")


@app.command("show")
def show(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Show the database's event retention and what its event log holds.

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


def _report(tl: Taskloom) -> dict[str, Any]:
    from taskloom.store.retention import DEFAULT_POLICY, event_counts, read_policy

    with tl.store.read() as tx:
        stored = read_policy(tx)
    policy = stored or DEFAULT_POLICY
    return {
        **policy.to_dict(),
        "default": stored is None,
        "described": policy.describe(),
        **event_counts(tl.store),
    }
