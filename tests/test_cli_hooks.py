"""``taskloom hook …`` as a coding agent runs it: one line on an error, never the status that
blocks the user's prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskloom.cli import main


@pytest.mark.parametrize(
    "args",
    [
        ["hook", "prompt", "--agent", "a", "--mcp", "--from-a-newer-taskloom"],
        ["hook", "prompt"],
        ["hook", "no-such-hook", "--agent", "a"],
        ["hook", "session-start", "--agent", "a", "--json", "extra"],
    ],
)
def test_a_hook_command_line_this_taskloom_does_not_take_is_an_error_not_a_block(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 from a prompt hook tells Claude Code and Codex to block the prompt: a settings
    file a newer taskloom wrote, run by an older one, dropped every prompt the user typed."""
    code = main([*args, "--db", f"sqlite:///{tmp_path / 'q.db'}"])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    assert "see taskloom hook --help" in err


def test_a_hook_that_runs_still_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    assert main(["hook", "session-start", "--agent", "a", "--db", db]) == 0
    assert "no tasks ready" in capsys.readouterr().out
    assert main(["hook", "prompt", "--agent", "a", "--db", db, "--mcp"]) == 0


def test_other_commands_keep_the_usage_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "list", "--no-such-option"]) == 2
