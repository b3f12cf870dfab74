"""Finding the database as git finds ``.git``: ``--db``, ``$TASKLOOM_URL``, else the nearest
``.taskloom/`` here or above; a read that finds none says so, and where it looked."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import taskloom
from tests.conftest import subprocess_env


def run_in(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskloom", *args],
        capture_output=True,
        text=True,
        env={**subprocess_env(), **env},
        cwd=cwd,
        timeout=60,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose database is in its root, with a folder two levels down."""
    root = tmp_path / "project"
    (root / "src" / "deep").mkdir(parents=True)
    added = run_in(root, "board", "add", "plan", "Write the test")
    assert added.returncode == 0, added.stderr
    assert (root / ".taskloom" / "taskloom.db").exists()
    return root


def test_a_subfolder_finds_the_projects_database(project: Path) -> None:
    deep = project / "src" / "deep"
    shown = run_in(deep, "board", "list", "plan")
    assert shown.returncode == 0 and "Write the test" in shown.stdout and shown.stderr == ""
    added = run_in(deep, "tasks", "add", "Review it", "--json")  # a write goes there too
    assert added.returncode == 0, added.stderr
    assert not (deep / ".taskloom").exists() and not (project / "src" / ".taskloom").exists()
    with taskloom.connect(f"sqlite:///{project / '.taskloom' / 'taskloom.db'}") as tl:
        assert [t.title for t in tl.queue.list()] == ["Review it"]
    task = json.loads(added.stdout)["id"]
    assert run_in(deep, "tasks", "show", task).returncode == 0


def test_the_environment_and_db_come_before_the_folder(project: Path, tmp_path: Path) -> None:
    other = f"sqlite:///{tmp_path / 'other.db'}"
    assert run_in(tmp_path, "board", "add", "plan", "Elsewhere", "--db", other).returncode == 0
    via_env = run_in(project, "board", "list", "plan", TASKLOOM_URL=other)
    assert "Elsewhere" in via_env.stdout and "Write the test" not in via_env.stdout
    third = f"sqlite:///{tmp_path / 'third.db'}"
    via_flag = run_in(project, "board", "list", "plan", "--db", other, TASKLOOM_URL=third)
    assert "Elsewhere" in via_flag.stdout and not (tmp_path / "third.db").exists()


LISTINGS = [
    ("board", "list", "plan"),
    ("board", "ready", "plan"),
    ("tasks", "list"),
    ("tasks", "stats"),
    ("stash", "list", "plan"),
    ("stash", "log", "plan"),
]
ONE_ITEM = [
    ("goal", "show", "plan"),
    ("tasks", "show", "0193"),
    ("stash", "show", "plan", "res_1a2b3c4d5e6f7a8b"),
    ("stash", "read", "plan", "res_1a2b3c4d5e6f7a8b"),
    ("board", "status", "plan", "c1", "done"),
]


@pytest.mark.parametrize("args", [*LISTINGS, ("tasks", "next", "--agent", "a1")], ids=" ".join)
def test_a_listing_without_a_database_says_so_on_stderr(tmp_path: Path, args: tuple[str]) -> None:
    """An empty board read in the wrong folder looked like an empty board. ``tasks next``
    answers as on an empty queue (exit 3), and says so too."""
    done = run_in(tmp_path, *args)
    assert done.returncode == (3 if "next" in args else 0), done.stderr
    assert done.stdout  # the empty state, as before
    assert done.stderr == (
        f"note: no taskloom database: no .taskloom/ folder in {tmp_path} and the folders"
        " above it, up to / (give --db or set $TASKLOOM_URL)\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", ONE_ITEM, ids=" ".join)
def test_a_read_of_one_item_without_a_database_fails(tmp_path: Path, args: tuple[str]) -> None:
    done = run_in(tmp_path, *args)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("Error: no taskloom database: no .taskloom/ folder in ")
    assert f" in {tmp_path} and the folders above it" in done.stderr
    assert done.stderr.count("\n") == 1 and list(tmp_path.iterdir()) == []


