"""`taskloom init claude-code|codex`: merged into existing settings, idempotent, --print."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from taskloom.cli import agent_setup, main
from tests.conftest import subprocess_env

HERE = Path(sys.executable).parent
"""This environment's bin folder, where its ``taskloom`` script is."""


def project_db(project: Path) -> str:
    """The database URL ``init`` writes for a project with none found above it."""
    return f"sqlite:///{project / '.taskloom' / 'taskloom.db'}"


@pytest.fixture(autouse=True)
def taskloom_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent finds this environment's ``taskloom`` on its PATH, as after ``activate``:
    the files then name it plainly (see the test for the other case)."""
    monkeypatch.setenv("PATH", f"{HERE}{os.pathsep}{os.environ.get('PATH', '')}")


def test_a_taskloom_the_agent_cannot_find_on_path_is_written_as_its_full_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A virtualenv's ``taskloom`` not on PATH: the agent could start neither the MCP server
    nor a hook ("taskloom: not found"); the files name the program by its path."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    full = str((HERE / "taskloom").resolve())
    assert main(["init", "claude-code", "--thread", "t", "--project", str(tmp_path)]) == 0
    queue = f"sqlite:///{tmp_path / '.taskloom' / 'taskloom.db'}"
    assert main(["tasks", "add", "Fix it", "--db", queue]) == 0
    mcp = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["taskloom"]
    assert mcp["command"] == full
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    hook = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert shlex.split(hook)[0] == full
    bare = {"PATH": str(tmp_path / "empty-bin"), "HOME": str(tmp_path)}
    bare["PYTHONPATH"] = subprocess_env()["PYTHONPATH"]  # this checkout's code, by that script
    run = subprocess.run(
        hook,
        shell=True,
        input=json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=bare,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    context = json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Claim one with `task_next`" in context  # the agent has the MCP server
    assert main(["tasks", "add", "And this", "--db", queue]) == 0  # a new block to show
    without_mcp = subprocess.run(
        hook.removesuffix(" --mcp"),
        shell=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=bare,
        timeout=60,
    )
    context = json.loads(without_mcp.stdout)["hookSpecificOutput"]["additionalContext"]
    claim = context.split("Claim one with `")[1].split("`")[0]  # bare "taskloom": not found
    claimed = subprocess.run(
        claim, shell=True, capture_output=True, text=True, cwd=tmp_path, env=bare, timeout=60
    )
    assert claimed.returncode == 0 and "Fix it" in claimed.stdout, claimed.stderr
    codex = tmp_path / "codex"
    assert main(["init", "codex", "--thread", "t", "--codex-home", str(codex)]) == 0
    config = tomllib.loads((codex / "config.toml").read_text())
    assert config["mcp_servers"]["taskloom"]["command"] == full


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
    db = project_db(tmp_path)
    assert mcp["mcpServers"]["taskloom"] == {
        "command": "taskloom",
        "args": ["mcp", "--thread", "proj", "--agent", "c1", "--db", db],
    }
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus"
    commands = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert commands == ["echo hi", f"taskloom hook session-start --agent c1 --db {db}"]
    prompt = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert prompt == f"taskloom hook prompt --agent c1 --db {db} --mcp"
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
    for event, name, mcp in (
        ("UserPromptSubmit", "prompt", " --mcp"),
        ("SessionStart", "session-start", ""),
    ):
        commands = [h["command"] for g in settings["hooks"][event] for h in g["hooks"]]
        db = "postgresql://app@db/taskloom"
        assert commands == [f"taskloom hook {name} --agent c1 --db {db}{mcp}"], event


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


def test_a_url_whose_passwords_are_in_a_passfile_is_written(tmp_path: Path) -> None:
    """``passfile`` is how a URL keeps its password out: nothing secret, nothing refused."""
    url = "postgresql://app@db/tl?passfile=/home/me/.pgpass"
    args = ["init", "claude-code", "--thread", "proj", "--project", str(tmp_path), "--db", url]
    assert main(args) == 0
    settings = (tmp_path / ".claude" / "settings.json").read_text()
    assert "passfile=/home/me/.pgpass" in settings


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


def test_a_symlinked_private_file_is_written_through_its_link_and_stays_private(
    tmp_path: Path,
) -> None:
    """A settings file kept in a dotfiles repository stays a link to it, and one readable by
    its owner only (it may hold tokens) is not made readable by everyone."""
    dotfiles, home = tmp_path / "dotfiles", tmp_path / "codex"
    dotfiles.mkdir()
    home.mkdir()
    (dotfiles / "config.toml").write_text('model = "o4-mini"\n')
    (dotfiles / "config.toml").chmod(0o600)
    (home / "config.toml").symlink_to(dotfiles / "config.toml")
    assert main(["init", "codex", "--thread", "proj", "--codex-home", str(home)]) == 0
    assert (home / "config.toml").is_symlink()
    assert "[mcp_servers.taskloom]" in (dotfiles / "config.toml").read_text()
    assert stat.S_IMODE((dotfiles / "config.toml").stat().st_mode) == 0o600
    assert sorted(p.name for p in [*home.iterdir(), *dotfiles.iterdir()]) == [
        "config.toml",
        "config.toml",
        "hooks.json",
    ]


def test_a_file_keeps_its_permissions_and_a_new_one_follows_the_umask(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{}")
    (tmp_path / ".mcp.json").chmod(0o640)
    assert main(["init", "claude-code", "--thread", "proj", "--project", str(tmp_path)]) == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / ".mcp.json").stat().st_mode) == 0o640
    settings = tmp_path / ".claude" / "settings.json"
    assert stat.S_IMODE(settings.stat().st_mode) == 0o666 & ~umask


def test_codex_refuses_to_append_a_table_to_an_inline_mcp_servers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Appending [mcp_servers.taskloom] after `mcp_servers = {…}` is not TOML: Codex would not
    start. Nothing is written; the error gives the entry to add by hand."""
    config = tmp_path / "config.toml"
    mine = 'mcp_servers = { github = { command = "gh" } }\n'
    config.write_text(mine)
    args = ["init", "codex", "--thread", "proj", "--agent", "cx", "--codex-home", str(tmp_path)]
    assert main(args) == 1
    args_toml = f'"mcp", "--thread", "proj", "--agent", "cx", "--db", "{project_db(tmp_path)}"'
    entry = f'taskloom = {{ command = "taskloom", args = [{args_toml}] }}'
    assert entry in capsys.readouterr().err
    assert config.read_text() == mine and not (tmp_path / "hooks.json").exists()
    config.write_text(mine.replace("} }", "}, " + entry + " }"))
    assert main(args) == 0
    assert "unchanged" in capsys.readouterr().out


