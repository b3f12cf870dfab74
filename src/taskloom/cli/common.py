"""Options and output helpers shared by every CLI command (defined once, used everywhere)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import typer
from rich.console import Console

from taskloom.client import Taskloom, connect
from taskloom.domain.common import json_escaped_controls, terminal_safe
from taskloom.domain.errors import InvalidInput, NotFound

out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
# Help texts are rich markup: no square brackets in them, or rich takes them for tags and
# drops them (with the default they held).
DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Database URL: sqlite:///path.db or postgresql://… "
        "(default: $TASKLOOM_URL, else sqlite:///./.taskloom/taskloom.db)",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def open_db(db: str | None) -> Taskloom:
    return connect(db)


def open_existing(db: str | None) -> Taskloom:
    """:func:`open_db` for commands that act on what a database already holds (a task, old
    tasks, a repair): a mistyped ``--db`` is refused instead of leaving a new empty database
    (and its directory) behind."""
    tl = connect(db)
    if not tl.store.exists():  # only an embedded file can be missing
        where = tl.url.removeprefix("sqlite:///")
        raise NotFound(f"no taskloom database at {where} (check --db or $TASKLOOM_URL)")
    return tl


@contextlib.contextmanager
def flag_names(names: dict[str, str]) -> Iterator[None]:
    """Say the library's argument names in an input error as the command's flags: a person
    who typed ``--for ""`` was told about ``'target_agent'``. A name is replaced where it is
    quoted (``'lines'``, ```lines```), or anywhere if it holds an underscore (no word of
    prose does)."""
    try:
        yield
    except InvalidInput as exc:
        message = exc.message
        for name, flag in names.items():
            bare = rf"|\b{re.escape(name)}\b" if "_" in name else ""
            message = re.sub(rf"'{re.escape(name)}'|`{re.escape(name)}`{bare}", flag, message)
        if message == exc.message:
            raise
        raise type(exc)(message) from None


def check_range(value: float, name: str, low: int, high: int) -> None:
    """Refuse an option outside ``low..high`` (``NaN`` included) before it reaches the
    database, whose integers stop at 64 bits."""
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be from {low} to {high}")


def print_json(value: Any) -> None:
    """``value`` as JSON. On a terminal the characters :func:`terminal_safe` shows are
    written as ``\\uNNNN`` escapes, which JSON reads back as the same text (a bidi control
    in a title reordered the terminal's line, a C1 control drove it)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if out.is_terminal:
        text = json_escaped_controls(text)
    write_out(text + "\n")


def print_text(text: str) -> None:
    """Print model/user text as stored: no rich markup or ``:emoji:`` codes are interpreted
    inside it. On a terminal, control characters are shown, not obeyed
    (:func:`terminal_safe`); into a pipe or a file the text goes exactly as stored (an exact
    slice of a stashed result stays exact)."""
    if out.is_terminal:
        with _reader_may_leave():
            out.print(terminal_safe(text), markup=False)
    else:  # rich would expand tabs and drop carriage returns
        write_out(text + "\n")


def write_out(text: str) -> None:
    """Write ``text`` to standard output exactly; with standard output closed (``>&-``),
    nothing. A command prints after its work is saved, so output that cannot be written
    must not turn it into a failure."""
    with _reader_may_leave():
        if sys.stdout is not None:
            sys.stdout.write(text)


def flush_out() -> None:
    """Flush standard output while the CLI can still handle a reader gone away: left to the
    interpreter's exit, the failed flush prints "Exception ignored … BrokenPipeError"."""
    with _reader_may_leave():
        if sys.stdout is not None:
            sys.stdout.flush()


@contextlib.contextmanager
def _reader_may_leave() -> Iterator[None]:
    """When the reader of standard output is gone (``| head -1``), send the rest of the
    output, including what is still buffered, to the null device: quietly, exit status
    unchanged."""
    try:
        yield
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError, AttributeError):  # no real descriptor
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)


MAX_STDIN_BYTES = 64 * 1024 * 1024
"""The most a command reads from stdin (a tool's output, a task list): a stash's quota."""


def read_stdin(what: str) -> str:
    """All of stdin as text, for ``what``: an error, not a traceback, when there is none
    (closed) or it is larger than :data:`MAX_STDIN_BYTES` (``< /dev/zero`` grew without end);
    bytes that are not UTF-8 read as U+FFFD."""
    if sys.stdin is None:
        raise InvalidInput(f"{what}: standard input is closed")
    buffer = getattr(sys.stdin, "buffer", None)  # none on a text stream put in its place
    data = (
        sys.stdin.read(MAX_STDIN_BYTES + 1) if buffer is None else buffer.read(MAX_STDIN_BYTES + 1)
    )
    if len(data) > MAX_STDIN_BYTES:
        raise InvalidInput(f"{what}: standard input holds more than {MAX_STDIN_BYTES:,} bytes")
    text = data if isinstance(data, str) else data.decode("utf-8", "replace")
    return text.removeprefix("\ufeff")
