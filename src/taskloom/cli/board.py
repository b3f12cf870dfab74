"""``taskloom board …``: read and change a thread's todo board."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from taskloom.cli.common import (
    DbOption,
    JsonOption,
    flag_names,
    open_db,
    open_existing,
    open_listing,
    print_json,
    print_text,
)
from taskloom.domain.errors import Conflict, InvalidInput
from taskloom.domain.text import terminal_safe
from taskloom.store.pg_url import url_has_password

if TYPE_CHECKING:
    from taskloom.boards import Snapshot

app = typer.Typer(
    help="Read and change a thread's todo board.\n\n"
    'Example: taskloom board add my-thread "Write the failing test" --plan unit',
    no_args_is_help=True,
)

Thread = Annotated[str, typer.Argument(help="Thread id (any string your host uses).")]
CardId = Annotated[str, typer.Argument(help="Card id, as shown in `board list`.")]
After = Annotated[
    list[str] | None,
    typer.Option(
        "--after",
        metavar="CARD_ID",
        help="A card this one comes after: it can start once that card is done (repeat).",
    ),
]


Seen = Annotated[
    str | None,
    typer.Option(
        "--seen",
        metavar="UPDATED_AT",
        help="The card's updated_at, as the approve line of `board list` gives it (or"
        " `board list --json`): the decision is refused if the model changed the card since,"
        " so you decide on the plan you read.",
    ),
]


def _show(snap: Snapshot, as_json: bool) -> None:
    if as_json:
        print_json(snap)
    else:
        from taskloom.tools.board import render_board  # with pydantic: only when shown

        print_text(render_board(snap))


_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})")
"""A card's ``updated_at`` as taskloom writes it (ISO 8601, UTC)."""


def _command(name: str, db: str | None, *args: str, options: Sequence[str] = ()) -> str:
    """``taskloom board NAME … ARGS`` as a line that runs as printed: options first and
    ``--`` before the ids, which a model may start with ``-`` (card ``-1``); and the ``--db``
    this command was given, else the line acts on another database. A URL holding a
    password is left out: printed, it stays in scrollback and pasted logs."""
    given = [*options, *(("--db", db) if db and not url_has_password(db) else ())]
    return shlex.join(["taskloom", "board", name, *given, "--", *args])


def _waiting(snap: Snapshot, db: str | None = None) -> str:
    """How to decide on each plan awaiting approval, tied to the version shown above it."""
    lines = [
        # The title on a line of its own: in a shell comment beside the command, a title
        # holding a line break would start a command of its own.
        f"  {' / '.join(terminal_safe(c['title']).splitlines())}:\n    "
        + _command("approve", db, snap["thread_id"], c["id"], options=("--seen", c["updated_at"]))
        for c in snap["cards"]
        if c["status"] == "awaiting_approval"
    ]
    if not lines:
        return ""
    head = (
        "Awaiting a person's decision (reject takes the same arguments; --seen refuses a plan"
        " changed since this listing"
    )
    if db and url_has_password(db):
        head += "; add --db with your database URL: it holds a password, so it is not shown"
    return "\n".join([head + "):", *lines])


def _decide(thread: str, card_id: str, approve: bool, seen: str | None, db: str | None) -> Snapshot:
    """A person's decision; refused for a plan changed since ``seen``, with the command that
    shows it again (and gives the approve line with its fresh ``--seen``)."""
    if seen is not None and not _STAMP.fullmatch(seen):
        raise InvalidInput(
            f"--seen {seen!r} is not a card's updated_at: copy it from the approve line"
            " `taskloom board list` prints (or from `board list --json`)"
        )
    try:
        return open_existing(db).board(thread).decide_plan(card_id, approve, seen=seen)
    except Conflict as exc:
        if seen is None:
            raise
        again = _command("list", db, thread)
        raise Conflict(f"{exc.message}; run `{again}` again for the fresh command") from None


