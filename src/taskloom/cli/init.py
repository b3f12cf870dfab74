"""``taskloom init claude-code|codex``: wire a coding agent to taskloom, idempotently.

Both write into the project (its ``.mcp.json`` and ``.claude/settings.json``; its
``.codex/``), so each project's sessions get their own thread, named after the project's
folder, and the project's database: the one found from the project as every command finds it
(:mod:`taskloom.cli.locate`), written as an absolute URL, else ``<project>/.taskloom/``.
``init codex --global`` writes Codex's user-wide config instead.
"""

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
from taskloom.cli.common import err, note, print_text
from taskloom.cli.locate import project_url
from taskloom.cli.tool import ToolsOption
from taskloom.domain.queue import check_agent
from taskloom.domain.threads import check_thread_id
from taskloom.errors import InvalidInput
from taskloom.store.pg_url import url_has_password

app = typer.Typer(
    help="Set up a coding agent: taskloom's MCP server and its queue hooks.\n\n"
    "Example: taskloom init claude-code --agent claude-1",
    no_args_is_help=True,
)

ThreadOption = Annotated[
    str | None,
    typer.Option(
        "--thread",
        help="Thread the agent's tools act on (default: the project folder's name).",
        show_default=False,
    ),
]
ProjectOption = Annotated[Path, typer.Option(help="Project directory.")]
PrintOption = Annotated[
    bool, typer.Option("--print", help="Print what would be written; change no file.")
]
DbPathOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Database URL the agent should use, written as given (default: the project's:"
        " $TASKLOOM_URL, else the nearest .taskloom/ folder from the project up, else"
        " the project's own .taskloom/, as an absolute URL).",
        show_default=False,
    ),
]


def _project(project: Path) -> Path:
    if not project.is_dir():
        why = "not a directory" if project.exists() else "no such directory"
        raise InvalidInput(f"--project {project}: {why}")
    return project


def _thread(thread: str | None, project: Path) -> str:
    """``--thread``, else the project folder's name: each project its own thread. A name that
    is no thread id is refused as the default it is, with the option that replaces it."""
    if thread is not None:
        return check_thread_id(thread)
    try:
        return check_thread_id(project.resolve().name)
    except InvalidInput as exc:
        raise InvalidInput(
            f"the project folder's name cannot be the thread id (its default): {exc.message};"
            " give one with --thread"
        ) from None


def _database(db: str | None, project: Path) -> str | None:
    """``--db``, else the project's database as an absolute URL; ``None`` when that is a
    ``$TASKLOOM_URL`` holding a password, which must not be written into the files (the
    agent reads it from its own environment then)."""
    if db is not None:
        return db
    url = project_url(project)
    if url_has_password(url):
        note(
            "$TASKLOOM_URL holds a password, so it is not written into the agent's files:"
            " give the agent TASKLOOM_URL in its environment"
        )
        return None
    return url


Merge = Callable[[str, str], tuple[str, bool]]


def _hooks(agent: str, db: str | None) -> Merge:
    """The queue hooks, for an agent given taskloom's MCP server in the same run (so the
    prompt hook names the ``task_next`` tool)."""
    return lambda text, name: agent_setup.merge_hooks_json(text, name, agent, db, mcp=True)


def _setup(*files: tuple[Path, Merge], dry_run: bool, within: Path | None = None) -> None:
    """Merge every file and check every target first, so a bad one (unparsable, a folder, not
    writable, or through a link out of the project ``within``) stops the run before anything
    is written. Files are read as bytes so their line endings reach the merge as they are
    (CRLF stays CRLF)."""
    planned = [(path, *_merged(path, merge)) for path, merge in files]
    if not dry_run:
        for path, _, _, changed in planned:
            if changed:
                _check_writable(path)
                if within is not None:
                    _check_inside(path, within)
    for path, old, new, changed in planned:
        if dry_run:
            print_text(f"# {path}{'' if changed else ' (already set up)'}\n{new.removeprefix(BOM)}")
        elif not changed:
            print_text(f"unchanged {path} (already set up)")
        else:
            _write(path, new, old)
            print_text(f"wrote {path}")
            _say_replaced(path, old, new)


BOM = "\ufeff"


def _say_replaced(path: Path, old: str, new: str) -> None:
    """Name each entry of taskloom's that was there set up otherwise (another thread, agent
    or database) and is replaced: the user may have meant that setup."""
    before, after = (
        agent_setup.taskloom_entries(text.removeprefix(BOM), str(path)) for text in (old, new)
    )
    for what, was in before.items():
        if after.get(what, was) != was:
            note(f"{path}: replaced taskloom's {what} `{was}` with `{after[what]}`")


