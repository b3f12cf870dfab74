"""Options and output helpers shared by every CLI command (defined once, used everywhere)."""

from __future__ import annotations

import codecs
import contextlib
import functools
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO, cast

import typer

from taskloom.cli.locate import FOLDER, Located, locate
from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput, InvariantViolation, NotFound, TaskloomError
from taskloom.domain.queue import check_agent
from taskloom.domain.text import UNSHOWN, terminal_safe
from taskloom.store import open_store

if TYPE_CHECKING:
    from rich.console import Console


class LazyConsole:
    """A rich console for standard output or standard error, made on first use: rich is a
    fifth of a hook's start, and a command whose output goes into a pipe (a hook, ``--json``)
    never needs it. :attr:`is_terminal` answers as rich does, without rich when the stream is
    no terminal and no ``TTY_COMPATIBLE`` or ``FORCE_COLOR`` says otherwise."""

    def __init__(self, *, stderr: bool = False) -> None:
        self.stderr = stderr
        self._force_terminal: bool | None = None  # rich's own override, kept in step

    @functools.cached_property
    def console(self) -> Console:
        from rich.console import Console

        return Console(stderr=self.stderr, highlight=False, soft_wrap=True, emoji=False)

    @property
    def is_terminal(self) -> bool:
        if self._force_terminal is None and not {"TTY_COMPATIBLE", "FORCE_COLOR"} & set(os.environ):
            stream = sys.stderr if self.stderr else sys.stdout
            try:
                if not stream.isatty():
                    return False
            except (AttributeError, ValueError):  # no stream, or a closed one
                return False
        return self._rich().is_terminal

    def print(self, *objects: Any, markup: bool | None = None) -> None:
        self._rich().print(*objects, markup=markup)

    def _rich(self) -> Console:
        self.console._force_terminal = self._force_terminal
        return self.console


out = LazyConsole()
err = LazyConsole(stderr=True)
# Help texts are rich markup: no square brackets in them, or rich takes them for tags and
# drops them (with the default they held).
DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Database URL: sqlite:///path.db or postgresql://… (default: $TASKLOOM_URL,"
        " else the nearest .taskloom/ folder here or above, else ./.taskloom/ is made)",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def agent_flag(param: typer.CallbackParam, value: str | None) -> str | None:
    """``--agent``'s value trimmed, as the queue keeps agent ids; blank is refused naming the
    flag, before the command opens the database."""
    if value is None:
        return None
    return check_agent(value, "--agent" if param.required else "--agent, when given,")


Agent = Annotated[str, typer.Option("--agent", help="Agent id.", callback=agent_flag)]
MAX_LIMIT = 2**31 - 1  # a 32-bit whole number, as priorities are


def opened_store(
    url: str | None, *, long_lived: bool = False, migrate_wait_s: float | None = None
) -> Taskloom:
    """The one place a command opens its store. A command that makes a call or two and
    exits (a hook, ``tasks add``, ``board list``…) has, on PostgreSQL, one plain connection,
    not a pool (``one_shot``); a ``long_lived`` one (``serve``, ``mcp``, ``tasks work``)
    a pool. ``migrate_wait_s``: see :attr:`~taskloom.store.base.Store.migrate_wait_s`."""
    return Taskloom(open_store(url, one_shot=not long_lived, migrate_wait_s=migrate_wait_s))


def open_db(db: str | None, *, migrate_wait_s: float | None = None) -> Taskloom:
    """The database of a command that writes: ``--db``, ``$TASKLOOM_URL``, the nearest
    ``.taskloom/`` (see :mod:`taskloom.cli.locate`), else ``./.taskloom/``, made by the first
    write. ``migrate_wait_s``: see :func:`opened_store`."""
    return opened_store(locate(db).url, migrate_wait_s=migrate_wait_s)


def open_listing(db: str | None) -> Taskloom:
    """:func:`open_db` for a command that lists: with no database, the empty listing is
    printed, and a line on stderr says there is none and where it was looked for (an empty
    board read in the wrong folder looked like an empty board)."""
    tl, where = _opened(db)
    if not tl.store.exists():
        note(where.missing(_file(tl)))
    return tl


def open_existing(db: str | None) -> Taskloom:
    """:func:`open_db` for commands that act on what a database already holds (one item, old
    tasks, a repair): no database is an error naming where it was looked for, and a mistyped
    ``--db`` is refused instead of leaving a new empty database (and its directory) behind."""
    tl, where = _opened(db)
    if not tl.store.exists():  # only an embedded file can be missing
        raise NotFound(where.missing(_file(tl)))
    return tl


def open_announced(db: str | None) -> Taskloom:
    """:func:`open_db` for a long-running command (``serve``, ``mcp``, ``tasks work``): a
    database that cannot answer (no such database…), or whose every write would fail, stops
    it here, once, with its error; else it says on stderr which database it opened and how
    it was chosen (a password in the URL masked)."""
    tl, where = _opened(db, long_lived=True)
    tl.queue.stats()
    tl.store.check_writable()
    how = {
        "--db": "from --db",
        "$TASKLOOM_URL": "from $TASKLOOM_URL",
        "found": f"the nearest {FOLDER}/ folder",
        "none": f"no {FOLDER}/ folder in {where.searched}: made here",
    }[where.how]
    if not tl.store.exists():
        how += " by the first write" if where.how == "none" else "; new, made by the first write"
    note(f"database: {absolute_url(tl)} ({how})", prefix="")
    return tl


