"""Output that cannot be written or read as sent: one ``Error:`` line, and nothing handed
out (a claimed task, a hook's block) that nobody received."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import taskloom.cli.common
from taskloom.cli import main
from tests.conftest import subprocess_env

FULL = "/dev/full"


def run(*args: str, stdout: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """``taskloom ARGS``, its output into the file ``stdout`` (``>&-`` for closed)."""
    command = [sys.executable, "-m", "taskloom", *args]
    if stdout == ">&-":
        command = ["sh", "-c", 'exec "$@" >&-', "sh", *command]
    elif stdout is not None:
        command = ["sh", "-c", f'exec "$@" > {stdout}', "sh", *command]
    return subprocess.run(
        command, capture_output=True, text=True, env={**subprocess_env(), **env}, timeout=60
    )


def refused(proc: subprocess.CompletedProcess[str], message: str) -> bool:
    assert "Traceback" not in proc.stderr, proc.stderr
    return (proc.returncode, proc.stderr) == (1, f"Error: {message}\n")


def test_a_full_disk_is_one_error_line_for_any_command_and_help(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    for args in (("board", "add", "t1", "hello", "--db", db), ("--help",), ("tasks", "--help")):
        proc = run(*args, stdout=FULL)
        assert refused(proc, "cannot write the output: No space left on device"), args
    assert "hello" in run("board", "list", "t1", "--db", db).stdout  # the work was saved


@pytest.mark.parametrize("stdout", [">&-", FULL])
def test_a_hook_block_not_delivered_is_shown_again(tmp_path: Path, stdout: str) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert run("tasks", "add", "Review PR 12", "--db", db).returncode == 0
    failed = run("hook", "prompt", "--agent", "coder", "--db", db, stdout=stdout)
    assert failed.returncode == 1 and failed.stderr.startswith("Error: cannot write the output")
    shown = run("hook", "prompt", "--agent", "coder", "--db", db)
    context = json.loads(shown.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Review PR 12" in context
    assert run("hook", "prompt", "--agent", "coder", "--db", db).stdout == ""  # now seen


@pytest.mark.parametrize("stdout", [">&-", FULL])
@pytest.mark.parametrize("as_json", [(), ("--json",)])
def test_a_claim_whose_token_was_not_printed_is_released(
    tmp_path: Path, stdout: str, as_json: tuple[str, ...]
) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert run("tasks", "add", "Review PR 12", "--db", db).returncode == 0
    failed = run("tasks", "next", "--agent", "coder", "--db", db, *as_json, stdout=stdout)
    assert failed.returncode == 1 and failed.stderr.startswith("Error: cannot write the output")
    task = json.loads(run("tasks", "list", "--db", db, "--json").stdout)[0]
    assert (task["status"], task["attempts"]) == ("ready", 0)


def test_json_is_valid_json_on_a_stdout_that_is_not_utf8(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    title = "party \U0001f389 \xfc"
    assert run("tasks", "add", title, "--db", db).returncode == 0
    listed = run("tasks", "list", "--db", db, "--json", PYTHONIOENCODING="ascii")
    assert json.loads(listed.stdout)[0]["title"] == title
    hook = run("hook", "prompt", "--agent", "coder", "--db", db, PYTHONIOENCODING="latin-1")
    assert title in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]


def test_add_many_reads_a_file_no_larger_than_stdin_may_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(taskloom.cli.common, "MAX_STDIN_BYTES", 40)
    plan = tmp_path / "plan.jsonl"
    plan.write_text('{"title": "one"}\n{"title": "two"}\n{"title": "three"}\n')
    db = ("--db", f"sqlite:///{tmp_path / 'cli.db'}")
    assert main(["tasks", "add-many", str(plan), *db]) == 1
    assert capsys.readouterr().err == f"Error: cannot read {plan}: it holds more than 40 bytes\n"
    plan.write_text('{"title": "one"}\n{"title": "two"}\n')  # 34 bytes: read
    assert main(["tasks", "add-many", str(plan), *db]) == 0


def test_empty_dedup_status_and_agent_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'cli.db'}")
    for key in ("", "  "):
        assert main(["tasks", "add", "Review", "--dedup", key, *db]) == 1
        assert capsys.readouterr().err == "Error: --dedup, when given, must not be empty\n"
    for blank in ("", "  "):
        assert main(["tasks", "list", "--status", blank, *db]) == 1
        err = capsys.readouterr().err
        assert err.startswith("Error: --status, when given, must not be empty (one of: ready,")
    for blank in ("", "  "):  # an unset $AGENT listed all
        assert main(["tasks", "list", "--agent", blank, *db]) == 1
        assert capsys.readouterr().err == "Error: --agent, when given, must not be empty\n"
    assert main(["tasks", "add", "Review", "--dedup", "k", *db]) == 0
