"""The ``taskloom`` command: a thin mirror of the Python API for people and agents' hooks."""

from __future__ import annotations

import inspect
import io
import logging
import re
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
import typer.main

from taskloom.cli import (
    board,
    doctor,
    goal,
    hooks,
    init,
    mcp,
    migrate,
    retention,
    serve,
    stash,
    tasks,
    tool,
    work,
)
from taskloom.cli.common import (
    DbOption,
    err,
    flush_out,
    guarded_stdout,
    open_db,
    print_error,
    print_text,
)
from taskloom.domain.errors import InvalidInput, TaskloomError

app = typer.Typer(
    name="taskloom",
    help=(
        "Durable work state for AI agents: todo boards, goals, a work queue, a live panel."
        "\n\nTry it: `taskloom demo` seeds a thread, `taskloom serve` shows it on"
        " http://127.0.0.1:8765/; `taskloom COMMAND --help` gives each command's options"
        " and an example."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _print_version(wanted: bool) -> None:
    if wanted:
        import taskloom

        print_text(f"taskloom {taskloom.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    pass


app.add_typer(board.app, name="board")
app.add_typer(tool.app, name="tool")
app.add_typer(goal.app, name="goal")
app.add_typer(tasks.app, name="tasks")
tasks.app.command()(work.work)
app.add_typer(hooks.app, name="hook")
app.command()(doctor.doctor)
app.command()(mcp.mcp)
app.command()(serve.serve)
app.command("migrate-db")(migrate.migrate_db)
app.add_typer(stash.app, name="stash")
app.add_typer(stash.guard_app, name="guard")
app.add_typer(init.app, name="init")
app.add_typer(retention.app, name="retention")

DEMO_THREAD = "demo"


@app.command()
def demo(db: DbOption = None) -> None:
    """Fill a `demo` thread with a small plan (once) and print its board.

    Example: taskloom demo
    """
    tl = open_db(db)
    handle = tl.board(DEMO_THREAD)
    snap = handle.list()
    if not snap["cards"]:
        handle.add("Read the issue", status="done")
        handle.add("Write the failing test", status="in_progress", active_form="Writing the test")
        handle.add("Make it pass", plan=["smallest change", "refactor"])
        snap = handle.add(
            "Open the pull request", approval_mode="required", status="awaiting_approval"
        )
    from taskloom.tools.board import render_board

    print_text(f"thread '{DEMO_THREAD}' in {tl.url}\n" + render_board(snap))


def _shown(arg: str) -> str:
    """An argument printable on any terminal: undecodable bytes as ``\\xff`` escapes."""
    try:
        return arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no byte decodes to (passed in from Python)
        return arg.encode("utf-8", "backslashreplace").decode("utf-8")


def check_utf8(args: Sequence[str]) -> None:
    """Refuse an argument holding bytes that are not UTF-8 (Python keeps them as lone
    surrogates), here once: deep in a command they crash the database driver or the printer."""
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(f"argument '{_shown(arg)}' is not valid UTF-8") from None


QUIET = logging.NullHandler()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; map every taskloom error to ``Error: …`` and exit 1, never a traceback.

    Output nobody reads (standard output closed, its reader gone) is dropped quietly: the
    command's work is saved before it prints (see ``common.write_out``). Output that cannot
    be written (a full disk), help included, is ``Error: cannot write the output: …``."""
    args = list(argv) if argv is not None else sys.argv[1:]
    # The PostgreSQL pool's own warnings (a connection discarded, a reconnect failing) would
    # reach stderr through logging's last resort, next to the one ``Error:`` line that says
    # the same; ``serve`` shows them, as a long-running server's log.
    logging.getLogger("psycopg").addHandler(QUIET)
    for stream in (sys.stdout, sys.stderr):  # an ASCII or Latin-1 locale: escape, not crash
        if isinstance(stream, io.TextIOWrapper):  # (after the write, which a retry repeats)
            stream.reconfigure(errors="backslashreplace")
    with guarded_stdout():
        code = _run(args)
        try:
            flush_out()  # here, not at exit: a full disk fails the flush, not the write
        except TaskloomError as exc:
            code = _error(exc)
    return code


# The order ``taskloom --help`` lists its commands in: a newcomer's first steps first.
ORDER = (
    "demo", "serve", "board", "goal", "tasks", "tool", "stash", "guard",
    "init", "mcp", "hook", "doctor", "retention", "migrate-db",
)  # fmt: skip


def cli() -> typer.core.TyperGroup:
    """The command Typer builds from ``app``, its commands in ``ORDER``, each help text's
    paragraphs joined into lines (Typer's help keeps a docstring's line breaks, which leave
    every wrapped sentence ragged on a terminal narrower than the source), and its flags shown
    as flags (see :func:`_flags`)."""
    command = typer.main.get_group(app)
    first = {name: command.commands[name] for name in ORDER if name in command.commands}
    command.commands = {**first, **command.commands}
    todo: list[Any] = [command]
    while todo:
        cmd = todo.pop()
        todo += getattr(cmd, "commands", {}).values()
        if cmd.help:
            paragraphs = _examples_apart(inspect.cleandoc(cmd.help)).split("\n\n")
            cmd.help = "\n\n".join(" ".join(p.split("\n")) for p in paragraphs)
        _flags(cmd)
    return command


def _examples_apart(text: str) -> str:
    """``text`` with each line that starts ``Example:`` a paragraph of its own: consecutive
    examples stay one a line instead of being joined into one run-on sentence."""
    return re.sub(r"\n+(?=Example:)", "\n\n", text)


def _flags(cmd: Any) -> None:
    """Give the command's flags (``--print``, ``--help``) no value in its help: Typer's help
    panel printed ``--print <bool>`` though ``--print true`` is refused. The help option is
    made on first use and kept, so it is made here, for the same object to be shown."""
    options = [*cmd.params, cmd.get_help_option(typer.Context(cmd))]
    for option in options:
        if getattr(option, "is_flag", False) or getattr(option, "count", False):
            option.metavar = ""


def _run(args: list[str]) -> int:
    """The command's exit status; its errors printed as one line. A ``hook`` command line
    this taskloom does not take (an option a newer one wrote, a typo) exits 1, never 2: a
    coding agent reads 2 from a prompt hook as "block this prompt", so every prompt the user
    typed would be dropped; 1 is an error it shows and goes on."""
    try:
        check_utf8(args)
        if args[:1] == ["hook"]:
            return _run_hook(args)
        cli().main(args=args, prog_name="taskloom")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except TaskloomError as exc:
        return _error(exc)
    except KeyboardInterrupt:
        err.print("Interrupted.")
        return 130
    return 0


USAGE_ERRORS = (typer.TyperException, typer.Abort)
"""What a command line Typer cannot run raises outside its standalone mode."""


def _run_hook(args: list[str]) -> int:
    """A ``hook`` command, its usage errors one ``Error:`` line and status 1."""
    try:
        code = cli().main(args=args, prog_name="taskloom", standalone_mode=False)
    except USAGE_ERRORS as exc:
        import taskloom

        message = exc.format_message() if hasattr(exc, "format_message") else "aborted"
        if message:  # none after the help that no arguments print
            print_error(f"{message} (taskloom {taskloom.__version__}; see taskloom hook --help)")
        return 1
    return code if isinstance(code, int) else 0


def _error(exc: TaskloomError) -> int:
    print_error(exc)
    return 1


def run() -> None:
    sys.exit(main())