def absolute_url(tl: Taskloom) -> str:
    """The URL of the database ``tl`` opened, a SQLite file's path made absolute: it names
    the same database from any folder."""
    url = tl.url
    return f"sqlite:///{os.path.abspath(_file(tl))}" if url.startswith("sqlite:///") else url


def _opened(db: str | None, *, long_lived: bool = False) -> tuple[Taskloom, Located]:
    where = locate(db)
    return opened_store(where.url, long_lived=long_lived), where


def _file(tl: Taskloom) -> str:
    """The file a SQLite database is in (the URL, for another)."""
    return tl.url.removeprefix("sqlite:///")


def note(text: str, *, prefix: str = "note: ") -> None:
    """One line on stderr beside a command's output; its controls shown, not obeyed, on a
    terminal (a path may hold them)."""
    line = prefix + text
    err.print(terminal_safe(line) if err.is_terminal else line, markup=False)


@contextlib.contextmanager
def flag_names(names: dict[str, str]) -> Iterator[None]:
    """Say the library's argument names in an input error (or a refusal that names the
    argument that overrides it) as the command's flags: a person who types ``--for ""`` is
    told about ``--for``, not ``'target_agent'``. A name is replaced where it is quoted
    (``'lines'``, ```lines```), or anywhere if it holds an underscore (no word of prose does)."""
    try:
        yield
    except (InvalidInput, InvariantViolation) as exc:
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


def json_text(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON for standard output: non-ASCII characters as ``\\uNNNN`` escapes
    when stdout is not UTF-8, where they would come out as ``\\U0001f389`` (invalid JSON)."""
    return json.dumps(value, indent=indent, ensure_ascii=not _stdout_is_utf8(), default=str)


def _stdout_is_utf8() -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def json_escaped_controls(text: str) -> str:
    """JSON text with the characters :func:`terminal_safe` shows written as ``\\uNNNN``
    escapes (a surrogate pair past U+FFFF): valid JSON still, meaning the same strings (they
    only occur inside strings)."""
    return UNSHOWN.sub(_json_escaped, text)


def _json_escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def print_json(value: Any, *, must_arrive: bool = False, indent: int | None = 2) -> None:
    """``value`` as JSON (``indent=None``: on one line). On a terminal the characters
    :func:`terminal_safe` shows are written as ``\\uNNNN`` escapes, which JSON reads back as
    the same text (a bidi control in a title would reorder the terminal's line, a C1 control
    drive it). ``must_arrive``: see :func:`write_out`."""
    text = json_text(value, indent=indent)
    if out.is_terminal:
        text = json_escaped_controls(text)
    write_out(text + "\n", must_arrive=must_arrive)


def print_text(text: str, *, must_arrive: bool = False) -> None:
    """Print model/user text as stored: no rich markup or ``:emoji:`` codes are interpreted
    inside it. On a terminal, control characters are shown, not obeyed
    (:func:`terminal_safe`); into a pipe or a file the text goes exactly as stored (an exact
    slice of a stashed result stays exact). ``must_arrive``: see :func:`write_out`."""
    if out.is_terminal:
        with _reader_may_leave(must_arrive):
            out.print(terminal_safe(text), markup=False)
    else:  # rich would expand tabs and drop carriage returns
        write_out(text + "\n", must_arrive=must_arrive)


def print_error(problem: TaskloomError | str) -> None:
    """``Error: …`` on standard error, one line; on a terminal its controls shown, not obeyed
    (an id, a title or a stored error from the database may be in it)."""
    message = problem if isinstance(problem, str) else problem.message
    err.print(f"Error: {terminal_safe(message) if err.is_terminal else message}", markup=False)


def write_out(text: str, *, must_arrive: bool = False) -> None:
    """Write ``text`` to standard output exactly; with standard output closed (``>&-``) or
    its reader gone, nothing. A command prints after its work is saved, so output nobody
    reads must not turn it into a failure; output that cannot be written (a full disk) is
    ``Error: cannot write the output: …``.

    ``must_arrive``: the output is the work (a claimed task's token, a hook's block), so it
    is flushed now and a closed or unread stdout is that error too, for the caller to undo
    what it handed out."""
    if sys.stdout is None:
        if must_arrive:
            raise TaskloomError("cannot write the output: standard output is closed")
        return
    with _reader_may_leave(must_arrive):
        sys.stdout.write(text)
        if must_arrive:
            sys.stdout.flush()


def flush_out() -> None:
    """Flush standard output while the CLI can still handle a reader gone away or a full
    disk: left to the interpreter's exit, the failed flush prints "Exception ignored …"."""
    with _reader_may_leave():
        if sys.stdout is not None:
            sys.stdout.flush()


@contextlib.contextmanager
def _reader_may_leave(must_arrive: bool = False) -> Iterator[None]:
    """When the reader of standard output is gone (``| head -1``), send the rest of the
    output, including what is still buffered, to the null device: quietly, exit status
    unchanged (unless it ``must_arrive``). Any other failure to write is an error."""
    try:
        yield
    except BrokenPipeError:
        _reader_gone()
    except OSError as exc:
        raise _cannot_write(exc) from None
    if must_arrive and READER.gone:  # (the guard below dropped it without a word)
        raise TaskloomError("cannot write the output: its reader has gone")


class _Reader:
    gone = False
    """Whether the reader of standard output has left: what is written is dropped since."""


READER = _Reader()


def _reader_gone() -> None:
    READER.gone = True
    _discard_output()


def _cannot_write(exc: OSError) -> TaskloomError:
    """The one-line error for output that failed; what is still buffered goes to the null
    device, so the interpreter's last flush does not fail again with a traceback."""
    _discard_output()
    return TaskloomError(f"cannot write the output: {exc.strerror or exc}")


def _discard_output() -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):  # no real descriptor
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