def _merged(path: Path, merge: Merge) -> tuple[str, str, bool]:
    """The file as read and merged, a byte order mark it starts with (Windows editors write
    one) kept in front and out of the parser's way: JSON and TOML parsers refuse it as a
    stray character at line 1, column 1."""
    text = _read(path)
    bom = BOM if text.startswith(BOM) else ""
    new, changed = merge(text.removeprefix(bom), str(path))
    return text, bom + new, changed


def _read(path: Path) -> str:
    """The file's text, ``""`` if there is none yet; a file that cannot be read (a folder, a
    loop of links, not UTF-8) is an error naming it, not a traceback. A pipe or a device (a
    link to ``/dev/zero``) is refused unread: reading it would never end."""
    try:
        target = path.resolve()  # a loop of links raises here (RuntimeError before 3.13)
        if not os.path.lexists(target):
            return ""
        if not target.is_file() and not target.is_dir():
            raise InvalidInput(f"cannot read {path}: it is not a regular file")
        return target.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{path} is not UTF-8 text (byte {exc.start}); fix or move it first"
        ) from None
    except (OSError, RuntimeError) as exc:
        raise InvalidInput(f"cannot read {path}: {_why(exc)}") from None


def _check_writable(path: Path) -> None:
    """Refuse a target :func:`_write` would fail on: a folder where the file goes, a file
    where a folder must be made, a folder that cannot be written to; and a read-only file,
    which the rename would replace all the same: its owner made it so to keep it as it is
    (the owner's write bit is what counts, for root too, as editors do). A link that
    points nowhere is refused too (see :func:`_dangling_link`)."""
    _dangling_link(path)
    target = path.resolve()
    if os.path.lexists(target) and not target.is_file():
        raise InvalidInput(f"cannot write {path}: it is not a regular file")
    if target.is_file() and (
        not target.stat().st_mode & stat.S_IWUSR or not os.access(target, os.W_OK)
    ):
        raise InvalidInput(
            f"cannot write {path}: it is read-only; make it writable (chmod u+w) to let"
            " taskloom add its entries, or add them by hand (see --print)"
        )
    folder = target.parent
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent  # the first folder that exists: mkdir starts there
    if not folder.is_dir():
        raise InvalidInput(f"cannot write {path}: {folder} is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInput(f"cannot write {path}: the folder {folder} is not writable")


def _check_inside(path: Path, project: Path) -> None:
    """Refuse a project's file that a link (the file's, or a folder's above it) puts outside
    the project: a cloned repository may ship ``.mcp.json`` or ``.claude`` as a link to the
    user's own settings, which every other project's agent then reads."""
    try:
        target, root = path.resolve(), project.resolve()
    except (OSError, RuntimeError) as exc:
        raise InvalidInput(f"cannot write {path}: {_why(exc)}") from None
    if root != target and root not in target.parents:
        raise InvalidInput(
            f"cannot write {path}: a symbolic link puts it at {target}, outside the project"
            f" {root}; check where the link comes from, then replace it with a file or add"
            " the entries by hand (see --print)"
        )


def _dangling_link(path: Path) -> None:
    """Refuse ``path`` when it, or a folder above it, is a symbolic link to nothing: writing
    through it would make the link's target, wherever it points (outside the project, in
    another user's home), and the folders on the way there."""
    for link in (path, *path.parents):
        if os.path.islink(link) and not os.path.exists(link):
            kind = "file" if link == path else "folder"
            raise InvalidInput(
                f"cannot write {path}: {link} is a symbolic link to {os.readlink(link)},"
                f" which does not exist; create that {kind} or remove the link, then run"
                " this again"
            )


def _why(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


def _write(path: Path, text: str, old: str) -> None:
    """Replace the file through a temp file renamed over it, so a crash leaves the old file
    or the new one, never half of one. A symlink is followed (a settings file kept in a
    dotfiles repository is updated there, not replaced by a copy), and the file keeps its
    permission bits, set before the text goes in: a 600 config.toml may hold tokens. A new
    file gets the default ones (the umask). The temp file is made new, under a name no one
    could choose (``mkstemp``): at a fixed name, a link a cloned repository ships there would
    be followed, and the settings written into a file outside the project. What the checks could
    not foresee (a full disk) is still one error line. A file that no longer holds ``old``,
    the text merged, was changed meanwhile (an editor, the agent itself): it is left as it
    is, not overwritten with a merge of what it was. Run as root, the file keeps its owner
    and group, and a new one (and any folder made for it) takes its folder's."""
    try:
        target = path.resolve()
        old_stat = target.stat() if target.exists() else None
        mode = stat.S_IMODE(old_stat.st_mode) if old_stat else _new_file_mode()
        _make_folders(target.parent)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            if _as_root():
                like = old_stat or target.parent.stat()
                os.fchown(fd, like.st_uid, like.st_gid)
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as out:
                out.write(text.encode("utf-8"))
            if _read(path) != old:
                raise InvalidInput(
                    f"{path} changed while taskloom was merging it: nothing was written to"
                    " it; run this again"
                )
            os.replace(name, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name)
            raise
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {_why(exc)}") from None


def _make_folders(folder: Path) -> None:
    """Make ``folder`` and the folders above it that are missing; run as root, each is given
    the owner and group of the folder it is made in, as a new file is."""
    if folder.is_dir():
        return
    _make_folders(folder.parent)
    folder.mkdir(exist_ok=True)
    if _as_root():
        like = folder.parent.stat()
        os.chown(folder, like.st_uid, like.st_gid, follow_symlinks=False)


def _as_root() -> bool:
    """Whether taskloom runs as root (``sudo taskloom init`` in a user's project): a file it
    leaves owned by root is one the user can no longer edit, so it gives each file it writes
    the owner it has or would have. Other users cannot give files away."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _new_file_mode() -> int:
    """What a new file gets by the umask (``mkstemp`` makes its file 600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def claude_code(
    thread: ThreadOption = None,
    agent: Annotated[str, typer.Option(help="Agent id for claims and hooks.")] = "claude-code",
    project: ProjectOption = Path("."),
    print_only: PrintOption = False,
    db: DbPathOption = None,
    tools: ToolsOption = None,
) -> None:
    """Add taskloom to .mcp.json and its hooks to .claude/settings.json in a project.

    The agent works on the thread named after the project's folder, on the project's
    database, unless --thread and --db say otherwise. Existing settings are kept; running it
    again changes nothing.

    Example: taskloom init claude-code --agent claude-1
    """
    agent = check_agent(agent, "--agent")
    _project(project)
    db = _database(db, project)
    argv = agent_setup.mcp_command(_thread(thread, project), agent, db, tools)
    _setup(
        (project / ".mcp.json", lambda text, name: agent_setup.merge_mcp_json(text, name, argv)),
        (project / ".claude" / "settings.json", _hooks(agent, db)),
        dry_run=print_only,
        within=project,
    )


def codex(
    thread: ThreadOption = None,
    agent: Annotated[str, typer.Option(help="Agent id for claims and hooks.")] = "codex",
    project: ProjectOption = Path("."),
    user_wide: Annotated[
        bool,
        typer.Option(
            "--global",
            help="Write Codex's user-wide config, which every Codex session on this machine"
            " reads, instead of the project's .codex/.",
        ),
    ] = False,
    codex_home: Annotated[
        Path | None,
        typer.Option(
            help="Codex's user-wide config directory (default: $CODEX_HOME or ~/.codex);"
            " giving it means --global.",
            show_default=False,
        ),
    ] = None,
    print_only: PrintOption = False,
    db: DbPathOption = None,
    tools: ToolsOption = None,
) -> None:
    """Add taskloom to the project's .codex/config.toml and its hooks to .codex/hooks.json.

    The agent works on the thread named after the project's folder, on the project's
    database, unless --thread and --db say otherwise; --global writes Codex's user-wide
    config instead. Keys you added to an existing mcp_servers.taskloom table stay; its
    command and args follow this run's options, as the hooks do. Running it again changes
    nothing.

    Example: taskloom init codex --agent codex-1
    """
    user_home = codex_home or Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    user_wide = user_wide or codex_home is not None
    agent = check_agent(agent, "--agent")
    _project(project)
    home = user_home if user_wide else project / ".codex"
    db = _database(db, project)
    argv = agent_setup.mcp_command(_thread(thread, project), agent, db, tools)
    _setup(
        (home / "config.toml", lambda text, name: agent_setup.merge_codex_toml(text, name, argv)),
        (home / "hooks.json", _hooks(agent, db)),
        dry_run=print_only,
        within=None if user_wide else project,
    )
    _warn_if_hooks_off(home / "config.toml")
    if not user_wide:  # Codex's user-wide config may turn them off for every project
        with contextlib.suppress(InvalidInput):
            _warn_if_hooks_off(user_home / "config.toml")
    if not print_only:
        trust = "" if user_wide else "reads a project's .codex/ once you trust the project, and "
        print_text(
            f"Codex {trust}asks you to review and trust new hooks (/hooks) before it runs them."
        )


def _warn_if_hooks_off(config: Path) -> None:
    off = agent_setup.codex_hooks_off(_read(config).removeprefix(BOM))
    if off is not None:
        err.print(
            f"Warning: {config} turns Codex's hooks off ([features] {off} = false): the queue"
            " hooks will not run until you set it to true",
            markup=False,
        )


app.command("claude-code")(claude_code)
app.command("codex")(codex)
