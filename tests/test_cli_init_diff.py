"""``taskloom init`` leaves a minimal diff: only taskloom's entries change, every other byte
of the user's file stays as written."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from taskloom.cli import main
from taskloom.cli.json_text import rewrite

DB = "sqlite:////srv/queue.db"

SETTINGS = """\
{
    "permissions": {"allow": ["Bash(ls:*)", "Read"]},
    "model": "opus",
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    },
    "env": {
        "A": "1"
    }
}"""


@pytest.fixture(autouse=True)
def taskloom_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("taskloom.cli.agent_setup.program", lambda: "taskloom")


def init(project: Path, db: str = DB) -> None:
    args = ["init", "claude-code", "--thread", "t", "--project", str(project), "--db", db]
    assert main(args) == 0


def changed_lines(before: str, after: str) -> list[str]:
    """The lines of ``before`` that ``after`` does not keep as they were."""
    diff = difflib.ndiff(before.splitlines(keepends=True), after.splitlines(keepends=True))
    return [line[2:] for line in diff if line.startswith("- ")]


def test_a_settings_file_keeps_its_layout_and_only_gains_taskloom_s_lines(
    tmp_path: Path,
) -> None:
    """The whole file came back re-indented by the standard dump: one-line arrays and objects
    spread over many lines, a final newline added where there was none."""
    (tmp_path / ".claude").mkdir()
    settings = tmp_path / ".claude" / "settings.json"
    settings.write_text(SETTINGS)
    init(tmp_path)
    first = settings.read_text()
    assert changed_lines(SETTINGS, first) == [
        '        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]\n'
    ]  # it gains a comma, nothing more
    assert '"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],' in first
    assert '\n        "UserPromptSubmit": [\n            {\n' in first  # in the file's indent
    assert not first.endswith("\n")
    data = json.loads(first)
    assert list(data) == ["permissions", "model", "hooks", "env"]
    assert list(data["hooks"]) == ["Stop", "UserPromptSubmit", "SessionStart"]

    init(tmp_path, "sqlite:////srv/other.db")  # set up again: only the commands change
    second = settings.read_text()
    assert [line.strip() for line in changed_lines(first, second)] == [
        f'"command": "taskloom hook prompt --agent claude-code --db {DB} --mcp"',
        f'"command": "taskloom hook session-start --agent claude-code --db {DB}"',
    ]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('{"a":1}', '{"a":1, "b": [1, {"c": 2}]}'),
        ('{"a":1}\n', '{"a":1, "b": [1, {"c": 2}]}\n'),
        ("{}", '{\n  "b": [\n    1,\n    {\n      "c": 2\n    }\n  ]\n}'),
        ("", '{\n  "b": [\n    1,\n    {\n      "c": 2\n    }\n  ]\n}\n'),
        (
            '{\r\n\t"a": 1,\r\n\t"b": [1]\r\n}\r\n',
            '{\r\n\t"a": 1,\r\n\t"b": [1, {"c": 2}]\r\n}\r\n',
        ),
        (
            '{\n  "a": 1,\n  "b": [\n    1\n  ]\n}',
            '{\n  "a": 1,\n  "b": [\n    1,\n    {\n      "c": 2\n    }\n  ]\n}',
        ),
        ('{"a": 1, "b": [0]}', '{"a": 1, "b": [1, {"c": 2}]}'),
        ('{"a": NaN}', '{"a": NaN, "b": [1, {"c": 2}]}'),
    ],
)
def test_a_value_is_added_or_rewritten_in_the_style_around_it(text: str, want: str) -> None:
    old = json.loads(text) if text else {}
    assert rewrite(text, old, {**old, "b": [1, {"c": 2}]}) == want


CONFIG = """\
# my Codex config
model = "o3"  # the model

[mcp_servers.taskloom]  # taskloom, for the shop
# which program
command = "taskloom" # keep me
args = [
  "mcp",
  "--thread", "old#1",
]   # its arguments
env = { TASKLOOM_LOG = "x#y" }  # kept
# end of taskloom's table

[mcp_servers.docs]
command = "docs-mcp"  # theirs
"""


def test_codex_keeps_the_comments_of_the_lines_it_rewrites(tmp_path: Path) -> None:
    """``command = "taskloom" # keep me`` came back ``command = "…"``: the comment after a
    rewritten value was dropped with it."""
    (tmp_path / "config.toml").write_text(CONFIG)
    args = ["init", "codex", "--thread", "t", "--codex-home", str(tmp_path), "--db", DB]
    assert main(args) == 0
    argv = ", ".join(f'"{a}"' for a in ["mcp", "--thread", "t", "--agent", "codex", "--db", DB])
    assert (tmp_path / "config.toml").read_text() == CONFIG.replace(
        'args = [\n  "mcp",\n  "--thread", "old#1",\n]   # its arguments\n',
        f"args = [{argv}]   # its arguments\n",
    )


def test_codex_adds_a_missing_key_after_the_one_there_in_a_table_named_by_a_literal_string(
    tmp_path: Path,
) -> None:
    """``[mcp_servers.'taskloom']`` was refused as a shape taskloom does not rewrite, and a
    missing ``args`` went above the ``command`` it follows, under the header."""
    (tmp_path / "config.toml").write_text(
        "[mcp_servers.'taskloom']\n# mine\ncommand = 'taskloom'  # bare\nenv = {}\n"
    )
    args = ["init", "codex", "--thread", "t", "--codex-home", str(tmp_path), "--db", DB]
    assert main(args) == 0
    argv = ", ".join(f'"{a}"' for a in ["mcp", "--thread", "t", "--agent", "codex", "--db", DB])
    assert (tmp_path / "config.toml").read_text() == (
        f"[mcp_servers.'taskloom']\n# mine\ncommand = \"taskloom\"  # bare\nargs = [{argv}]\n"
        "env = {}\n"
    )
