"""`taskloom init` on files it cannot use: one error line naming the file, nothing written."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from taskloom.cli import main


def tree(root: Path) -> dict[str, str | bytes]:
    """Every entry under ``root`` as it is on disk: a file's bytes, a folder, a link."""
    found: dict[str, str | bytes] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            key = str(path.relative_to(root))
            if path.is_symlink():
                found[key] = f"link to {os.readlink(path)}"
            elif path.is_dir():
                found[key] = "folder"
            elif not path.is_file():
                found[key] = "pipe"
            else:
                found[key] = path.read_bytes()
    return found


def _folder(path: Path) -> None:
    path.mkdir(parents=True)


def _not_utf8(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"mcpServers": {"x": "\xff"}}')


def _loop(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(path.name)


def _pipe(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


def _endless(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/zero")


CLAUDE_CASES: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "mcp.json is a folder": (".mcp.json", _folder, ".mcp.json"),
    "settings.json is a folder": (".claude/settings.json", _folder, "settings.json"),
    "mcp.json is not UTF-8": (".mcp.json", _not_utf8, "is not UTF-8 text"),
    "settings.json is not UTF-8": (".claude/settings.json", _not_utf8, "is not UTF-8 text"),
    "mcp.json is a loop of links": (".mcp.json", _loop, ".mcp.json"),
    ".claude is a file": (".claude", lambda p: p.write_text("x"), "is not a directory"),
    "settings.json is a pipe": (".claude/settings.json", _pipe, "is not a regular file"),
    "mcp.json is a link to a device": (".mcp.json", _endless, "is not a regular file"),
}


def test_a_link_planted_where_a_temp_file_might_go_is_left_alone(tmp_path: Path) -> None:
    """The temp file had a fixed name: a link a cloned repository shipped there was
    followed, the settings were written into a file outside the project, and the settings
    file became that link."""
    victim = tmp_path / "victim"
    victim.write_text("export IMPORTANT=1\n")
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    for name in (".mcp.json", ".claude/settings.json"):
        (project / f"{name}.taskloom-tmp").symlink_to(victim)
    (project / ".mcp.json").write_text("{}")
    (project / ".mcp.json").chmod(0o640)
    assert main(["init", "claude-code", "--thread", "t", "--project", str(project)]) == 0
    assert victim.read_text() == "export IMPORTANT=1\n"
    for name in (".mcp.json", ".claude/settings.json"):
        assert not (project / name).is_symlink() and (project / name).is_file()
    assert stat.S_IMODE((project / ".mcp.json").stat().st_mode) == 0o640  # kept
    made = stat.S_IMODE((project / ".claude" / "settings.json").stat().st_mode)
    assert made == 0o666 & ~_umask()  # a new file: the umask's, not mkstemp's 600
    assert sorted(p.name for p in project.iterdir()) == [
        ".claude",
        ".mcp.json",
        ".mcp.json.taskloom-tmp",
    ]  # no temp file left behind


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("case", CLAUDE_CASES)
def test_claude_code_refuses_a_file_it_cannot_use_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    where, make, said = CLAUDE_CASES[case]
    make(tmp_path / where)
    before = tree(tmp_path)
    args = ["init", "claude-code", "--thread", "t", "--project", str(tmp_path)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1 and said in err, err
    assert tree(tmp_path) == before


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda home: home.write_text("not a folder"), "is not a directory"),
        (lambda home: (home / "config.toml").mkdir(parents=True), "config.toml"),
        (lambda home: (home / "hooks.json").mkdir(parents=True), "hooks.json"),
        (lambda home: _not_utf8(home / "config.toml"), "is not UTF-8 text"),
    ],
)
def test_codex_refuses_a_home_or_file_it_cannot_use_and_writes_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], None],
    said: str,
) -> None:
    home = tmp_path / "codex"
    make(home)
    before = tree(tmp_path)
    assert main(["init", "codex", "--thread", "t", "--codex-home", str(home)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1 and said in err, err
    assert tree(tmp_path) == before


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("bogus://x", "unsupported database URL scheme 'bogus'"),
        ("sqlite://rel.db", "three slashes"),
        ("postgresql:db", "not a valid PostgreSQL URL"),
        ("sqlite:///x.db?mode=ro", "takes no ?query"),
        ("", "empty"),
    ],
)
def test_a_database_url_taskloom_could_not_open_is_refused_not_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, said: str
) -> None:
    """The agent would have started with a database URL every call then failed on."""
    for agent, where in (("claude-code", "--project"), ("codex", "--codex-home")):
        args = ["init", agent, "--thread", "t", where, str(tmp_path), "--db", url]
        assert main(args) == 1
        err = capsys.readouterr().err
        assert err.startswith("Error: ") and said in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("agent", "link", "kind"),
    [
        ("claude-code", "proj/.claude/settings.json", "file"),
        ("claude-code", "proj/.mcp.json", "file"),
        ("claude-code", "proj/.claude", "folder"),
        ("codex", "codex/config.toml", "file"),
        ("codex", "codex/hooks.json", "file"),
    ],
)
def test_a_link_to_nothing_is_refused_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, link: str, kind: str
) -> None:
    """A config file (or its folder) that is a link whose target does not exist: the write
    made the target, outside the project, and the folders on the way to it."""
    elsewhere = tmp_path / "outside" / "deep" / Path(link).name
    (tmp_path / link).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / link).symlink_to(elsewhere)
    before = tree(tmp_path)
    where = ["--project", str(tmp_path / "proj")]
    if agent == "codex":
        where = ["--codex-home", str(tmp_path / "codex")]
    assert main(["init", agent, "--thread", "t", *where]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("Error: cannot write "), err
    assert f"{tmp_path / link} is a symbolic link to {elsewhere}, which does not exist" in err
    assert f"create that {kind} or remove the link, then run this again" in err
    assert tree(tmp_path) == before
    assert not (tmp_path / "outside").exists()


@pytest.mark.parametrize(
    ("agent", "link", "target"),
    [
        ("claude-code", ".mcp.json", "home/.claude.json"),
        ("claude-code", ".claude", "home/.claude"),
        ("codex", ".codex", "home/.codex"),
        ("codex", ".codex/config.toml", "home/.codex/config.toml"),
    ],
)
def test_a_cloned_project_s_link_out_of_it_is_refused_not_written_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, link: str, target: str
) -> None:
    """A repository may ship its agent settings as links to the user's own: init wrote
    taskloom's MCP server and hooks into the file every other project's agent reads."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".codex").mkdir()
    (home / ".claude.json").write_text('{"mcpServers": {}}\n')
    (home / ".claude" / "settings.json").write_text("{}\n")
    (home / ".codex" / "config.toml").write_text('model = "o4-mini"\n')
    (home / ".codex" / "hooks.json").write_text("{}\n")
    project = tmp_path / "proj"
    (project / Path(link).parent).mkdir(parents=True, exist_ok=True)
    (project / link).symlink_to(tmp_path / target)
    before = tree(home)
    assert main(["init", agent, "--thread", "t", "--project", str(project)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: cannot write "), err
    assert "outside the project" in err
    assert tree(home) == before
