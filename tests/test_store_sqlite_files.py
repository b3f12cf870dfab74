"""Which SQLite files taskloom opens: its own, a new one, an empty one; never another
application's."""

from __future__ import annotations

import sqlite3
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
            " point --db at a new file or a taskloom database\n"
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
