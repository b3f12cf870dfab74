"""`taskloom mcp` at startup: who it says it is, and a database it cannot use."""

from __future__ import annotations

import importlib.metadata
import signal
import sqlite3
import subprocess
import sys
import threading
import time
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
    no_uri = "Invalid params: params.uri: Field required"  # the SDK's own answer names nothing
    assert answers[4]["error"] == {"code": -32602, "message": no_uri}


def test_an_initialize_without_its_protocol_version_says_so(tmp_path: Path) -> None:
    """An ``initialize`` the SDK refused (no ``protocolVersion``) was answered "the session is
    not open: send `initialize` first", to a client that had just sent it."""
    hello = {"capabilities": {}, "clientInfo": {"name": "script", "version": "1"}}
    lines = [_line(1, {"method": "initialize", "params": hello})]
    (answer,) = _pipe_lines(f"sqlite:///{tmp_path / 'm.db'}", "t", lines)[0]
    assert answer["error"] == {
        "code": -32602,
        "message": "Invalid params: params.protocolVersion: Field required",
    }


def test_a_session_opened_with_initialize_answers_as_before(tmp_path: Path) -> None:
    answers, _ = _pipe(f"sqlite:///{tmp_path / 'm.db'}", "t", [{"method": "tools/list"}])
    assert answers[0]["result"]["serverInfo"]["name"] == "taskloom"
    assert {t["name"] for t in answers[1]["result"]["tools"]} >= {"todo", "goal_get"}


def _catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (Linux's /proc says)."""
    with open(f"/proc/{pid}/status") as status:
        caught = next(line for line in status if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (signum - 1) & 1)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_signal_while_it_starts_ends_it_cleanly(tmp_path: Path, signum: int) -> None:
    """A client that gives up on a server still starting (importing the MCP SDK, opening the
    database: about a second). SIGTERM killed it outright until the event loop took the
    signals, after the database was opened; now the signals are handled from the command's
    start, and the server ends, exit 0, without serving, once it has started."""
    db = f"sqlite:///{tmp_path / 'm.db'}"
    proc = subprocess.Popen(
        _command(db, "t"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(),
    )
    announced = threading.Event()
    stderr: list[bytes] = []

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            stderr.append(line)
            announced.set()  # the database is open

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while not _catches(proc.pid, signal.SIGTERM):
            assert proc.poll() is None and time.monotonic() < deadline, "it never took SIGTERM"
            time.sleep(0.002)
        early = not announced.is_set()
        proc.send_signal(signum)
        assert proc.wait(30) == 0
        assert proc.stdout is not None and proc.stdout.read() == b""  # nothing served
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    reader.join(10)
    assert early, "SIGTERM was not handled until the database was open"
    assert [line for line in stderr if not line.startswith(b"database: ")] == []
    answers, _ = _pipe(db, "t", [{"method": "ping"}])  # the database serves as before
    assert answers[1]["result"] == {}
