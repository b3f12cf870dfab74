"""``taskloom goal …``: read and steer a thread's goal (host controls live here)."""

from __future__ import annotations

import shlex
from typing import Annotated, Any, TypeVar

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
from taskloom.domain.common import UNSET, Unset
from taskloom.domain.errors import InvalidInput, InvariantViolation

_T = TypeVar("_T")
app = typer.Typer(
    help="Read and steer a thread's goal.\n\n"
    'Example: taskloom goal set my-thread "Ship the 1.0 release" --budget 200000',
    no_args_is_help=True,
)
Thread = Annotated[str, typer.Argument(help="Thread id.")]
TimeOption = Annotated[
    float | None,
    typer.Option("--time", help="Time budget in seconds (positive).", show_default=False),
]


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
    _show(open_existing(db).goal(thread).get(), as_json)


@app.command("set")
def set_(
    thread: Thread,
    objective: Annotated[str, typer.Argument(help="The objective.")],
    budget: Annotated[int | None, typer.Option(help="Token budget (positive).")] = None,
    time: TimeOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Set or replace the goal (as the host: any budget allowed; a budget not given is kept).

    Example: taskloom goal set my-thread "Ship 1.0" --budget 200000 --time 3600
    """
    with flag_names({"token_budget": "--budget", "time_budget_s": "--time"}):
        snap = open_db(db).goal(thread).set(objective, token_budget=budget, time_budget_s=time)
    _show(snap, as_json)


@app.command()
def pause(
    thread: Thread,
    reason: Annotated[
        str | None,
        typer.Option(help="Why, shown with the goal (a blocked goal keeps its own without one)."),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Pause the goal (no auto-continuation).

    Example: taskloom goal pause my-thread --reason "on hold till the release"
    """
    _show(open_existing(db).goal(thread).pause(reason), as_json)


@app.command()
def resume(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Resume a paused or blocked goal.

    A complete goal is an error (set a new objective), and so is a budget-limited one (raise
    its budget with taskloom goal budget).

    Example: taskloom goal resume my-thread
    """
    handle = open_existing(db).goal(thread)
    try:
        snap = handle.resume()
    except InvariantViolation as exc:
        from taskloom.domain.goals import GoalStatus

        goal = handle.get()["goal"]
        if goal is not None and goal["status"] == GoalStatus.BUDGET_LIMITED:
            raise InvariantViolation(_out_of_budget(goal, handle.thread_id)) from None
        raise InvariantViolation(f"{exc.message} with `taskloom goal set`") from None  # complete
    _show(snap, as_json)


def _out_of_budget(goal: dict[str, Any], thread: str) -> str:
    """Why resume is refused, with the command that lifts the budget that ran out (both, if
    both did), rather than a success that changes nothing."""
    from taskloom.domain.goals import usage_text

    time_out = goal["time_budget_s"] is not None and goal["time_used_s"] >= goal["time_budget_s"]
    tokens_out = goal["token_budget"] is not None and goal["tokens_used"] >= goal["token_budget"]
    lifts = [(("N", "--remove"), tokens_out), (("--time SECONDS", "--remove-time"), time_out)]
    chosen = [flags for flags, out in lifts if out] or [("N", "--remove")]
    raise_it = " ".join(given for given, _ in chosen)
    remove_it = " ".join(flag for _, flag in chosen)
    return (
        f"the goal is out of budget ({usage_text(goal)}), which resume does not lift; raise it"
        f" with `taskloom goal budget {shlex.quote(thread)} {raise_it}` or remove it with"
        f" {remove_it}"
    )


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
    time: TimeOption = None,
    remove_time: Annotated[
        bool, typer.Option("--remove-time", help="Remove the time budget (no time limit).")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Set, raise or remove the token budget and the time budget; one not named is kept.

    The token budget: N, or --remove; the time budget: --time, or --remove-time. A goal that
    was budget_limited goes on once no budget is used up.

    Example: taskloom goal budget my-thread 500000 --time 3600
    """
    token_budget = _change(tokens, remove, "a new token budget", "--remove")
    time_budget = _change(time, remove_time, "--time", "--remove-time")
    if isinstance(token_budget, Unset) and isinstance(time_budget, Unset):
        raise InvalidInput(
            "give the new token budget (or --remove to remove it),"
            " or --time SECONDS (or --remove-time)"
        )
    with flag_names({"token_budget": "the token budget", "time_budget_s": "--time"}):
        snap = open_existing(db).goal(thread).set_budget(token_budget, time_budget_s=time_budget)
    _show(snap, as_json)


def _change(value: _T | None, remove: bool, given: str, flag: str) -> _T | Unset | None:
    """One budget's change: the value, ``None`` (removed) or ``UNSET`` (kept). Removing a
    safety limit takes its own flag, so a number left out (a script's empty variable) keeps it."""
    if remove and value is not None:
        raise InvalidInput(f"give {given} or {flag}, not both")
    if remove:
        return None
    return UNSET if value is None else value


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
