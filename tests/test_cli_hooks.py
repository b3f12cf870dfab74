"""``taskloom hook …`` as a coding agent runs it: one line on an error, never the status that
blocks the user's prompt."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main
from tests.conftest import subprocess_env


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


def test_a_hook_run_in_a_deleted_folder_answers_without_a_traceback(tmp_path: Path) -> None:
    """A session whose working folder was removed (a worktree deleted under it) ran every
    hook into a FileNotFoundError traceback, the absolute ``--db`` that ``taskloom init``
    writes notwithstanding. With a URL the hook answers as usual; without one, one
    ``Error:`` line and exit 1."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    with taskloom.connect(db) as tl:
        tl.queue.add("Review PR 12")
    gone = tmp_path / "gone"
    hook = [sys.executable, "-m", "taskloom", "hook"]
    for args, code, out in [
        (["session-start", "--agent", "a", "--db", db], 0, "1 task ready"),
        (["prompt", "--agent", "a", "--db", db], 0, "Review PR 12"),
        (["session-start", "--agent", "a"], 1, ""),
    ]:
        gone.mkdir()
        line = f"cd {shlex.quote(str(gone))} && rmdir {shlex.quote(str(gone))} && exec "
        done = subprocess.run(
            ["sh", "-c", line + shlex.join([*hook, *args])],
            capture_output=True,
            text=True,
            env=subprocess_env(),
            timeout=60,
        )
        assert done.returncode == code and out in done.stdout, done.stderr
        assert "Traceback" not in done.stderr
        if code:
            assert done.stdout == "" and done.stderr.count("\n") == 1
            assert done.stderr.startswith("Error: the working folder no longer exists")


def _send_event(args: list[str], event: dict[str, object]) -> tuple[OSError | None, str, str]:
    """Run ``taskloom hook …`` as an agent does: the event written to its stdin, then stdin
    closed; the error the write met, if any, and what the hook printed."""
    payload = json.dumps(event).encode()
    hook = subprocess.Popen(
        [sys.executable, "-m", "taskloom", "hook", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=subprocess_env(),
    )
    assert hook.stdin is not None
    failed: OSError | None = None
    try:
        written = 0
        while written < len(payload):
            written += os.write(hook.stdin.fileno(), payload[written : written + (1 << 16)])
    except OSError as exc:  # BrokenPipeError: the hook exited with the event unread
        failed = exc
    hook.stdin.close()
    hook.stdin = None
    out, err = hook.communicate(timeout=60)
    assert hook.returncode == 0, err
    return failed, out.decode(), err.decode()


def test_a_hook_reads_a_long_prompt_the_agent_sends(tmp_path: Path) -> None:
    """A prompt pasted whole (a log, a file) makes an event larger than a pipe holds: the
    hooks exited without reading it, so the agent's write failed (EPIPE) and the agent
    reported the hook as failed, its block lost with the queue's cursor moved past it."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    with taskloom.connect(db) as tl:
        tl.queue.add("Review PR 12")
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "x" * 1_000_000}
    failed, out, _ = _send_event(["prompt", "--agent", "a", "--mcp", "--db", db], prompt)
    assert failed is None
    shown = json.loads(out)["hookSpecificOutput"]
    assert (
        shown["hookEventName"] == "UserPromptSubmit"
        and "Review PR 12" in shown["additionalContext"]
    )
    start = {"hook_event_name": "SessionStart", "session_id": "s", "source": "x" * 1_000_000}
    failed, out, _ = _send_event(["session-start", "--agent", "b", "--db", db], start)
    assert failed is None and "1 task ready" in out
