"""``taskloom init`` sets up the project, not the machine: its thread, its database, its files;
and the prompt hook tells an agent with taskloom's MCP server to use its tool."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

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
def home(tmp_path: Path) -> dict[str, str]:
    """A home folder of its own, so the user-wide config written (or not) is the test's."""
    (tmp_path / "home").mkdir()
    return {"HOME": str(tmp_path / "home"), "CODEX_HOME": ""}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop-api"
    (root / "src").mkdir(parents=True)
    return root


def db_of(folder: Path) -> str:
    return f"sqlite:///{folder / '.taskloom' / 'taskloom.db'}"


def test_codex_writes_the_projects_config_with_its_thread_and_database(
    project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    """It wrote ~/.codex, binding every Codex session on the machine to one thread, with no
    database: each session then used the .taskloom/ of whatever folder it ran in."""
    done = run_in(project, "init", "codex", "--agent", "cx", **home)
    assert done.returncode == 0, done.stderr
    assert "trust the project" in done.stdout
    config = tomllib.loads((project / ".codex" / "config.toml").read_text())
    assert config["mcp_servers"]["taskloom"]["args"] == [
        *("mcp", "--thread", "shop-api", "--agent", "cx", "--db", db_of(project))
    ]
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    prompt = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert shlex.split(prompt)[1:] == [
        *("hook", "prompt", "--agent", "cx", "--db", db_of(project), "--mcp")
    ]
    assert list((tmp_path / "home").iterdir()) == []


def test_codex_global_writes_the_user_wide_config(
    project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    done = run_in(project, "init", "codex", "--global", "--thread", "everywhere", **home)
    assert done.returncode == 0, done.stderr
    user = tmp_path / "home" / ".codex"
    config = tomllib.loads((user / "config.toml").read_text())
    assert config["mcp_servers"]["taskloom"]["args"][:3] == ["mcp", "--thread", "everywhere"]
    assert (user / "hooks.json").exists() and not (project / ".codex").exists()


def test_claude_code_writes_the_projects_settings_with_its_thread_and_database(
    project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    """As for Codex: the project's .mcp.json and .claude/settings.json, its folder's name as the
    thread, its own database as an absolute URL, and the prompt hook told of the MCP tool."""
    done = run_in(project, "init", "claude-code", "--agent", "cc", **home)
    assert done.returncode == 0, done.stderr
    mcp = json.loads((project / ".mcp.json").read_text())["mcpServers"]["taskloom"]
    assert mcp["args"] == [
        *("mcp", "--thread", "shop-api", "--agent", "cc", "--db", db_of(project))
    ]
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    prompt = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert shlex.split(prompt)[1:] == [
        *("hook", "prompt", "--agent", "cc", "--db", db_of(project), "--mcp")
    ]
    assert list((tmp_path / "home").iterdir()) == []
    assert not (project / ".taskloom").exists()  # made by the first write, not by init


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
@pytest.mark.parametrize("name", ["p" * 250, "two\tcolumns"], ids=["long", "tab"])
def test_a_folder_name_that_is_no_thread_id_asks_for_thread(
    tmp_path: Path, home: dict[str, str], agent: str, name: str
) -> None:
    """The thread named after the folder was refused as if the user had given it (``Error:
    thread id is longer than 200 characters``), with no word of where it came from or of
    --thread, which the user never typed."""
    folder = tmp_path / name
    folder.mkdir()
    done = run_in(folder, "init", agent, **home)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(
        "Error: the project folder's name cannot be the thread id (its default): thread id "
    )
    assert done.stderr.endswith("; give one with --thread\n"), done.stderr
    assert list(folder.iterdir()) == []
    given = run_in(folder, "init", agent, "--thread", "shop", **home)
    assert given.returncode == 0, given.stderr


def test_the_database_found_above_the_project_is_the_one_written(
    tmp_path: Path, home: dict[str, str]
) -> None:
    """A service in a monorepo whose .taskloom/ is at the top: the agent shares it."""
    monorepo = tmp_path / "mono"
    service = monorepo / "services" / "billing"
    service.mkdir(parents=True)
    (monorepo / ".taskloom").mkdir()
    done = run_in(service, "init", "claude-code", **home)
    assert done.returncode == 0, done.stderr
    mcp = json.loads((service / ".mcp.json").read_text())["mcpServers"]["taskloom"]
    thread, db = ["--thread", "billing"], ["--db", db_of(monorepo)]
    assert mcp["args"] == ["mcp", *thread, "--agent", "claude-code", *db]


def test_the_hook_reaches_the_projects_database_from_any_folder(
    project: Path, home: dict[str, str]
) -> None:
    """The agent runs its hooks where it stands; the person adds work at the project's root."""
    assert run_in(project, "init", "claude-code", "--agent", "c1", **home).returncode == 0
    assert run_in(project, "tasks", "add", "Fix the login").returncode == 0
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    hook = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    ran = subprocess.run(
        hook,
        shell=True,
        input="{}",
        capture_output=True,
        text=True,
        cwd=project / "src",
        env=subprocess_env(),
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    block = json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Fix the login" in block and not (project / "src" / ".taskloom").exists()


def test_a_password_in_taskloom_url_is_not_written(project: Path, home: dict[str, str]) -> None:
    url = "postgresql://app:s3cret@db.internal/tl"
    done = run_in(project, "init", "claude-code", TASKLOOM_URL=url, **home)
    assert done.returncode == 0, done.stderr
    assert "TASKLOOM_URL holds a password" in done.stderr and "s3cret" not in done.stderr
    written = (project / ".mcp.json").read_text() + (project / ".claude/settings.json").read_text()
    assert "s3cret" not in written and "--db" not in written


def test_the_prompt_hook_names_the_mcp_tool_when_the_agent_has_it(tmp_path: Path) -> None:
    """An agent with the ``task_next`` tool was told to run ``taskloom tasks next``."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    assert run_in(tmp_path, "tasks", "add", "Review PR 12", "--db", db).returncode == 0
    said = {}
    for agent, flags in (("with-mcp", ["--mcp"]), ("shell-only", [])):
        ran = run_in(tmp_path, "hook", "prompt", "--agent", agent, "--db", db, *flags)
        assert ran.returncode == 0, ran.stderr
        said[agent] = json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Claim one with `task_next`" in said["with-mcp"]
    assert "tasks next" not in said["with-mcp"] and "Review PR 12" in said["with-mcp"]
    assert "taskloom tasks next --agent shell-only --db" in said["shell-only"]