@app.command("list")
def list_(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Print the board, and the `board approve` line for each plan awaiting approval.

    That line carries the `--seen` that ties the decision to the plan printed.

    Example: taskloom board list my-thread
    """
    snap = open_listing(db).board(thread).list()
    _show(snap, as_json)
    if not as_json and (waiting := _waiting(snap, db)):
        print_text(waiting)


@app.command()
def add(
    thread: Thread,
    title: Annotated[str, typer.Argument(help="Card title.")],
    status: Annotated[str | None, typer.Option(help="Initial status (default todo).")] = None,
    objective: Annotated[str | None, typer.Option(help="What the card achieves.")] = None,
    notes: Annotated[str | None, typer.Option(help="Free notes.")] = None,
    plan: Annotated[list[str] | None, typer.Option("--plan", help="A plan step (repeat).")] = None,
    needs_approval: Annotated[
        bool,
        typer.Option(
            "--needs-approval",
            help="Wait for a person to approve the plan: the card starts"
            " awaiting_approval, where `taskloom board approve` and the panel take it.",
        ),
    ] = False,
    after: After = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add a card.

    Example: taskloom board add my-thread "Write the tests" --plan "unit" --after 0193…
    """
    fields: dict[str, Any] = {"objective": objective, "notes": notes, "plan": plan or ()}
    if after:
        fields["blocked_by"] = after
    if status:
        fields["status"] = status
    if needs_approval:
        _check_waits(status)
        fields["approval_mode"] = "required"
        fields.setdefault("status", "awaiting_approval")
    _show(open_db(db).board(thread).add(title, **fields), as_json)


def _check_waits(status: str | None) -> None:
    """Refuse --needs-approval with another status than awaiting_approval: a card in progress
    or done that "needs approval" would pass for approved by no one, and one in todo could
    not be approved (a person approves cards awaiting approval)."""
    from taskloom.domain.card import CardStatus, parse_status

    if status and parse_status(status) is not CardStatus.AWAITING_APPROVAL:
        raise InvalidInput(
            f"--needs-approval makes the card wait for a person's approval, so it cannot start"
            f" as {parse_status(status).value} (in todo no one could approve it): leave"
            " --status out"
        )


@app.command()
def edit(
    thread: Thread,
    card_id: CardId,
    title: Annotated[str | None, typer.Option(help="New title.")] = None,
    objective: Annotated[str | None, typer.Option(help="New objective ('' clears).")] = None,
    notes: Annotated[str | None, typer.Option(help="New notes ('' clears).")] = None,
    needs_approval: Annotated[
        bool | None,
        typer.Option(
            "--needs-approval/--no-approval",
            help="Make the card wait for a person to approve its plan (an unfinished card"
            " goes to awaiting_approval), or lift that.",
        ),
    ] = None,
    after: After = None,
    not_after: Annotated[
        list[str] | None,
        typer.Option(
            "--not-after",
            metavar="CARD_ID",
            help="A card this one no longer comes after (repeat).",
        ),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Change a card's fields, and which cards it comes after.

    Example: taskloom board edit my-thread 0193… --notes "see PR 12" --after 0194…
    """
    given = {
        "title": title,
        "objective": objective,
        "notes": notes,
        "add_blocked_by": after,
        "remove_blocked_by": not_after,
    }
    fields: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if needs_approval is not None:
        fields["approval_mode"] = "required" if needs_approval else "not_required"
    if not fields:
        raise InvalidInput(
            "nothing to change: give --title, --objective, --notes, --needs-approval or"
            " --no-approval, --after or --not-after"
        )
    _show(open_existing(db).board(thread).edit(card_id, **fields), as_json)


@app.command()
def status(
    thread: Thread,
    card_id: CardId,
    new_status: Annotated[str, typer.Argument(metavar="STATUS", help="New status or alias.")],
    blocker: Annotated[
        str | None, typer.Option(help="Why it is blocked (with the status blocked).")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Move a card to another status.

    Example: taskloom board status my-thread 0193… done
    """
    from taskloom.domain.card import CardStatus, parse_status

    target = parse_status(new_status)
    if blocker and blocker.strip() and target is not CardStatus.BLOCKED:
        # A card that is not blocked keeps no blocker: the text would be dropped unsaid.
        raise InvalidInput(
            "--blocker says why a card is blocked: give it with the status blocked,"
            f" not {target.value}"
        )
    kwargs: dict[str, Any] = {} if blocker is None else {"blocker": blocker}
    _show(open_existing(db).board(thread).update_status(card_id, new_status, **kwargs), as_json)


@app.command()
def approve(
    thread: Thread,
    card_id: CardId,
    seen: Seen = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Approve the plan of a card awaiting approval (it becomes ready).

    Example: taskloom board approve --seen 2026-01-01T12:00:00.000Z -- my-thread 0193…
    """
    _show(_decide(thread, card_id, True, seen, db), as_json)


@app.command()
def reject(
    thread: Thread,
    card_id: CardId,
    seen: Seen = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Reject the plan of a card awaiting approval.

    Example: taskloom board reject --seen 2026-01-01T12:00:00.000Z -- my-thread 0193…
    """
    _show(_decide(thread, card_id, False, seen, db), as_json)


@app.command()
def revise(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Send the plan back: reject every card awaiting approval.

    Example: taskloom board revise my-thread
    """
    _show(open_existing(db).board(thread).revise_plan(), as_json)


@app.command()
def remove(
    thread: Thread,
    card_id: CardId,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Remove it even though other cards wait on it (they no longer do)."
        ),
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove a card.

    Example: taskloom board remove my-thread 0193…
    """
    with flag_names({"remove_blocked_by": "board edit --not-after", "force": "--force"}):
        snap = open_existing(db).board(thread).remove(card_id, force=force)
    _show(snap, as_json)


@app.command()
def ready(
    thread: Thread,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Also say why each other unfinished card cannot start: the cards it waits"
            " on, a person's approval, its blocker.",
        ),
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the cards that can start now.

    Example: taskloom board ready my-thread --explain
    """
    view = open_listing(db).board(thread).ready(explain=explain)
    if as_json:
        print_json(view)
    else:
        print_text(view["text"])


@app.command()
def clear(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Remove every card from the board.

    Example: taskloom board clear my-thread
    """
    _show(open_existing(db).board(thread).clear(), as_json)