def test_claude_code_keeps_the_users_keys_of_its_mcp_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mcp = tmp_path / ".mcp.json"
    args = ["init", "claude-code", "--thread", "proj", "--agent", "c1", "--project", str(tmp_path)]
    assert main(args) == 0
    data = json.loads(mcp.read_text())
    data["mcpServers"]["taskloom"] |= {"type": "stdio", "env": {"TASKLOOM_URL": "sqlite:///x"}}
    mcp.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(args) == 0
    assert f"unchanged {mcp} (already set up)" in capsys.readouterr().out
    assert json.loads(mcp.read_text()) == data
    assert main([*args, "--db", "sqlite:///tmp/t.db"]) == 0
    entry = json.loads(mcp.read_text())["mcpServers"]["taskloom"]
    assert entry["type"] == "stdio" and entry["env"] == {"TASKLOOM_URL": "sqlite:///x"}
    assert entry["args"][-2:] == ["--db", "sqlite:///tmp/t.db"]


@pytest.mark.parametrize("agent", ["   ", "a" * 300])
@pytest.mark.parametrize("target", ["claude-code", "codex"])
def test_a_blank_or_oversized_agent_is_refused_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, target: str
) -> None:
    where = "--project" if target == "claude-code" else "--codex-home"
    assert main(["init", target, "--thread", "proj", "--agent", agent, where, str(tmp_path)]) == 1
    assert "--agent" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_agent_is_trimmed_as_the_queue_does(tmp_path: Path) -> None:
    args = [
        "init",
        "claude-code",
        "--thread",
        "proj",
        "--agent",
        " c1 ",
        "--project",
        str(tmp_path),
    ]
    assert main(args) == 0
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    prompt = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert prompt == f"taskloom hook prompt --agent c1 --db {project_db(tmp_path)} --mcp"


