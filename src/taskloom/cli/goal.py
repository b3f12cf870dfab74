"""``taskloom goal …``: read and steer a thread's goal (host controls live here)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from taskloom.cli.common import (
    DbOption,
    JsonOption,
    flag_names,
    open_db,
    open_existing,
    print_json,
    print_text,
)
from taskloom.domain.errors import InvalidInput, InvariantViolation

app = typer.Typer(help="Read and steer a thread's goal.", no_args_is_help=True)
Thread = Annotated[str, typer.Argument(help="Thread id.")]


def _show(snap: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(snap)
    else:
        from taskloom.tools.goals import render_goal  # with pydantic: only when shown

        print_text(render_goal(snap).content)


@app.command()
def show(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Print the goal.

    Example: taskloom goal show my-thread
    """
    _show(open_db(db).goal(thread).get(), as_json)


@app.command("set")
def set_(
    thread: Thread,
    objective: Annotated[str, typer.Argument(help="The objective.")],
    budget: Annotated[int | None, typer.Option(help="Token budget (positive).")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Set or replace the goal (as the host: any budget allowed).

    Example: taskloom goal set my-thread "Ship 1.0" --budget 200000
    """
    with flag_names({"token_budget": "--budget"}):
        snap = open_db(db).goal(thread).set(objective, token_budget=budget)
    _show(snap, as_json)


@app.command()
def pause(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Pause the goal (no auto-continuation).

    Example: taskloom goal pause my-thread
    """
    _show(open_existing(db).goal(thread).pause(), as_json)


@app.command()
def resume(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Resume a paused or blocked goal (a complete one is an error: set a new objective).

    Example: taskloom goal resume my-thread
    """
    try:
        snap = open_existing(db).goal(thread).resume()
    except InvariantViolation as exc:  # a complete goal: say how to start a new one
        raise InvariantViolation(f"{exc.message} with `taskloom goal set`") from None
    _show(snap, as_json)


@app.command()
def clear(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Remove the goal.

    Example: taskloom goal clear my-thread
    """
    _show(open_existing(db).goal(thread).clear(), as_json)


@app.command()
def budget(
    thread: Thread,
    tokens: Annotated[int | None, typer.Argument(help="New token budget (positive).")] = None,
    remove: Annotated[
        bool, typer.Option("--remove", help="Remove the token budget instead (no limit).")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Set or raise the token budget, or remove it with --remove (a time budget is kept).

    Example: taskloom goal budget my-thread 500000
    """
    _show(open_existing(db).goal(thread).set_budget(_budget(tokens, remove)), as_json)


def _budget(tokens: int | None, remove: bool) -> int | None:
    """The budget asked for. Removing a safety limit takes its own flag: a number left out
    (a script's empty variable) removed it."""
    if remove and tokens is not None:
        raise InvalidInput("give a new token budget or --remove, not both")
    if not remove and tokens is None:
        raise InvalidInput("give the new token budget (or --remove to remove it)")
    return tokens


@app.command()
def complete(
    thread: Thread,
    evidence: Annotated[str | None, typer.Option(help="How it was verified.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Mark the goal complete.

    Example: taskloom goal complete my-thread --evidence "CI green on main"
    """
    _show(open_existing(db).goal(thread).complete(evidence), as_json)
