"""``taskloom stash …`` and ``taskloom guard wrap``: inspect and read stashed tool results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

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
    read_stdin,
)

app = typer.Typer(
    help="List and read a thread's stashed tool results.\n\nExample: taskloom stash list my-thread",
    no_args_is_help=True,
)
guard_app = typer.Typer(
    help="Run the context guard by hand.\n\n"
    "Example: taskloom guard wrap my-thread --tool github_issues < issues.json",
    no_args_is_help=True,
)

Thread = Annotated[str, typer.Argument(help="Thread id (any string your host uses).")]
ResultId = Annotated[str, typer.Argument(help="Result id, as shown in `stash list`.")]
RESULT_ID = {"result_id": "a result id"}
"""The guard's name for the result id argument, as its errors say it here."""


def _print_rows(
    rows: list[dict[str, Any]], as_json: bool, line: Callable[[dict[str, Any]], str], empty: str
) -> None:
    if as_json:
        print_json(rows)
        return
    if not rows:
        print_text(empty)
    for r in rows:
        print_text(line(r))


@app.command("list")
def list_(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """List the live stashed results of a thread, oldest first.

    Example: taskloom stash list my-thread
    """
    _print_rows(
        open_listing(db).guard(thread).results(),
        as_json,
        lambda r: (
            f"{r['result_id']}  {r['tool_name']}  {'json' if r['is_json'] else 'text'}  "
            f"{r['tokens']:,} tokens  {r['bytes']:,} bytes  stored {r['created_at']}  "
            f"expires {r['expires_at']}"
        ),
        empty=f"no stashed results in thread '{thread}'",
    )


@app.command()
def show(
    thread: Thread, result_id: ResultId, db: DbOption = None, as_json: JsonOption = False
) -> None:
    """Show a result's metadata and the placeholder the model saw.

    Example: taskloom stash show my-thread res_1a2b3c4d5e6f7a8b
    """
    with flag_names(RESULT_ID):
        row = open_existing(db).guard(thread).show(result_id)
    if as_json:
        print_json(row)
    else:
        print_text(str(row.pop("placeholder")))


@app.command()
def read(
    thread: Thread,
    result_id: ResultId,
    path: Annotated[str | None, typer.Option(help="JSONPath, e.g. '$.items[0]'.")] = None,
    lines: Annotated[str | None, typer.Option(help="Line range, e.g. '120-180'.")] = None,
    page: Annotated[
        int | None, typer.Option(help="Page number (1-based); with --path, of the matches.")
    ] = None,
    db: DbOption = None,
) -> None:
    """Print an exact slice of a stashed result, as the `read_result` tool would.

    Example: taskloom stash read my-thread res_1a2b3c4d5e6f7a8b --path '$.items[0]'
    """
    with flag_names({**RESULT_ID, "path": "--path", "lines": "--lines", "page": "--page"}):
        text = open_existing(db).guard(thread).read(result_id, path=path, lines=lines, page=page)
    print_text(text)


@app.command()
def extract(
    thread: Thread,
    result_id: ResultId,
    query: Annotated[str, typer.Argument(help="Question, JSONPath or /regex/.")],
    db: DbOption = None,
) -> None:
    """Answer a query from a stashed result, as the `extract_from_result` tool would.

    Example: taskloom stash extract my-thread res_1a2b3c4d5e6f7a8b "state of issue 1347"
    """
    with flag_names(RESULT_ID):
        text = open_existing(db).guard(thread).extract(result_id, query)
    print_text(text)


@app.command()
def log(thread: Thread, db: DbOption = None, as_json: JsonOption = False) -> None:
    """Show the stash log of a thread (stored, evicted, expired), newest first.

    Example: taskloom stash log my-thread
    """
    _print_rows(
        open_listing(db).guard(thread).history(),
        as_json,
        lambda r: f"{r['created_at']}  {r['action']:<8} {r['result_id']}  {r['detail']}",
        empty=f"nothing logged in thread '{thread}'",
    )


@guard_app.command()
def wrap(
    thread: Thread,
    tool: Annotated[str, typer.Option("--tool", help="Name of the tool that produced it.")],
    hint: Annotated[str | None, typer.Option(help="What the user is trying to do.")] = None,
    db: DbOption = None,
) -> None:
    """Read a tool output on stdin and print what the model would see.

    Example: taskloom guard wrap my-thread --tool github_issues < issues.json
    """
    output = read_stdin("guard wrap")
    with flag_names({"tool_name": "--tool"}):
        wrapped = open_db(db).guard(thread).wrap(tool, output, hint=hint)
    print_text(wrapped)