def test_a_hook_with_taskloom_by_its_path_is_taskloom_s_and_keeps_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A user who pointed the hooks at /opt/venv/bin/taskloom gets no second pair, and the
    hooks keep that path when they follow another agent."""
    settings = tmp_path / ".claude" / "settings.json"
    args = ["init", "claude-code", "--thread", "proj", "--agent", "x", "--project", str(tmp_path)]
    assert main(args) == 0
    settings.write_text(
        settings.read_text().replace('"taskloom hook', '"/opt/venv/bin/taskloom hook')
    )
    edited = settings.read_text()
    capsys.readouterr()
    assert main(args) == 0
    assert f"unchanged {settings} (already set up)" in capsys.readouterr().out
    assert settings.read_text() == edited
    assert main([*args[:-4], "--agent", "y", "--project", str(tmp_path)]) == 0
    hooks = json.loads(settings.read_text())["hooks"]
    db = project_db(tmp_path)
    for event, name, mcp in (
        ("UserPromptSubmit", "prompt", " --mcp"),
        ("SessionStart", "session-start", ""),
    ):
        commands = [h["command"] for g in hooks[event] for h in g["hooks"]]
        assert commands == [f"/opt/venv/bin/taskloom hook {name} --agent y --db {db}{mcp}"], event


@pytest.mark.parametrize(
    "command",
    [
        "/opt/venv/bin/taskloom hook prompt --agent x",
        '"C:\\venv\\Scripts\\taskloom.exe" hook prompt --agent x',
        "taskloom.exe hook prompt --agent x",
    ],
)
def test_a_taskloom_hook_is_recognised_by_its_program_s_name(command: str) -> None:
    """Set up for the same agent it is left as it is; for another, it is replaced (one hook,
    never a second) and keeps its program (a bare name while it finds taskloom: see below)."""
    text = json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [{"command": command}]}]}})

    def prompt_hooks(agent: str) -> list[str]:
        merged, _ = agent_setup.merge_hooks_json(text, "s.json", agent, None)
        groups = json.loads(merged)["hooks"]["UserPromptSubmit"]
        return [h["command"] for g in groups for h in g["hooks"]]

    assert prompt_hooks("x") == [command]
    assert [shlex.split(c) for c in prompt_hooks("y")] == [[*shlex.split(command)[:-1], "y"]]


def test_a_bare_taskloom_hook_follows_the_program_the_agent_can_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook written as bare ``taskloom`` was kept so when init ran again from a shell where
    that name is not this program: the prompt hook said ``taskloom`` (not found, out of the
    user's sight) while the new session-start hook and the MCP server named the full path."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    old = {"type": "command", "command": "taskloom hook prompt --agent old"}
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [old]}]}}))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    full = str((HERE / "taskloom").resolve())
    args = ["init", "claude-code", "--thread", "t", "--agent", "c1", "--project", str(tmp_path)]
    assert main(args) == 0
    hooks = json.loads(settings.read_text())["hooks"]
    programs = [
        shlex.split(h["command"])[0] for e in ("UserPromptSubmit", "SessionStart")
        for g in hooks[e] for h in g["hooks"]
    ]  # fmt: skip
    assert programs == [full, full]
    mcp = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["taskloom"]
    assert mcp["command"] == full


def test_codex_keeps_crlf_line_endings(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_bytes(b'model = "o4-mini"\r\n\r\n[mcp_servers.docs]\r\ncommand = "docs-mcp"\r\n')
    args = ["init", "codex", "--thread", "proj", "--codex-home", str(tmp_path)]
    for db in ("sqlite:///tmp/a.db", "sqlite:///tmp/b.db"):  # the table added, then rewritten
        assert main([*args, "--db", db]) == 0
        raw = config.read_bytes()
        assert raw.count(b"\n") == raw.count(b"\r\n") == 8 and db.encode() in raw


def test_claude_code_keeps_the_line_endings_and_indent_of_its_json_files(tmp_path: Path) -> None:
    """A CRLF file, indented with four spaces or a tab, came back LF with two."""
    (tmp_path / ".claude").mkdir()
    mcp, settings = tmp_path / ".mcp.json", tmp_path / ".claude" / "settings.json"
    mcp.write_bytes(
        b'{\r\n    "mcpServers": {\r\n        "other": {"command": "x"}\r\n    }\r\n}\r\n'
    )
    settings.write_bytes(b'{\n\t"model": "opus"\n}\n')
    assert main(["init", "claude-code", "--thread", "t", "--project", str(tmp_path)]) == 0
    raw = mcp.read_bytes()
    assert raw.count(b"\n") == raw.count(b"\r\n") and b'\r\n    "mcpServers"' in raw
    assert json.loads(raw)["mcpServers"]["other"] == {"command": "x"}
    assert b'\n\t"model": "opus"' in settings.read_bytes() and b"\r" not in settings.read_bytes()


def test_a_project_that_does_not_exist_is_refused_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped --project wrote its settings into a new directory tree."""
    missing = tmp_path / "no" / "such" / "project"
    assert main(["init", "claude-code", "--thread", "t", "--project", str(missing)]) == 1
    assert "no such directory" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()
    (tmp_path / "file").write_text("")  # there, but not a directory
    assert main(["init", "codex", "--thread", "t", "--project", str(tmp_path / "file")]) == 1
    assert capsys.readouterr().err == f"Error: --project {tmp_path / 'file'}: not a directory\n"


@pytest.mark.parametrize("key", ["hooks", "codex_hooks"])
def test_codex_says_when_its_config_turns_hooks_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    """Codex runs no hooks with ``[features] hooks = false`` (or the older ``codex_hooks``):
    the queue hooks were written and silently never ran."""
    args = ["init", "codex", "--thread", "t", "--codex-home", str(tmp_path)]
    assert main(args) == 0
    said = capsys.readouterr()
    assert "Warning" not in said.err and "trust" in said.out
    (tmp_path / "config.toml").write_text(f"[features]\n{key} = false\n")
    assert main(args) == 0
    assert f"[features] {key} = false" in capsys.readouterr().err
    assert agent_setup.codex_hooks_off("[features]\nhooks = true\n") is None
