"""``taskloom init`` on config files as users have them: what is theirs stays as it was, and
a second run changes nothing."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from taskloom.cli import main

DB = "sqlite:////srv/queue.db"


@pytest.fixture(autouse=True)
def taskloom_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files name ``taskloom`` plainly, whichever program runs the tests."""
    monkeypatch.setattr("taskloom.cli.agent_setup.program", lambda: "taskloom")


def init(*args: str) -> int:
    return main(["init", *args, "--thread", "t", "--db", DB])


def twice(*args: str) -> None:
    """Run init, then again, and check the second run changed nothing."""
    assert init(*args) == 0
    root = Path(args[args.index("--project") + 1] if "--project" in args else args[-1])
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert init(*args) == 0
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_a_byte_order_mark_is_kept_and_the_files_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file a Windows editor saved with a byte order mark was refused as "Unexpected UTF-8
    BOM (decode using utf-8-sig)", a config.toml as "Invalid statement (at line 1, column 1)"."""
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".mcp.json").write_bytes(b'\xef\xbb\xbf{\r\n  "mcpServers": {"x": {}}\r\n}\r\n')
    (tmp_path / ".claude" / "settings.json").write_bytes(b'\xef\xbb\xbf{"model": "opus"}')
    twice("claude-code", "--project", str(tmp_path))
    mcp = (tmp_path / ".mcp.json").read_bytes()
    assert mcp.startswith(b'\xef\xbb\xbf{\r\n  "mcpServers"') and b"\n" not in mcp.replace(
        b"\r\n", b""
    )
    assert set(json.loads(mcp.decode("utf-8-sig"))["mcpServers"]) == {"x", "taskloom"}
    settings = (tmp_path / ".claude" / "settings.json").read_bytes().decode("utf-8-sig")
    assert json.loads(settings)["model"] == "opus"

    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_bytes(
        b'\xef\xbb\xbf# mine\nmodel = "o3"\n\n[features]\nhooks = false\n'
    )
    twice("codex", "--codex-home", str(home))
    config = (home / "config.toml").read_bytes()
    assert config.startswith(b'\xef\xbb\xbf# mine\nmodel = "o3"\n')
    assert tomllib.loads(config.decode("utf-8-sig"))["mcp_servers"]["taskloom"]["args"][-1] == DB
    assert "turns Codex's hooks off" in capsys.readouterr().err  # read past the mark too
    assert os.path.exists(home / "hooks.json")


def test_a_read_only_file_is_refused_not_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rename replaced a file its owner had made read-only (chmod 444): the folder is
    what a rename needs to be writable."""
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {}}\n')
    (tmp_path / ".mcp.json").chmod(0o444)
    assert init("claude-code", "--project", str(tmp_path)) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"Error: cannot write {tmp_path / '.mcp.json'}: it is read-only")
    assert err.count("\n") == 1, err
    assert (tmp_path / ".mcp.json").read_text() == '{"mcpServers": {}}\n'
    assert not (tmp_path / ".claude").exists()  # nothing written: the run stopped first