def test_a_write_without_a_database_makes_one_here(tmp_path: Path) -> None:
    done = run_in(tmp_path, "goal", "set", "plan", "Ship it")
    assert done.returncode == 0 and done.stderr == ""
    assert (tmp_path / ".taskloom" / "taskloom.db").exists()
    assert run_in(tmp_path, "goal", "show", "plan").returncode == 0


def test_an_empty_taskloom_folder_is_found_and_said_to_hold_none(tmp_path: Path) -> None:
    (tmp_path / ".taskloom").mkdir()
    (tmp_path / "sub").mkdir()
    done = run_in(tmp_path / "sub", "goal", "show", "plan")
    where = tmp_path / ".taskloom" / "taskloom.db"
    assert done.returncode == 1
    assert done.stderr == (
        f"Error: no taskloom database at {where} (the nearest .taskloom/ folder holds none)\n"
    )
    assert run_in(tmp_path / "sub", "board", "add", "plan", "x").returncode == 0
    assert where.exists() and not (tmp_path / "sub" / ".taskloom").exists()


@pytest.fixture
def other_device() -> Iterator[Path]:
    """A folder on a filesystem mounted below /: the search must stop at its mount point."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == shm.parent.stat().st_dev:
        pytest.skip("no /dev/shm mounted apart from its parent here")
    with tempfile.TemporaryDirectory(dir=shm) as folder:
        yield Path(folder)


def test_the_search_stops_at_a_mount_boundary(other_device: Path) -> None:
    (other_device / "a").mkdir()
    done = run_in(other_device / "a", "board", "list", "plan")
    assert done.returncode == 0
    assert (
        f"in {other_device / 'a'} and the folders above it, up to /dev/shm, a mount boundary"
        in (done.stderr)
    )


def long_running_says(argv: list[str], cwd: Path, **env: str) -> str:
    """The first line ``argv`` writes to stderr (it is stopped then)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskloom", *argv],
        cwd=cwd,
        env={**subprocess_env(), **env},
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        return proc.stderr.readline() if ready else "(nothing within 60 s)"
    finally:
        proc.kill()
        proc.wait(30)


def free_port() -> str:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as probe:
        return str(probe.getsockname()[1])


@pytest.mark.parametrize("command", ["serve", "mcp", "tasks work"])
def test_long_running_commands_name_their_database(command: str, project: Path) -> None:
    argv = {
        "serve": ["serve", "--port", free_port()],
        "mcp": ["mcp", "--thread", "plan"],
        "tasks work": ["tasks", "work", "--agent", "w1", "--", "true"],
    }[command]
    said = long_running_says(argv, project / "src")
    where = project / ".taskloom" / "taskloom.db"
    assert said == f"database: sqlite:///{where} (the nearest .taskloom/ folder)\n"


def test_a_long_running_command_in_a_fresh_folder_says_where_it_makes_one(tmp_path: Path) -> None:
    said = long_running_says(["serve", "--port", free_port()], tmp_path)
    assert said == (
        f"database: sqlite:///{tmp_path / '.taskloom' / 'taskloom.db'} (no .taskloom/ folder in"
        f" {tmp_path} and the folders above it, up to /: made here by the first write)\n"
    )


def test_the_database_named_masks_its_password(db_url: str, tmp_path: Path) -> None:
    """Both backends; a PostgreSQL URL's password is never printed."""
    with taskloom.connect(db_url) as tl:
        tl.board("plan").add("Exists")
    url, secret = db_url, None
    if url.startswith("postgresql"):
        parts = urlsplit(url)
        secret = parts.password or "hunter2pw"
        if parts.password is None:  # a server that trusts the socket ignores it
            url = url.replace(f"{parts.username}@", f"{parts.username}:{secret}@", 1)
    said = long_running_says(
        ["tasks", "work", "--agent", "w1", "--", "true"], tmp_path, TASKLOOM_URL=url
    )
    assert said.startswith("database: ") and said.endswith(" (from $TASKLOOM_URL)\n"), said
    if secret is None:
        assert said == f"database: {db_url} (from $TASKLOOM_URL)\n"
    else:
        assert secret not in said and "postgresql://" in said, said
