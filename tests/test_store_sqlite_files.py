"""Which SQLite files taskloom opens: its own, a new one, an empty one; never another
application's."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest

import taskloom
from tests.test_cli import run


def _foreign(path: Path, *tables: str) -> list[tuple[str, str]]:
    """A database another application made; returns its schema, to compare afterwards."""
    with sqlite3.connect(path) as conn:
        for table in tables:
            conn.execute(f"CREATE TABLE {table} (a INTEGER)")
    return _schema(path)


def _schema(path: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize("tables", [("foo",), ("documents", "users")])
def test_another_applications_database_is_refused_by_reads_and_writes_and_left_as_it_was(
    tmp_path: Path, tables: tuple[str, ...]
) -> None:
    path = tmp_path / "other.db"
    before = _foreign(path, *tables)
    db = f"sqlite:///{path}"
    for args in (["board", "list", "t"], ["board", "add", "t", "x"], ["tasks", "stats"]):
        result = run(*args, "--db", db)
        assert result.returncode == 1, args
        assert result.stderr == (
            f"Error: {path} is not a taskloom database (it has tables: {', '.join(tables)});"
            " use a new file or a taskloom database\n"
        )
    assert _schema(path) == before
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # not made WAL


def test_the_refusal_names_a_few_tables_of_many(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    _foreign(path, *(f"t{i}" for i in range(8)))
    with (
        taskloom.connect(f"sqlite:///{path}") as tl,
        pytest.raises(taskloom.StoreError, match=r"\(it has tables: t0, t1, t2, t3, t4, …\)"),
    ):
        tl.board("t").list()


def test_a_new_an_empty_and_a_taskloom_file_still_open(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()  # 0 bytes: what a tool that "creates the file first" leaves
    for path in (empty, tmp_path / "new.db"):
        with taskloom.connect(f"sqlite:///{path}") as tl:
            assert tl.board("t").list()["cards"] == []
            tl.board("t").add("x")
        with taskloom.connect(f"sqlite:///{path}") as tl:  # its own tables: not foreign
            assert [c["title"] for c in tl.board("t").list()["cards"]] == ["x"]


FRAMEWORK_MIGRATIONS = {
    "golang-migrate": (
        "CREATE TABLE schema_migrations (version bigint PRIMARY KEY, dirty boolean)",
        "INSERT INTO schema_migrations VALUES (1, 0)",
    ),
    "rails": (
        "CREATE TABLE schema_migrations (version varchar NOT NULL PRIMARY KEY)",
        "INSERT INTO schema_migrations VALUES ('20240101000000')",
    ),
    "same columns, other rows": (
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)",
        "INSERT INTO schema_migrations VALUES (9, 'create_accounts')",
    ),
    "a view only": ("CREATE VIEW answer AS SELECT 42 AS n", "SELECT 1"),
}


@pytest.mark.parametrize("made", FRAMEWORK_MIGRATIONS.values(), ids=FRAMEWORK_MIGRATIONS.keys())
def test_another_frameworks_migrations_table_is_not_taken_for_taskloom_s(
    tmp_path: Path, made: tuple[str, str]
) -> None:
    """Rails, golang-migrate, dbmate and Ecto keep a ``schema_migrations`` table too:
    taskloom's rows went into theirs, and its tables beside their app's."""
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        for sql in made:
            conn.execute(sql)
    before = _schema(path)
    result = run("board", "add", "t", "x", "--db", f"sqlite:///{path}")
    assert result.returncode == 1 and "is not a taskloom database" in result.stderr
    assert _schema(path) == before
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_an_unknown_users_home_is_refused_not_made_a_folder(tmp_path: Path) -> None:
    result = run("board", "list", "t", "--db", "sqlite:///~no-such-user-here/x.db", cwd=tmp_path)
    assert result.returncode == 1 and "~no-such-user-here" in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_new_database_has_small_pages_and_an_older_one_keeps_its_own(tmp_path: Path) -> None:
    """Every commit writes each page it changed whole to the WAL, so taskloom makes its
    files with 2 KiB pages; a file made before (SQLite's 4 KiB) opens, migrates and works as
    it is."""
    old = tmp_path / "old.db"
    conn = sqlite3.connect(old)
    conn.execute("PRAGMA page_size = 4096")
    conn.execute("PRAGMA journal_mode = WAL")  # writes the header: the size is fixed now
    conn.close()
    for name in ("new.db", "old.db"):
        with taskloom.connect(f"sqlite:///{tmp_path / name}") as tl:
            task, _ = tl.queue.add("t")
            claimed = tl.queue.claim("w", lease=30)
            assert claimed is not None and claimed.id == task.id
            tl.queue.done(task.id, claimed.lease_token or "", "ok")
            assert tl.queue.get(task.id).result == "ok"
    sizes = {
        name: sqlite3.connect(tmp_path / name).execute("PRAGMA page_size").fetchone()[0]
        for name in ("new.db", "old.db")
    }
    assert sizes == {"new.db": 2048, "old.db": 4096}


def test_a_new_database_and_its_wal_are_the_owner_s_alone(tmp_path: Path) -> None:
    """SQLite made the file 644 under the usual umask: every user of the machine could read
    the stashed tool output, the boards and the workers' lease tokens. A file that exists
    keeps its own mode."""
    old = os.umask(0o022)
    try:
        made = run("board", "add", "t", "x", "--db", f"sqlite:///{tmp_path / 'cli.db'}")
        assert made.returncode == 0, made.stderr
        kept = tmp_path / "kept.db"
        sqlite3.connect(kept).close()
        kept.chmod(0o640)
        with (
            taskloom.connect(f"sqlite:///{tmp_path / 'new.db'}") as tl,
            taskloom.connect(f"sqlite:///{kept}") as other,
        ):
            tl.board("t").add("x")
            other.board("t").add("x")
            modes = {
                name: stat.S_IMODE((tmp_path / name).stat().st_mode)
                for name in ("cli.db", "new.db", "new.db-wal", "new.db-shm", "kept.db")
            }
    finally:
        os.umask(old)
    assert modes == {
        "cli.db": 0o600,
        "new.db": 0o600,
        "new.db-wal": 0o600,
        "new.db-shm": 0o600,
        "kept.db": 0o640,
    }


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_taskloom_folder_the_first_write_makes_is_not_committed_by_git(tmp_path: Path) -> None:
    """After ``taskloom init`` and a first write, ``git add -A`` in the project committed the
    database with its -wal and -shm files: this machine's state, lease tokens and all."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    made = run("tasks", "add", "x", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / ".taskloom" / "taskloom.db").exists()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout == ""


def test_a_folder_that_exists_or_has_another_name_gets_no_gitignore(tmp_path: Path) -> None:
    (tmp_path / "mine" / ".taskloom").mkdir(parents=True)
    for url in (tmp_path / "mine" / ".taskloom" / "t.db", tmp_path / "data" / "t.db"):
        with taskloom.connect(f"sqlite:///{url}") as tl:
            tl.board("t").add("x")
        assert sorted(p.name for p in url.parent.iterdir() if not p.name.startswith("t.db")) == []
