"""`taskloom mcp` at startup: who it says it is, and a database it cannot use."""

from __future__ import annotations

import importlib.metadata
import sqlite3
import subprocess
from pathlib import Path

import pytest

import taskloom
from tests.conftest import subprocess_env
from tests.test_mcp_stdio import _command, _line, _pipe, _pipe_lines


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


def test_a_call_before_the_session_is_open_says_how_to_open_it(tmp_path: Path) -> None:
    """``taskloom mcp < calls.jsonl`` with tool calls and no ``initialize`` answered each
    one ``Invalid request parameters`` and nothing more; the answer says what is missing.
    Once a request carries the 2026-07-28 envelope, the SDK's own answers are left alone."""
    db = f"sqlite:///{tmp_path / 'm.db'}"
    call = {"name": "todo", "arguments": {"op": "list"}}
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    lines = [_line(1, {"method": "tools/call", "params": call}), _line(2, {"method": "ping"})]
    answers = {a["id"]: a for a in _pipe_lines(db, "t", lines)[0]}
    refused = answers[1]["error"]
    assert refused["code"] == -32602
    assert refused["message"] == (
        "Invalid request parameters: the session is not open: send `initialize` first"
        " (protocol 2025-11-25), or give each request its `_meta` envelope (protocol 2026-07-28)"
    )
    assert answers[2]["result"] == {}
    lines = [
        _line(3, {"method": "tools/call", "params": {**call, "_meta": envelope}}),
        _line(4, {"method": "resources/read", "params": {"_meta": envelope}}),
    ]
    answers = {a["id"]: a for a in _pipe_lines(db, "t", lines)[0]}
    assert "Todo board (version 0" in answers[3]["result"]["content"][0]["text"]
    assert answers[4]["error"] == {
        "code": -32602,
        "message": "Invalid request parameters",  # no uri: the SDK's answer, as it was
        "data": "",
    }
    assert "initialize" not in answers[4]["error"]["message"]


def test_a_session_opened_with_initialize_answers_as_before(tmp_path: Path) -> None:
    answers, _ = _pipe(f"sqlite:///{tmp_path / 'm.db'}", "t", [{"method": "tools/list"}])
    assert answers[0]["result"]["serverInfo"]["name"] == "taskloom"
    assert {t["name"] for t in answers[1]["result"]["tools"]} >= {"todo", "goal_get"}
