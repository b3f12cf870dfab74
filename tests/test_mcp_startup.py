"""`taskloom mcp` at startup: who it says it is, and a database it cannot use."""

from __future__ import annotations

import importlib.metadata
import sqlite3
import subprocess
from pathlib import Path

import pytest

import taskloom
from tests.conftest import subprocess_env
from tests.test_mcp_stdio import _command, _pipe


def test_server_info_carries_the_installed_version(tmp_path: Path) -> None:
    answers, _ = _pipe(f"sqlite:///{tmp_path / 'm.db'}", "t", [{"method": "ping"}])
    info = answers[0]["result"]["serverInfo"]
    assert info["name"] == "taskloom"
    assert info["version"] == importlib.metadata.version("taskloom") == taskloom.__version__


@pytest.mark.parametrize(
    "content", [b"not a database " * 100, None, "in a file"], ids=["garbage", "foreign", "file"]
)
def test_a_database_it_cannot_use_stops_it_at_startup(
    tmp_path: Path, content: bytes | str | None
) -> None:
    """It started, said nothing, and exited 0: the agent saw an MCP server with no tools. On
    a path under a file (``/etc/passwd/x.db``) it answered every read, an empty board, and
    failed every write with "File exists"."""
    path = tmp_path / "m.db"
    if content is None:
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE notes (a TEXT)")  # another application's file
    elif isinstance(content, str):
        (tmp_path / "notes").write_text("a file, not a folder")
        path = tmp_path / "notes" / "sub" / "m.db"
    else:
        path.write_bytes(content)
    done = subprocess.run(
        _command(f"sqlite:///{path}", "t"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1, done.stderr
    if isinstance(content, str):
        assert done.stderr == (
            f"Error: cannot create the database {path}: {tmp_path / 'notes'} is a file,"
            " not a folder\n"
        )
