"""``taskloom tasks work`` with commands that misbehave: what they leave in the task, and
what the worker tells, is the failure without a credential in it."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main
from taskloom.cli.work import STDERR_TAIL_BYTES


def work(capsys: pytest.CaptureFixture[str], db: str, *args: str) -> tuple[int, str, str]:
    code = main(["tasks", "work", "--db", db, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_credential_split_by_the_cut_of_stderr_is_not_kept_as_its_end(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the end of standard error is kept: when the cut falls inside a token, the rest of
    that line goes too, since a token's end alone is not recognized as one."""
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("leaks", max_attempts=1)
    secret = "ghp_" + "q" * 36
    filler = "x" * (STDERR_TAIL_BYTES - 20) + "\n"  # the cut falls 20 bytes into the token
    script = f"import sys; sys.stderr.write('a\\nGITHUB_TOKEN={secret}\\n' + {filler!r}); exit(2)"
    code, out, _ = work(capsys, sqlite_url, "--agent", "w1", "--until-empty", "--",
                        sys.executable, "-c", script)  # fmt: skip
    assert code == 4
    error = tl.queue.get(task.id).last_error or ""
    assert error.startswith("exit 2: …\nxxx") and error.endswith("x"), error[:80]
    assert "q" * 8 not in error and "q" * 8 not in out
    tl.close()


def test_a_short_stderr_is_kept_whole(sqlite_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("fails", max_attempts=1)
    text = "y" * (STDERR_TAIL_BYTES - 1)
    script = f"import sys; sys.stderr.write({text!r}); exit(1)"
    code, _, _ = work(capsys, sqlite_url, "--agent", "w1", "--until-empty", "--",
                      sys.executable, "-c", script)  # fmt: skip
    assert code == 4 and tl.queue.get(task.id).last_error == f"exit 1: {text}"
    tl.close()


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("#!/no/such/interpreter\necho hi\n", "the interpreter on its #! line is missing: "
         "/no/such/interpreter"),
        ("echo no shebang\n", "Exec format error"),
    ],
)  # fmt: skip
def test_a_command_that_cannot_start_gives_its_task_back_and_stops_the_worker(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, why: str
) -> None:
    """It passes the check before the first claim (an executable file), but no task can
    succeed with it: failing each task it claims would leave the whole queue dead."""
    tl = taskloom.connect(db_url)
    first, _ = tl.queue.add("first", priority=1)
    second, _ = tl.queue.add("second", priority=2)
    script = tmp_path / "review.sh"
    script.write_text(content)
    script.chmod(0o755)
    code, out, err = work(capsys, db_url, "--agent", "w1", "--until-empty", "--", str(script))
    assert code == 1
    assert f"Error: could not run {script}: {why} (its task was given back" in err
    assert out == f"{first.id}  first  given back unfinished\n"
    for task in (first, second):
        kept = tl.queue.get(task.id)
        assert (kept.status, kept.attempts, kept.last_error) == ("ready", 0, None)
    tl.close()


def test_a_command_whose_lease_is_lost_is_stopped_and_its_result_not_recorded(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The task is canceled while its command runs: the next renewal finds the lease gone,
    the command (and its child) is stopped, and nothing it would print is recorded."""
    from tests.test_worker_cli import child_pid, stopped

    tl = taskloom.connect(db_url)
    task, _ = tl.queue.add("withdrawn", max_attempts=1)
    pidfile = tmp_path / "child.pid"
    script = f"sleep 60 & echo $! > {pidfile}.part && mv {pidfile}.part {pidfile}; wait; echo late"
    seen: dict[str, bool] = {}

    def cancel_then_watch() -> None:
        pid = child_pid(pidfile)
        tl.queue.cancel(task.id, "no longer wanted")
        seen["stopped"] = stopped(pid, within=30.0)
        if not seen["stopped"]:
            os.kill(pid, signal.SIGKILL)

    watcher = threading.Thread(target=cancel_then_watch)
    watcher.start()
    try:
        code, out, _ = work(capsys, db_url, "--agent", "w1", "--until-empty", "--lease", "1",
                            "--timeout", "120", "--", "sh", "-c", script)  # fmt: skip
    finally:
        watcher.join()
    assert seen == {"stopped": True}
    assert code == 4 and "lease was lost" in out
    kept = tl.queue.get(task.id)
    assert (kept.status, kept.result) == ("canceled", "no longer wanted")
    tl.close()


def test_a_flag_the_worker_refuses_is_refused_before_the_database_is_opened(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A usage error comes alone: no ``database:`` line announcing a database the worker
    will not use, and nothing claimed."""
    tl = taskloom.connect(db_url)
    task, _ = tl.queue.add("untouched")
    for flags, said in [
        (("--kind", "Review"), "Error: invalid task kind 'Review'"),
        (("--retry-delay", "-1"), "Error: --retry-delay must be at least 0 seconds"),
    ]:
        code, out, err = work(capsys, db_url, "--agent", "w1", "--until-empty", *flags, "--",
                              "true")  # fmt: skip
        assert (code, out) == (1, "")
        assert err.startswith(said) and "database:" not in err, err
    assert tl.queue.get(task.id).status == "ready"
    tl.close()


def test_a_failure_with_a_long_stderr_is_told_on_one_line_per_task(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Standard output is a line per task: a stderr of many lines is told by its exit
    status and its last line, and kept whole in the task."""
    tl = taskloom.connect(db_url)
    first, _ = tl.queue.add("first", priority=1, max_attempts=1)
    second, _ = tl.queue.add("second", priority=2, max_attempts=1)
    script = (
        "import sys; sys.stderr.write('log one\\r\\nlog two\\n\\nthe reason: no good\\n'); exit(3)"
    )
    code, out, _ = work(capsys, db_url, "--agent", "w1", "--until-empty", "--",
                        sys.executable, "-c", script)  # fmt: skip
    assert code == 4
    told = "failed, dead (no attempts left): exit 3: log one … the reason: no good"
    assert out.splitlines() == [f"{first.id}  first  {told}", f"{second.id}  second  {told}"]
    kept = tl.queue.get(first.id).last_error
    assert kept == "exit 3: log one\r\nlog two\n\nthe reason: no good"
    tl.close()


def test_json_lines_on_a_terminal_stay_json_with_controls_in_a_title(
    db_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal a C1 control or a bidi override is shown, not obeyed: in a JSON line as
    a ``\\uNNNN`` escape, which JSON reads back as the title, never as ``\\x9b``, which no
    JSON reader takes."""
    from taskloom.cli import common

    tl = taskloom.connect(db_url)
    title = "invoice\u202etxt.exe \u009b2J"
    task, _ = tl.queue.add(title)
    monkeypatch.setattr(common.out, "_force_terminal", True)
    code, out, _ = work(capsys, db_url, "--agent", "w1", "--until-empty", "--json", "--",
                        "echo", "done")  # fmt: skip
    assert code == 0
    shown = json.loads(out)
    assert (shown["task_id"], shown["title"], shown["detail"]) == (task.id, title, "done")
    assert "\u202e" not in out and "\u009b" not in out
    tl.close()
