"""``taskloom init claude-code|codex``: wire a coding agent to taskloom, idempotently."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from taskloom.cli import agent_setup
from taskloom.cli.common import err, print_text
from taskloom.cli.tool import ToolsOption
from taskloom.domain.queue import check_agent
from taskloom.domain.threads import check_thread_id
from taskloom.errors import InvalidInput

app = typer.Typer(
    help="Set up a coding agent: taskloom's MCP server and its queue hooks.",
    no_args_is_help=True,
)

ThreadOption = Annotated[str, typer.Option("--thread", help="Thread the agent's tools act on.")]
PrintOption = Annotated[
    bool, typer.Option("--print", help="Print what would be written; change no file.")
]
DbPathOption = Annotated[
    str | None,
    typer.Option("--db", help="Database URL the agent should use (default: its own default)."),
]


Merge = Callable[[str, str], tuple[str, bool]]


def _hooks(agent: str, db: str | None) -> Merge:
    return lambda text, name: agent_setup.merge_hooks_json(text, name, agent, db)


def _setup(*files: tuple[Path, Merge], dry_run: bool) -> None:
    """Merge every file and check every target first, so a bad one (unparsable, a folder, not
    writable) stops the run before anything is written. Files are read as bytes so their line
    endings reach the merge as they are (CRLF stays CRLF)."""
    planned = [(path, *merge(_read(path), str(path))) for path, merge in files]
    if not dry_run:
        for path, _, changed in planned:
            if changed:
                _check_writable(path)
    for path, new, changed in planned:
        if dry_run:
            print_text(f"# {path}{'' if changed else ' (already set up)'}\n{new}")
        elif not changed:
            print_text(f"unchanged {path} (already set up)")
        else:
            _write(path, new)
            print_text(f"wrote {path}")


def _read(path: Path) -> str:
    """The file's text, ``""`` if there is none yet; a file that cannot be read (a folder, a
    loop of links, not UTF-8) is an error naming it, not a traceback."""
    try:
        target = path.resolve()  # a loop of links raises here (RuntimeError before 3.13)
        return target.read_bytes().decode("utf-8") if os.path.lexists(target) else ""
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{path} is not UTF-8 text (byte {exc.start}); fix or move it first"
        ) from None
    except (OSError, RuntimeError) as exc:
        raise InvalidInput(f"cannot read {path}: {_why(exc)}") from None


def _check_writable(path: Path) -> None:
    """Refuse a target :func:`_write` would fail on: a folder where the file goes, a file
    where a folder must be made, a folder that cannot be written to."""
    target = path.resolve()
    if os.path.lexists(target) and not target.is_file():
        raise InvalidInput(f"cannot write {path}: it is not a regular file")
    folder = target.parent
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent  # the first folder that exists: mkdir starts there
    if not folder.is_dir():
        raise InvalidInput(f"cannot write {path}: {folder} is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInput(f"cannot write {path}: the folder {folder} is not writable")


def _why(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


def _write(path: Path, text: str) -> None:
    """Replace the file through a temp file renamed over it, so a crash leaves the old file
    or the new one, never half of one. A symlink is followed (a settings file kept in a
    dotfiles repository is updated there, not replaced by a copy), and the file keeps its
    permission bits, set before the text goes in: a 600 config.toml may hold tokens. A new
    file gets the default ones (the umask). The temp file is made new, under a name no one
    could choose (``mkstemp``): at a fixed name, a link a cloned repository shipped there was
    followed, and the settings went into a file outside the project. What the checks could
    not foresee (a full disk) is still one error line."""
    try:
        target = path.resolve()
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else _new_file_mode()
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as out:
                out.write(text.encode("utf-8"))
            os.replace(name, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name)
            raise
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {_why(exc)}") from None


def _new_file_mode() -> int:
    """What a new file gets by the umask (``mkstemp`` makes its file 600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def claude_code(
    thread: ThreadOption,
    agent: Annotated[str, typer.Option(help="Agent id for claims and hooks.")] = "claude-code",
    project: Annotated[Path, typer.Option(help="Project directory.")] = Path("."),
    print_only: PrintOption = False,
    db: DbPathOption = None,
    tools: ToolsOption = None,
) -> None:
    """Add taskloom to .mcp.json and its hooks to .claude/settings.json in a project.

    Existing settings are kept; running it again changes nothing.

    Example: taskloom init claude-code --thread my-project --agent claude-1 --tools claude-code
    """
    agent = check_agent(agent, "--agent")
    argv = agent_setup.mcp_command(check_thread_id(thread), agent, db, tools)
    if not project.is_dir():
        raise InvalidInput(f"--project {project}: no such directory")
    _setup(
        (project / ".mcp.json", lambda text, name: agent_setup.merge_mcp_json(text, name, argv)),
        (project / ".claude" / "settings.json", _hooks(agent, db)),
        dry_run=print_only,
    )


def codex(
    thread: ThreadOption,
    agent: Annotated[str, typer.Option(help="Agent id for claims and hooks.")] = "codex",
    codex_home: Annotated[
        Path | None,
        typer.Option(help="Codex's config directory (default: $CODEX_HOME or ~/.codex)."),
    ] = None,
    print_only: PrintOption = False,
    db: DbPathOption = None,
    tools: ToolsOption = None,
) -> None:
    """Add taskloom to Codex's config.toml and its hooks to hooks.json.

    Keys you added to an existing mcp_servers.taskloom table stay; its command and args
    follow this run's options, as the hooks do. Running it again changes nothing.

    Example: taskloom init codex --thread my-project --agent codex-1
    """
    home = codex_home or Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    agent = check_agent(agent, "--agent")
    argv = agent_setup.mcp_command(check_thread_id(thread), agent, db, tools)
    _setup(
        (home / "config.toml", lambda text, name: agent_setup.merge_codex_toml(text, name, argv)),
        (home / "hooks.json", _hooks(agent, db)),
        dry_run=print_only,
    )
    config = home / "config.toml"
    off = agent_setup.codex_hooks_off(_read(config))
    if off is not None:
        err.print(
            f"Warning: {config} turns Codex's hooks off ([features] {off} = false): the queue"
            " hooks will not run until you set it to true",
            markup=False,
        )
    if not print_only:
        print_text("Codex asks you to review and trust new hooks (/hooks) before it runs them.")


app.command("claude-code")(claude_code)
app.command("codex")(codex)
