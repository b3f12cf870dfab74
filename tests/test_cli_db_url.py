"""`--db` and `$TASKLOOM_URL` values that pointed somewhere else than they said."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import subprocess_env


def run_in(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskloom", *args],
        capture_output=True,
        text=True,
        env={**subprocess_env(), **(env or {})},
        cwd=cwd,
        timeout=60,
    )


def test_a_tilde_is_the_home_folder_not_a_folder_named_tilde(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    for how in (["--db", "sqlite:///~/x.db"], []):
        env = {"HOME": str(home)} if how else {"HOME": str(home), "TASKLOOM_URL": "~/y.db"}
        added = run_in(work, "board", "add", "t", "x", *how, env=env)
        assert added.returncode == 0, added.stderr
    assert (home / "x.db").exists() and (home / "y.db").exists()
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("via", ["--db", "TASKLOOM_URL"])
def test_a_sqlite_url_with_a_query_is_refused_not_made_a_file_name(
    tmp_path: Path, via: str
) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}?mode=ro"
    args, env = (["--db", url], None) if via == "--db" else ([], {"TASKLOOM_URL": url})
    result = run_in(tmp_path, "board", "add", "t", "x", *args, env=env)
    assert result.returncode == 1
    assert result.stderr.startswith("Error: a SQLite URL takes no ?query options")
    assert result.stderr.count("\n") == 1 and list(tmp_path.iterdir()) == []


def test_an_empty_db_is_refused_not_read_as_the_default(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    env = {"TASKLOOM_URL": f"sqlite:///{other}"}
    assert run_in(tmp_path, "board", "add", "t", "in other", env=env).returncode == 0
    for args in (["board", "list", "t"], ["board", "add", "t", "x"], ["tasks", "stats"]):
        result = run_in(tmp_path, *args, "--db", "", env=env)
        assert result.returncode == 1, args
        assert result.stderr.startswith("Error: the database URL is empty"), result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


def test_an_empty_taskloom_url_is_unset(tmp_path: Path) -> None:
    result = run_in(tmp_path, "board", "add", "t", "x", env={"TASKLOOM_URL": ""})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / ".taskloom" / "taskloom.db").exists()


def test_a_path_under_a_file_says_so_and_serve_refuses_to_start(tmp_path: Path) -> None:
    """``mkdir`` failed with "File exists"; ``serve`` started, served an empty panel and
    logged a failure every minute."""
    (tmp_path / "notes").write_text("a file, not a folder")
    url = f"sqlite:///{tmp_path / 'notes' / 'x.db'}"
    why = f"{tmp_path / 'notes'} is a file, not a folder\n"
    added = run_in(tmp_path, "board", "add", "t", "x", "--db", url)
    assert added.returncode == 1 and added.stderr.endswith(why), added.stderr
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = str(probe.getsockname()[1])
    served = run_in(tmp_path, "serve", "--port", port, "--db", url)
    assert served.returncode == 1 and served.stderr.startswith("Error: cannot create"), served
    assert served.stderr.endswith(why) and served.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args", [("board", "add", "t", "x"), ("board", "list", "t"), ("goal", "show", "t")]
)
def test_a_folder_given_as_the_database_says_so(tmp_path: Path, args: tuple[str, ...]) -> None:
    """``--db sqlite:///.taskloom`` (the folder, not the file in it) failed with SQLite's
    "unable to open database file", which did not say what was wrong with the path."""
    (tmp_path / ".taskloom").mkdir()
    url = f"sqlite:///{tmp_path / '.taskloom'}"
    done = run_in(tmp_path, *args, "--db", url)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f"Error: cannot open the database {tmp_path / '.taskloom'}: it is a folder, not a"
        f" database file: give the file's path (such as {tmp_path / '.taskloom' / 'taskloom.db'})\n"
    )


def test_a_path_starting_with_file_colon_is_that_file_not_a_uri(tmp_path: Path) -> None:
    """SQLite read ``file:x.db`` as a URI: it made x.db, then the file was not found."""
    for how in (["--db", "file:x.db"], ["--db", "sqlite:///file:y.db"]):
        added = run_in(tmp_path, "board", "add", "t", "x", *how)
        assert added.returncode == 0, added.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file:x.db", "file:y.db"]


@pytest.mark.parametrize("empty", ["--from", "--to"])
def test_migrate_db_names_the_empty_flag_not_db(tmp_path: Path, empty: str) -> None:
    """``migrate-db`` takes no ``--db``: an empty ``--from`` or ``--to`` is named as such."""
    source = f"sqlite:///{tmp_path / 'source.db'}"
    assert run_in(tmp_path, "board", "add", "t", "x", "--db", source).returncode == 0
    urls = {"--from": source, "--to": f"sqlite:///{tmp_path / 'target.db'}", empty: " "}
    result = run_in(tmp_path, "migrate-db", "--from", urls["--from"], "--to", urls["--to"])
    assert result.returncode == 1
    why = f"Error: {empty} is empty: give a database URL (sqlite:///path.db, postgresql://…)\n"
    assert result.stderr == why, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["source.db"]
