"""The ``taskloom`` command: a thin mirror of the Python API for people and agents' hooks."""

from __future__ import annotations

import atexit
import importlib
import inspect
import io
import logging
import os
import re
import signal
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
import typer.core
import typer.main

from taskloom.cli.common import err, flush_out, guarded_stdout, print_error, print_text
from taskloom.domain.errors import Interrupted, InvalidInput, TaskloomError

COMMANDS: dict[str, str] = {
    "demo": "taskloom.cli.demo:demo",
    "serve": "taskloom.cli.serve:serve",
    "board": "taskloom.cli.board:app",
    "goal": "taskloom.cli.goal:app",
    "tasks": "taskloom.cli.tasks:app",
    "tool": "taskloom.cli.tool:app",
    "stash": "taskloom.cli.stash:app",
    "guard": "taskloom.cli.stash:guard_app",
    "init": "taskloom.cli.init:app",
    "mcp": "taskloom.cli.mcp:mcp",
    "hook": "taskloom.cli.hooks:app",
    "doctor": "taskloom.cli.doctor:doctor",
    "retention": "taskloom.cli.retention:app",
    "migrate-db": "taskloom.cli.migrate:migrate_db",
}
"""Each command by name, as ``module:attribute``: the Typer app (a group) or the function (a
command), in the order ``taskloom --help`` lists them, a newcomer's first steps first. A
command line imports only the module of the command it names."""

ORDER = tuple(COMMANDS)

HELP = (
    "Durable work state for AI agents: todo boards, goals, a work queue, a live panel."
    "\n\nTry it: `taskloom demo` seeds a thread, `taskloom serve` shows it on"
    " http://127.0.0.1:8765/; `taskloom COMMAND --help` gives each command's options"
    " and an example."
)


def _print_version(wanted: bool) -> None:
    if wanted:
        import taskloom

        print_text(f"taskloom {taskloom.__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    pass


class _Root(typer.core.TyperGroup):
    """The ``taskloom`` group, which runs every command: a ``KeyboardInterrupt`` (Ctrl-C)
    from any of them comes out as :class:`~taskloom.domain.errors.Interrupted`, which
    :func:`_run` prints as one line, exit 130. Typer turns a ``KeyboardInterrupt`` into a
    silent exit 130, which left a person unsure the command had stopped, or what it left."""

    def invoke(self, ctx: Any) -> Any:  # (click.Context: typer vendors its own click)
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted() from None


def app(names: Sequence[str] = ORDER) -> typer.Typer:
    """The ``taskloom`` Typer app with the commands ``names`` (all by default)."""
    root = typer.Typer(
        name="taskloom",
        help=HELP,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        cls=_Root,
    )
    root.callback()(_root)
    for name in names:
        module, attribute = COMMANDS[name].split(":")
        found = getattr(importlib.import_module(module), attribute)
        if isinstance(found, typer.Typer):
            root.add_typer(found, name=name)
        else:
            root.command(name)(found)
    return root


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

    Output nobody reads (standard output closed, its reader gone: ``taskloom tasks list |
    head -1``) is dropped quietly, help included, and the command exits as it would have
    (0, not the shell's 141 for a death by SIGPIPE, nor click's 1): the command's work is
    saved before it prints (see ``common.write_out``); only output that must arrive (a
    claimed task's token) makes it exit 1. Output that cannot be written (a full disk), help
    included, is ``Error: cannot write the output: …``. Ctrl-C is one line on stderr,
    ``Interrupted.`` (or what was and was not done), and exit 130 (see
    ``Interrupted``)."""
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


def cli(names: Sequence[str] = ORDER) -> typer.core.TyperGroup:
    """The command Typer builds from :func:`app` with the commands ``names``, in the order
    given, each help text's paragraphs joined into lines (Typer's help keeps a docstring's
    line breaks, which leave every wrapped sentence ragged on a terminal narrower than the
    source), and its flags shown as flags (see :func:`_flags`)."""
    command = typer.main.get_group(app(names))
    command.commands = {name: command.commands[name] for name in names}
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
        cli(_named(args)).main(args=args, prog_name="taskloom")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except Interrupted as exc:
        return _interrupted(exc)
    except TaskloomError as exc:
        return _error(exc)
    except KeyboardInterrupt:  # before a command runs (while it is imported)
        return _interrupted(Interrupted())
    return 0


def _interrupted(exc: Interrupted) -> int:
    err.print(exc.message, markup=False)
    return exc.status


def _named(args: Sequence[str]) -> Sequence[str]:
    """The commands a command line needs built: the one it names, else all of them (for the
    list that ``--help`` prints, or the one a misspelt name is refused among)."""
    return args[:1] if args[:1] and args[0] in COMMANDS else ORDER


USAGE_ERRORS = (typer.TyperException, typer.Abort)
"""What a command line Typer cannot run raises outside its standalone mode."""


def _run_hook(args: list[str]) -> int:
    """A ``hook`` command, its usage errors one ``Error:`` line and status 1."""
    try:
        code = cli(["hook"]).main(args=args, prog_name="taskloom", standalone_mode=False)
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
    code = main()
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        _ctrl_c_at_exit(code)
    sys.exit(code)


def _ctrl_c_at_exit(code: int) -> None:
    """The command is done, its output flushed: a Ctrl-C while the interpreter winds down
    ends it with ``code``, at once while it joins threads (a server's pools), else ignored
    (Python restores the default action before its last steps, and a second Ctrl-C to hurry
    a ``serve`` shutdown killed the process by SIGINT, without a word)."""
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(code))
    atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)  # after the joins
