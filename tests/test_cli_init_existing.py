"""``taskloom init`` on config files as users have them: what is theirs stays as it was, and
a second run changes nothing."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

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


def test_a_taskloom_entry_set_up_otherwise_is_replaced_and_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The entries of an earlier setup (another thread, agent, database) were replaced with
    no word: the user learnt of it when the agent worked on another queue. A password in the
    old URL stays masked."""
    (tmp_path / ".claude").mkdir()
    old_db = "postgresql://me:s3cret@db/q"
    server = {"command": "taskloom", "args": ["mcp", "--thread", "old", "--db", old_db]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"taskloom": server}}))
    hook = {"type": "command", "command": "taskloom hook session-start --agent old"}
    settings = {"hooks": {"SessionStart": [{"hooks": [hook]}]}}
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(settings))
    twice("claude-code", "--project", str(tmp_path))
    err = capsys.readouterr().err
    assert err.count("replaced taskloom's") == 2, err
    assert (
        f"{tmp_path / '.mcp.json'}: replaced taskloom's MCP server `taskloom mcp --thread old"
        " --db 'postgresql://me:***@db/q'` with `taskloom mcp --thread t --agent claude-code"
        f" --db {DB}`"
    ) in err
    assert "SessionStart hook `taskloom hook session-start --agent old` with" in err
    assert "s3cret" not in err


def test_a_first_setup_says_nothing_was_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    twice("claude-code", "--project", str(tmp_path))
    assert "replaced" not in capsys.readouterr().err


CONFIG = """\
# my Codex config
model = "o3"  # the model

[mcp_servers.taskloom]
# taskloom, for the shop
command = "taskloom"
args = [
  "mcp",  # the server
  "--thread", "old",
]
env = { TASKLOOM_URL = "sqlite:////srv/old.db" }  # kept

[[profiles]]
name = "fast"
"""


def test_an_args_array_over_several_lines_is_rewritten_in_place(tmp_path: Path) -> None:
    """A taskloom table whose ``args`` spanned lines was refused ("in a shape taskloom does
    not rewrite"): only the first line of the array was replaced, and the rest no longer
    parsed. The keys are rewritten where they are, the comments and other keys around them
    kept."""
    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    twice("codex", "--codex-home", str(home))
    args = ", ".join(f'"{a}"' for a in ["mcp", "--thread", "t", "--agent", "codex", "--db", DB])
    assert (home / "config.toml").read_text() == CONFIG.replace(
        'command = "taskloom"\nargs = [\n  "mcp",  # the server\n  "--thread", "old",\n]\n',
        f'command = "taskloom"\nargs = [{args}]\n',
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{\n  "mcpServers": {},\n  // mine\n  "x": 1\n}\n', "has a comment at line 3"),
        ('{"a": "http://x", /* mine */ "b": 2}', "has a comment at line 1"),
        ('{\n  "a": "//",\n  "b": [1,\n    2,\n  ]\n}', "has a trailing comma at line 4"),
    ],
)
def test_json_with_comments_is_refused_by_where_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    """A settings file with comments (JSONC) was refused as "Expecting value", with no word
    of the comment nor that rewriting the file would lose it."""
    (tmp_path / ".mcp.json").write_text(text)
    assert init("claude-code", "--project", str(tmp_path)) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"Error: {tmp_path / '.mcp.json'} {said}: taskloom does not rewrite")
    assert (tmp_path / ".mcp.json").read_text() == text
    assert not (tmp_path / ".claude").exists()


def test_a_file_changed_while_it_is_merged_is_left_as_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The merge of the file as read replaced it, and what was saved meanwhile was lost."""
    import tempfile

    mcp = tmp_path / ".mcp.json"
    mcp.write_text("{}")
    real = tempfile.mkstemp

    def someone_saves(*args: Any, **kwargs: Any) -> tuple[int, str]:
        mcp.write_text('{"saved": "meanwhile"}')
        return real(*args, **kwargs)

    monkeypatch.setattr("taskloom.cli.init.tempfile.mkstemp", someone_saves)
    assert init("claude-code", "--project", str(tmp_path)) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"Error: {mcp} changed while taskloom was merging it: nothing was")
    assert mcp.read_text() == '{"saved": "meanwhile"}'
    assert [p.name for p in tmp_path.iterdir()] == [".mcp.json"]  # no temp file left


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_rerun_for_another_agent_keeps_what_the_user_set_on_taskloom_s_hooks(
    tmp_path: Path, agent: str
) -> None:
    """Running init again with another ``--agent`` dropped taskloom's hook and added a new
    one: a ``timeout`` the user had given it was lost, and its group (``matcher`` and the
    user's hook beside it) was split."""
    assert init(agent, "--agent", "a1", "--project", str(tmp_path)) == 0
    path = tmp_path / (".claude/settings.json" if agent == "claude-code" else ".codex/hooks.json")
    settings = json.loads(path.read_text())
    prompt = settings["hooks"]["UserPromptSubmit"]
    prompt[0]["matcher"] = "*"
    prompt[0]["hooks"][0]["timeout"] = 7
    prompt[0]["hooks"].append({"type": "command", "command": "echo mine"})
    prompt.insert(0, {"hooks": [{"type": "command", "command": "echo first"}]})
    path.write_text(json.dumps(settings, indent=2))

    assert init(agent, "--agent", "a2", "--project", str(tmp_path)) == 0
    prompt = json.loads(path.read_text())["hooks"]["UserPromptSubmit"]
    command = f"taskloom hook prompt --agent a2 --db {DB} --mcp"
    assert prompt == [
        {"hooks": [{"type": "command", "command": "echo first"}]},
        {
            "hooks": [
                {"type": "command", "command": command, "timeout": 7},
                {"type": "command", "command": "echo mine"},
            ],
            "matcher": "*",
        },
    ]
    starts = json.loads(path.read_text())["hooks"]["SessionStart"]
    assert [h["command"] for g in starts for h in g["hooks"]] == [
        f"taskloom hook session-start --agent a2 --db {DB}"
    ]


def test_a_second_taskloom_hook_for_one_event_is_dropped(tmp_path: Path) -> None:
    """Hooks pasted twice by hand: the first is rewritten where it is, the other dropped."""
    (tmp_path / ".claude").mkdir()
    twin = {"type": "command", "command": "taskloom hook prompt --agent old"}
    settings = {"hooks": {"UserPromptSubmit": [{"hooks": [twin]}, {"hooks": [twin, twin]}]}}
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(settings))
    assert init("claude-code", "--agent", "a2", "--project", str(tmp_path)) == 0
    written = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert written["hooks"]["UserPromptSubmit"] == [
        {
            "hooks": [
                {"type": "command", "command": f"taskloom hook prompt --agent a2 --db {DB} --mcp"}
            ]
        }
    ]
