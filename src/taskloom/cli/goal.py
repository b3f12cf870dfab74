"""``taskloom goal …``: read and steer a thread's goal (host controls live here)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from taskloom.cli.common import DbOption, JsonOption, open_db, open_existing, print_json, print_text

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
    _show(open_db(db).goal(thread).set(objective, token_budget=budget), as_json)


@app.command()
def pause(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Pause the goal (no auto-continuation).

    Example: taskloom goal pause my-thread
    """
    _show(open_existing(db).goal(thread).pause(), as_json)


@app.command()
def resume(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Resume a paused or blocked goal.

    Example: taskloom goal resume my-thread
    """
    _show(open_existing(db).goal(thread).resume(), as_json)


@app.command()
def clear(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Remove the goal.

    Example: taskloom goal clear my-thread
    """
    _show(open_existing(db).goal(thread).clear(), as_json)


@app.command()
def budget(
    thread: Thread,
    tokens: Annotated[int | None, typer.Argument(help="New budget; omit to remove it.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Set, raise or remove the token budget (a time budget is kept).

    Example: taskloom goal budget my-thread 500000
    """
    _show(open_existing(db).goal(thread).set_budget(tokens), as_json)


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
