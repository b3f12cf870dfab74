"""Which database a command uses, found as a version-control tool finds its repository.

``--db``, else ``$TASKLOOM_URL``, else the nearest ``.taskloom/`` folder in the working folder
or one above it: the search stops at the filesystem's root or at a mount boundary (a parent
on another device). With none found, a command that writes makes ``./.taskloom/``; one that
reads says where it looked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from taskloom.domain.errors import InvalidInput

FOLDER = ".taskloom"
FILE = "taskloom.db"


@dataclass(frozen=True)
class Located:
    """Where a command's database is, and how it was chosen.

    ``how``: ``"--db"``, ``"$TASKLOOM_URL"``, ``"found"`` (the nearest ``.taskloom/``) or
    ``"none"`` (no folder found: ``url`` is the default, ``./.taskloom/taskloom.db``).
    ``start`` and ``stop``: the first and last folder the search looked in; ``boundary``:
    it stopped below a mount boundary rather than at the root."""

    url: str | None
    how: str
    start: Path
    stop: Path
    boundary: bool = False

    @property
    def searched(self) -> str:
        """Where the search looked, in words: ``/a/b and the folders above it, up to /``."""
        if self.start == self.stop:
            above = " (a mount boundary above it)" if self.boundary else ""
            return f"{self.start}{above}"
        end = f"{self.stop}, a mount boundary" if self.boundary else str(self.stop)
        return f"{self.start} and the folders above it, up to {end}"

    def missing(self, path: str) -> str:
        """Why there is no database, naming where it was looked for (``path``: the file the
        URL names, for a SQLite URL)."""
        if self.how == "none":
            return (
                f"no taskloom database: no {FOLDER}/ folder in {self.searched}"
                " (give --db or set $TASKLOOM_URL)"
            )
        if self.how == "found":
            return f"no taskloom database at {path} (the nearest {FOLDER}/ folder holds none)"
        return f"no taskloom database at {path} (check --db or $TASKLOOM_URL)"


def locate(db: str | None, cwd: Path | None = None) -> Located:
    """The database ``--db`` (``db``) names, else ``$TASKLOOM_URL``'s (empty counts as unset),
    else the nearest ``.taskloom/`` at or above ``cwd`` (default: the working folder). A
    working folder deleted under the process (a removed worktree) needs no search with a
    URL given; without one, it is an error that says so."""
    try:
        here = Path.cwd() if cwd is None else Path(os.path.abspath(cwd))
    except FileNotFoundError:
        here = None
    shown = here or Path(".")
    if db is not None:
        return Located(db, "--db", shown, shown)
    env = os.environ.get("TASKLOOM_URL", "").strip()
    if env:
        return Located(env, "$TASKLOOM_URL", shown, shown)
    if here is None:
        raise InvalidInput(
            "the working folder no longer exists, so no .taskloom/ folder can be found"
            " from it: give --db or set $TASKLOOM_URL"
        )
    folder, boundary = here, False
    while True:
        if (folder / FOLDER).is_dir():
            return Located(f"sqlite:///{folder / FOLDER / FILE}", "found", here, folder)
        parent = folder.parent
        if parent == folder:
            break
        if _device(parent) != _device(folder):
            boundary = True
            break
        folder = parent
    return Located(None, "none", here, folder, boundary)


def project_url(project: Path) -> str:
    """The database URL a project's agents should be given, absolute: its found one, else
    ``<project>/.taskloom/taskloom.db`` (made by the first write)."""
    found = locate(None, project)
    if found.url is not None:
        return _absolute(found.url)
    return f"sqlite:///{Path(os.path.abspath(project)) / FOLDER / FILE}"


def _absolute(url: str) -> str:
    """A SQLite URL or bare file path with its path made absolute (from the working folder);
    any other URL as it is."""
    scheme, colon, rest = url.partition(":")
    if colon and scheme.lower() == "sqlite" and rest.startswith("///"):
        path = rest.removeprefix("///")
        return f"sqlite:///{os.path.abspath(os.path.expanduser(path))}" if path else url
    if "://" in url or (colon and scheme.lower() in ("postgresql", "postgres")):
        return url
    return f"sqlite:///{os.path.abspath(os.path.expanduser(url))}"


def _device(folder: Path) -> int | None:
    try:
        return folder.stat().st_dev
    except OSError:  # a folder we may not look into ends the search as a boundary does
        return None
