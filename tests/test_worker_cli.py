"""``taskloom tasks work``: a real command run on each task, from a real shell command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import taskloom
from taskloom.cli import main
from taskloom.domain.errors import CommandNotStarted
from tests.conftest import subprocess_env

HANDLER = textwrap.dedent(
    """
    import json, os, sys, time
    task = json.load(sys.stdin)
    if task["title"].startswith("fail"):
        sys.stderr.write("a long log\\n" * 3 + "the reason: no good\\n")
        sys.exit(3)
    if task["title"].startswith("sleep"):
        time.sleep(60)
    print(f"handled {task['title']} {os.environ['TASKLOOM_TASK_ID'] == task['id']}"
          f" attempt {os.environ['TASKLOOM_TASK_ATTEMPT']} {task['lease_token']}")
    """
)


@pytest.fixture
def handler(tmp_path: Path) -> list[str]:
    script = tmp_path / "handler.py"
    script.write_text(HANDLER)
    return [sys.executable, str(script)]


def work(capsys: pytest.CaptureFixture[str], db: str, *args: str) -> tuple[int, str, str]:
    code = main(["tasks", "work", "--db", db, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_each_task_is_run_through_the_command(
    sqlite_url: str, handler: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    tl = taskloom.connect(sqlite_url)
    ok, _ = tl.queue.add("ok <b>", priority=1)
    bad, _ = tl.queue.add("fail me", priority=2, max_attempts=1)
    code, out, err = work(capsys, sqlite_url, "--agent", "w1", "--until-empty", "--", *handler)
    assert code == 4  # a task failed
    done = tl.queue.get(ok.id)
    # The task arrived as JSON on stdin, its id in the environment, and no lease token.
    assert done.status == "completed" and done.result == "handled ok <b> True attempt 1 None"
    dead = tl.queue.get(bad.id)
    assert dead.status == "dead" and (dead.last_error or "").startswith("exit 3: a long log")
    assert (dead.last_error or "").endswith("the reason: no good")
    assert f"{ok.id}  ok <b>  completed in" in out
    assert f"{bad.id}  fail me  failed, dead (no attempts left): exit 3" in out
    assert "1 completed, 0 failed (to retry), 1 dead" in err
    assert f"{ok.id}  ok <b>  started (attempt 1 of 3)" in err
    assert f"{bad.id}  fail me  started (attempt 1 of 1)" in err


def test_a_failure_held_back_by_a_retry_delay_says_until_when(
    sqlite_url: str, handler: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    tl = taskloom.connect(sqlite_url)
    flaky, _ = tl.queue.add("fail upstream")
    args = ("--agent", "w1", "--until-empty", "--retry-delay", "600", "--", *handler)
    code, out, err = work(capsys, sqlite_url, *args)
    held = tl.queue.get(flaky.id).to_dict()
    assert code == 4 and held["status"] == "ready" and held["not_before"]
    assert f"failed, back in the queue (not before {held['not_before']}): exit 3" in out
    assert "0 completed, 1 failed (to retry)" in err
    code, out, _ = work(capsys, sqlite_url, *args)  # nothing to claim for ten minutes
    assert code == 0 and out == ""
    tl.close()


def test_json_lines_and_a_clean_exit(
    sqlite_url: str, handler: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    tl = taskloom.connect(sqlite_url)
    for n in range(3):
        tl.queue.add(f"job {n}", priority=n)
    code, out, _ = work(
        capsys, sqlite_url, "--agent", "w1", "--max-tasks", "2", "--json", "--", *handler
    )
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(d["title"], d["outcome"]) for d in lines] == [
        ("job 0", "completed"),
        ("job 1", "completed"),
    ]
    assert lines[0]["detail"] == "handled job 0 True attempt 1 None"
    assert [t.title for t in tl.queue.list(status="ready")] == ["job 2"]


def test_a_timeout_kills_the_command_and_fails_the_task(
    sqlite_url: str, handler: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("sleep long", max_attempts=1)
    started = time.monotonic()
    code, _, _ = work(
        capsys, sqlite_url, "--agent", "w1", "--until-empty", "--timeout", "0.5", "--", *handler
    )
    assert code == 4 and time.monotonic() - started < 30
    assert tl.queue.get(task.id).last_error == "timed out after 0.5 s (killed)"


def test_a_missing_command_claims_nothing(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("waiting")
    code, _, err = work(capsys, sqlite_url, "--agent", "w1", "--", "no-such-command-here")
    assert code == 1 and "command not found: no-such-command-here" in err
    assert tl.queue.get(task.id).attempts == 0
    code, _, err = work(capsys, sqlite_url, "--agent", "w1", "--lease", "0", "--", "true")
    assert code == 1 and "--lease" in err


def test_a_script_that_cannot_run_says_why_and_claims_nothing(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A script without its executable bit, or a directory, was "command not found"."""
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("waiting")
    script = tmp_path / "review.sh"
    script.write_text("#!/bin/sh\necho ok\n")
    for program, why in ((script, "is not executable (chmod +x it)"), (tmp_path, "is a directory")):
        code, _, err = work(capsys, sqlite_url, "--agent", "w1", "--", str(program))
        assert code == 1 and err == f"Error: {program} {why} (nothing was claimed)\n", err
    assert tl.queue.get(task.id).attempts == 0


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a killed process not yet reaped by its parent does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def stopped(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` has stopped, or stops within ``within`` seconds: a killed process ends
    when it next runs, which on a loaded machine is not at once. A process left running
    (``sleep 60``) still fails this."""
    deadline = time.monotonic() + within
    while running(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def child_pid(pidfile: Path) -> int:
    deadline = time.monotonic() + 60
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline, "the command never started its child"
        time.sleep(0.05)
    return int(pidfile.read_text())


def work_in_shell(capsys: pytest.CaptureFixture[str], db: str, script: str, timeout: str) -> int:
    """``tasks work --until-empty --timeout`` running ``sh -c script``: its exit status."""
    args = ("--agent", "w1", "--until-empty", "--timeout", timeout, "--", "sh", "-c", script)
    return work(capsys, db, *args)[0]


def test_a_timeout_stops_the_commands_children_too(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A killed shell's ``sleep`` went on (its parent now init) while the task was failed."""
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("spawns", max_attempts=1)
    pidfile = tmp_path / "child.pid"
    script = f"sleep 60 & echo $! > {pidfile}; wait"
    code = work_in_shell(capsys, sqlite_url, script, timeout="3")
    assert code == 4 and tl.queue.get(task.id).last_error == "timed out after 3 s (killed)"
    assert stopped(child_pid(pidfile))


def test_a_background_job_holding_the_output_does_not_hold_the_task(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command's exit decides: it exited 0 at once, and the job it left behind (still
    holding stdout) no longer keeps the task waiting, nor fails it under a timeout."""
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("leaves a job")
    pidfile = tmp_path / "child.pid"
    script = f"sleep 60 & echo $! > {pidfile}; echo started"
    code = work_in_shell(capsys, sqlite_url, script, timeout="20")
    done = tl.queue.get(task.id)
    assert code == 0 and done.status == "completed" and done.result == "started"
    assert stopped(child_pid(pidfile))


def test_only_the_kept_part_of_a_commands_output_is_held() -> None:
    """A command printing 64 MiB: the worker keeps the head of stdout and the tail of stderr
    (it held all of it, twice over, while reading)."""
    from taskloom.cli import task_command

    code = (
        "import sys; sys.stdout.write('o' * (64 << 20)); sys.stderr.write('e' * (8 << 20) + 'end')"
    )
    done = task_command.run([sys.executable, "-c", code], b"", {}, 60, 100, 10)
    assert done == (0, b"o" * 100, b"e" * 7 + b"end")


@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["TERM", "HUP"]
)
def test_sigterm_or_a_hangup_gives_the_running_task_back_and_stops_the_command(
    sqlite_url: str, tmp_path: Path, signum: signal.Signals, status: int
) -> None:
    """Its children too: a shell's ``sleep`` went on working on a task given back. A hangup
    (the worker's terminal closed) killed the worker outright, and its task stayed held by
    no one until its lease ran out."""
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("sleep until stopped")
    pidfile = tmp_path / "child.pid"
    script = f"sleep 60 & echo $! > {pidfile}; wait"
    args = ["tasks", "work", "--db", sqlite_url, "--agent", "w1", "--", "sh", "-c", script]
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskloom", *args],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while tl.queue.get(task.id).status != "in_progress" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tl.queue.get(task.id).status == "in_progress"
        child = child_pid(pidfile)  # the command is running, its child started
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == status
    assert "Interrupted: 0 completed, 0 failed (to retry), 1 given back." in err.decode()
    back = tl.queue.get(task.id)
    assert back.status == "ready" and back.attempts == 0
    assert stopped(child)


@pytest.mark.parametrize("when", ["as Popen returns", "as the output readers start"])
def test_an_interrupt_while_the_command_is_starting_still_stops_it(
    when: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C arriving after the command's fork but before the worker waited for it left the
    command running on a task given back (CI caught it under load, as the readers started)."""
    from taskloom.cli import task_command

    started: list[subprocess.Popen[bytes]] = []
    fired: list[str] = []
    real_popen, real_thread = subprocess.Popen, task_command._thread

    def ctrl_c(at: str) -> None:
        if at == when and not fired:
            fired.append(at)
            os.kill(os.getpid(), signal.SIGINT)  # a real one, handled in this, the main thread

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        started.append(real_popen(*args, **kwargs))
        ctrl_c("as Popen returns")  # the child runs; the worker does not know it yet
        return started[-1]

    def thread(target: Any, *args: object) -> Any:
        ctrl_c("as the output readers start")
        return real_thread(target, *args)

    monkeypatch.setattr(task_command.subprocess, "Popen", popen)
    monkeypatch.setattr(task_command, "_thread", thread)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)  # `cmd &` ignores it
    try:
        with task_command.stopping_on_signals(), pytest.raises(KeyboardInterrupt, match="SIGINT"):
            task_command.run(["/bin/sleep", "60"], b"", {}, None, 10, 10)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # given back
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert fired == [when] and len(started) == 1
    assert stopped(started[0].pid)


def test_a_signal_the_worker_was_started_ignoring_stays_ignored() -> None:
    from taskloom.cli import task_command

    inherited = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with task_command.stopping_on_signals():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # handled
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGINT, inherited)


def test_work_runs_from_a_thread_other_than_the_main_one(
    sqlite_url: str, handler: list[str]
) -> None:
    import threading

    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("from a thread")
    codes: list[int] = []
    args = ["tasks", "work", "--db", sqlite_url, "--agent", "w1", "--until-empty", "--", *handler]
    thread = threading.Thread(target=lambda: codes.append(main(args)))
    thread.start()
    thread.join(timeout=120)
    assert codes == [0] and tl.queue.get(task.id).status == "completed"


def running_with(marker: str, programs: tuple[str, ...] = ("sh", "sleep")) -> list[int]:
    """The processes of ``programs`` running whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().decode().split("\0")
        except (OSError, UnicodeDecodeError):
            continue
        if Path(args[0]).name in programs and marker in " ".join(args) and running(int(entry.name)):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("script", ["sleep {n}", "sleep {n} & sleep {n}.5; wait"])
def test_a_killed_worker_takes_its_command_and_its_children_with_it(
    db_url: str, script: str
) -> None:
    """``kill -9`` on the worker left ``sh -c 'sleep 60'`` running (its parent now init) while
    its task was leased again: its side effects could happen twice. Both backends."""
    import random

    tl = taskloom.connect(db_url)
    task, _ = tl.queue.add("runs long")
    n = f"6{random.randrange(10**6, 10**7)}"  # a sleep no other process runs
    argv = ["tasks", "work", "--db", db_url, "--agent", "w1", "--", "sh", "-c"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskloom", *argv, script.format(n=n)],
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        sleeps = script.count("sleep")
        while len(running_with(n, ("sleep",))) < sleeps and time.monotonic() < deadline:
            time.sleep(0.05)
        started = running_with(n)  # the shell (unless it ran sleep in its place) and sleeps
        assert len(running_with(n, ("sleep",))) == sleeps
        assert tl.queue.get(task.id).status == "in_progress"
        proc.kill()
        proc.wait(30)
        assert all(stopped(pid) for pid in started), running_with(n)
    finally:
        proc.kill()
        for pid in running_with(n):  # what the old worker left behind
            os.kill(pid, signal.SIGKILL)
    tl.close()


def test_the_guard_reports_the_command_as_it_ended() -> None:
    """The command runs under a guard process: its exit status and the signal that killed it
    come back as they would without one, and a command that cannot start as NotStarted."""
    from taskloom.cli import task_command

    def ran(*argv: str) -> task_command.Finished:
        return task_command.run(list(argv), b"in", {}, 60, 100, 100)

    assert ran("sh", "-c", "cat; exit 7") == (7, b"in", b"")
    assert ran("sh", "-c", "kill -TERM $$").returncode == -signal.SIGTERM
    with pytest.raises(CommandNotStarted) as missing:
        ran("/no/such/program")
    assert str(missing.value) == "could not run /no/such/program: No such file or directory"
    assert ran("sh", "-c", "exit 127").returncode == 127  # the command's own 127 is its own