class _GuardedStdout:
    """Standard output whose failed writes are :func:`_cannot_write` errors, whoever writes
    (rich's help printer too), never a traceback; a reader gone (``taskloom --help | head
    -1``) drops the rest of the output quietly, the exit status unchanged (0). Left to click,
    a gone reader was exit 1; left to Python, "Exception ignored … BrokenPipeError"."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        with _write_errors():
            return self._stream.write(text)
        return len(text)  # dropped: its reader is gone

    def flush(self) -> None:
        with _write_errors():
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def _write_errors() -> Iterator[None]:
    try:
        yield
    except BrokenPipeError:
        _reader_gone()
    except OSError as exc:
        raise _cannot_write(exc) from None


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """Run the CLI with :class:`_GuardedStdout` in place of ``sys.stdout``, put back after."""
    READER.gone = False  # (a command line run in-process after one whose reader left)
    stream = sys.stdout
    if stream is None:
        yield
        return
    guard = cast(TextIO, _GuardedStdout(stream))
    sys.stdout = guard
    try:
        yield
    finally:
        if sys.stdout is guard:  # click puts its own wrapper in place when the reader left
            sys.stdout = stream


MAX_STDIN_BYTES = 64 * 1024 * 1024
"""The most a command reads from stdin (a tool's output, a task list): a stash's quota."""


def read_stdin(what: str, *, strict: bool = False) -> str:
    """All of stdin as text, for ``what``: an error, not a traceback, when there is none
    (closed) or it is larger than :data:`MAX_STDIN_BYTES` (``< /dev/zero`` never ends);
    bytes that are not UTF-8 read as U+FFFD or, ``strict``, are an error naming their line
    (:func:`utf8_text`)."""
    if sys.stdin is None:
        raise InvalidInput(f"{what}: standard input is closed")
    buffer = getattr(sys.stdin, "buffer", None)  # none on a text stream put in its place
    data: str | bytes = (
        sys.stdin.read(MAX_STDIN_BYTES + 1) if buffer is None else buffer.read(MAX_STDIN_BYTES + 1)
    )
    if len(data) > MAX_STDIN_BYTES:
        raise InvalidInput(f"{what}: standard input holds more than {MAX_STDIN_BYTES:,} bytes")
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    if strict:
        return utf8_text(data, "standard input")
    return data.decode("utf-8", "replace").removeprefix("\ufeff")


LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""A line break of a text file: LF, CRLF or CR. Not the other characters ``str.splitlines``
splits at (U+2028, U+0085…), which a JSON string holds unescaped."""


def utf8_text(data: bytes, where: str) -> str:
    """``data`` as UTF-8 text, a byte order mark dropped; bytes that are not UTF-8 are an
    error naming ``where`` and the line and column of the first (never replaced in
    silence: a title would change)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        at = exc.start + (3 if data.startswith(codecs.BOM_UTF8) else 0)
        before = data[:at].decode("utf-8-sig")
        lines = LINE_BREAK.split(before)
        raise InvalidInput(
            f"{where}: line {len(lines):,}, column {len(lines[-1]) + 1:,}: byte 0x{data[at]:02x}"
            " is not UTF-8 text (save the file as UTF-8)"
        ) from None


def read_file(path: str) -> str:
    """A UTF-8 file's text (:func:`utf8_text`), at most :data:`MAX_STDIN_BYTES` of
    it, as for stdin: a file without end (``/dev/zero``) is an error, not a ``MemoryError``.
    An empty name is refused as such (``Path("")`` is the current directory)."""
    if not path:
        raise InvalidInput("cannot read a file with an empty name")
    try:
        with Path(path).open("rb") as file:
            data = file.read(MAX_STDIN_BYTES + 1)
    except OSError as exc:
        # the reason alone: ``str(exc)`` repeats the path in Python's words
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_STDIN_BYTES:
        raise InvalidInput(f"cannot read {path}: it holds more than {MAX_STDIN_BYTES:,} bytes")
    return utf8_text(data, path)
