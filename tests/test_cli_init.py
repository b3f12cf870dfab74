"""`taskloom init claude-code|codex`: merged into existing settings, idempotent, --print."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from taskloom.cli import main


def test_claude_code_merges_keeps_user_settings_and_is_idempotent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"other": {"command": "x"}}}')
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "model": "opus",
                "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]},
            }
        )
    )
    args = ["init", "claude-code", "--thread", "proj", "--agent", "c1", "--project", str(tmp_path)]
    assert main(args) == 0
    mcp = json.loads((tmp_path / ".mcp.json").read_text())
    assert mcp["mcpServers"]["other"] == {"command": "x"}
    assert mcp["mcpServers"]["taskloom"] == {
        "command": "taskloom",
        "args": ["mcp", "--thread", "proj", "--agent", "c1"],
    }
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus"
    commands = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert commands == ["echo hi", "taskloom hook session-start --agent c1"]
    prompt = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert prompt == "taskloom hook prompt --agent c1"
    before = {p: p.read_text() for p in tmp_path.rglob("*.json")}
    capsys.readouterr()
    assert main(args) == 0
    assert "already set up" in capsys.readouterr().out
    assert {p: p.read_text() for p in tmp_path.rglob("*.json")} == before


def test_running_it_again_with_another_database_replaces_the_hooks(tmp_path: Path) -> None:
    args = ["init", "claude-code", "--thread", "proj", "--agent", "c1", "--project", str(tmp_path)]
    assert main(args) == 0
    assert main([*args, "--db", "postgresql://app@db/taskloom"]) == 0
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    for event, name in (("UserPromptSubmit", "prompt"), ("SessionStart", "session-start")):
        commands = [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]
        assert commands == [f"taskloom hook {name} --agent c1 --db postgresql://app@db/taskloom"], (
            event
        )


@pytest.mark.parametrize(
    "url", ["postgresql://app:s3cret@db/tl", "postgresql://app@db/tl?password=s3cret"]
)
def test_a_database_url_with_a_password_is_never_written_into_project_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    args = ["init", "claude-code", "--thread", "proj", "--project", str(tmp_path), "--db", url]
    for extra in ([], ["--print"]):
        assert main([*args, *extra]) == 1
        captured = capsys.readouterr()
        assert "TASKLOOM_URL" in captured.err and "s3cret" not in captured.out + captured.err
    assert list(tmp_path.iterdir()) == []


def test_print_writes_nothing_and_bad_json_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["init", "claude-code", "--thread", "proj", "--project", str(tmp_path)]
    assert main([*args, "--print"]) == 0
    out = capsys.readouterr().out
    assert '"taskloom"' in out and "UserPromptSubmit" in out
    assert list(tmp_path.iterdir()) == []
    (tmp_path / ".mcp.json").write_text("{not json")
    assert main(args) == 1
    assert "not valid JSON" in capsys.readouterr().err
    assert (tmp_path / ".mcp.json").read_text() == "{not json"


def test_codex_appends_toml_once_and_keeps_the_rest(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('model = "o4-mini"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n')
    args = ["init", "codex", "--thread", "proj", "--agent", "cx", "--codex-home", str(tmp_path)]
    assert main([*args, "--db", "sqlite:///tmp/t.db"]) == 0
    data = tomllib.loads(config.read_text())
    assert data["model"] == "o4-mini" and data["mcp_servers"]["docs"]["command"] == "docs-mcp"
    assert data["mcp_servers"]["taskloom"]["args"] == [
        *("mcp", "--thread", "proj", "--agent", "cx", "--db", "sqlite:///tmp/t.db")
    ]
    hooks = json.loads((tmp_path / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"UserPromptSubmit", "SessionStart"}
    text = config.read_text()
    assert main([*args, "--db", "sqlite:///tmp/t.db"]) == 0
    assert config.read_text() == text
    config.write_text("model = \n")
    assert main(args) == 1


def test_codex_run_again_points_the_mcp_server_at_the_new_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The MCP server follows the hooks to another database; keys and comments the user put
    in the table stay."""
    config = tmp_path / "config.toml"
    args = ["init", "codex", "--thread", "proj", "--agent", "cx", "--codex-home", str(tmp_path)]
    assert main([*args, "--db", "sqlite:///tmp/old.db"]) == 0
    config.write_text(
        config.read_text().replace("args =", '# mine\nenv = { A = "1" }\nargs =')
        + '\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    )
    assert main([*args, "--db", "sqlite:///tmp/né.db"]) == 0
    text = config.read_text()
    data = tomllib.loads(text)
    entry = data["mcp_servers"]["taskloom"]
    assert entry["args"][-2:] == ["--db", "sqlite:///tmp/né.db"]
    assert entry["env"] == {"A": "1"} and "# mine" in text and "old.db" not in text
    assert data["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    hooks = json.loads((tmp_path / "hooks.json").read_text())["hooks"]
    assert "né.db" in hooks["SessionStart"][0]["hooks"][0]["command"]


def test_codex_refuses_to_rewrite_a_table_it_cannot_edit_safely(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    mine = 'mcp_servers.taskloom = { command = "taskloom", args = ["mcp", "--thread", "a"] }\n'
    config.write_text(mine)
    args = ["init", "codex", "--thread", "proj", "--codex-home", str(tmp_path)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "args = [" in err and "--thread" in err and "proj" in err
    assert config.read_text() == mine and not (tmp_path / "hooks.json").exists()


def test_a_password_with_a_hash_is_still_a_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "postgresql://app:ab#cd@db/tl"  # libpq reads the password up to the "@"
    args = ["init", "claude-code", "--thread", "proj", "--project", str(tmp_path), "--db", url]
    assert main(args) == 1
    assert "TASKLOOM_URL" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
