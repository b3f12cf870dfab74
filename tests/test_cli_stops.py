"""How the CLI stops, in real processes: Ctrl-C is one line and exit 130, a reader that
leaves (``| head -1``) costs nothing, an empty file of tasks is said, and a task given back
says how long it was worked on."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main
from taskloom.queue.worker import Outcome, Worker
from tests.conftest import subprocess_env
from tests.test_cli import run, run_unread

TASKLOOM = [sys.executable, "-m", "taskloom"]


def interrupted(args: list[str], *, ready: str | None = None) -> subprocess.CompletedProcess[str]:
    """``taskloom ARGS`` stopped with Ctrl-C (SIGINT) once it prints ``ready`` on stderr
    (else once it had time to start and wait), its standard input left open."""
    proc = subprocess.Popen(
        [*TASKLOOM, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )
    assert proc.stderr is not None
    try:
        if ready is None:
            time.sleep(2.0)
        else:
            seen = ""
            while ready not in seen:
                line = proc.stderr.readline()
                assert line, f"exited before {ready!r}: {seen}"
                seen += line
            time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def test_ctrl_c_while_waiting_is_one_line_and_exit_130(tmp_path: Path) -> None:
    """``tasks wait`` and ``tasks add-many -`` (reading a pipe that never ends) exited 130
    without a word: Typer's silent exit. Now every command says it stopped."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    added = run("tasks", "add", "Build", "--db", db, "--json")
    task_id = json.loads(added.stdout)["id"]
    waited = interrupted(["tasks", "wait", task_id, "--db", db])
    assert waited.returncode == 130, waited.stderr
    assert waited.stderr.splitlines() == [
        f"Interrupted: stopped waiting; task {task_id} is not changed."
    ]
    reading = interrupted(["tasks", "add-many", "-", "--db", db])
    assert (reading.returncode, reading.stderr, reading.stdout) == (130, "Interrupted.\n", "")


def test_ctrl_c_in_any_command_is_the_one_line(
    sqlite_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One mechanism for every command (a queue read here), not a handler in each."""
    from taskloom.queue.handle import Queue

    def stuck(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Queue, "stats", stuck)
    assert main(["tasks", "stats", "--db", sqlite_url]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == "Interrupted."


def test_a_task_given_back_reports_the_time_spent_on_it(tmp_path: Path) -> None:
    """``tasks work --json`` said ``seconds: 0.0`` for the task it gave back at Ctrl-C."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    run("tasks", "add", "slow", "--db", db)
    args = ["tasks", "work", "--agent", "w1", "--json", "--db", db, "--", "sleep", "60"]
    done = interrupted(args, ready="started (attempt 1 of 3)")
    assert done.returncode == 130, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["outcome"] == "released"
    assert outcome["id"] == outcome["task_id"]  # ``id``, as every task object the CLI prints
    assert 0.9 <= outcome["seconds"] < 60
    last = done.stderr.splitlines()[-1]
    assert last == "Interrupted: 0 completed, 0 failed (to retry), 1 given back."


def test_the_worker_times_a_task_it_gives_back(sqlite_url: str) -> None:
    """The library's :class:`Outcome` too; a task never started is given back at 0 s."""
    with taskloom.connect(sqlite_url) as tl:
        tl.queue.add("slow")
        outcomes: list[Outcome] = []

        def handler(task: object) -> str:
            time.sleep(0.3)
            raise KeyboardInterrupt

        worker = Worker(tl.queue, "w1", handler, on_outcome=outcomes.append)
        with pytest.raises(KeyboardInterrupt):
            worker.run(until_empty=True)
        assert [o.kind for o in outcomes] == ["released"]
        assert 0.3 <= outcomes[0].seconds < 30


def test_help_and_listings_into_a_pipe_whose_reader_left_exit_0_quietly(tmp_path: Path) -> None:
    """``taskloom --help | head -1`` exited 1 (click's answer to a broken pipe). The
    contract: output nobody reads is dropped, the exit status is what it would have been."""
    for args in (["--help"], ["tasks", "--help"], ["tasks", "add", "--help"], ["--version"]):
        done = run_unread(*args)
        assert (done.returncode, done.stderr) == (0, ""), args
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    plan = tmp_path / "plan.jsonl"
    plan.write_text("".join(f'{{"title": "task {n} {"x" * 80}"}}\n' for n in range(2000)))
    assert run("tasks", "add-many", str(plan), "--db", db).returncode == 0
    command = " ".join(TASKLOOM)
    for listing in ("tasks list --limit 2000", "tasks list --limit 2000 --json", "--help"):
        # A real pipe into head: pipefail makes the pipeline's status the CLI's.
        done = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {command} {listing} --db '{db}' | head -1"]
            if listing != "--help"
            else ["bash", "-c", f"set -o pipefail; {command} --help | head -1"],
            capture_output=True,
            text=True,
            env=subprocess_env(),
            timeout=60,
        )
        assert (done.returncode, done.stderr) == (0, ""), listing
        assert len(done.stdout.splitlines()) == 1


@pytest.mark.parametrize(
    ("content", "as_stdin"),
    [("", False), ("\n\n  \n", False), ("[]", False), ("", True)],
    ids=["empty", "blank lines", "empty array", "empty stdin"],
)
@pytest.mark.parametrize("command", [["tasks", "add", "--from"], ["tasks", "add-many"]])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_file_without_tasks_is_an_error(
    tmp_path: Path, content: str, as_stdin: bool, command: list[str], as_json: bool
) -> None:
    """It added 0 tasks and exited 0 without a word: a script whose plan came out empty
    went on as if it had been queued."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    source = tmp_path / "plan.jsonl"
    source.write_text(content)
    args = [*command, "-" if as_stdin else str(source), "--db", db, *(["--json"] * as_json)]
    done = subprocess.run(
        [*TASKLOOM, *args],
        input=content,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    where = "standard input" if as_stdin else str(source)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"Error: no tasks in {where}: nothing was added\n"
    assert not (tmp_path / "cli.db").exists()


def test_output_that_must_arrive_still_fails_when_its_reader_left(tmp_path: Path) -> None:
    """A gone reader is dropped quietly by the guard around stdout now, but ``tasks next``,
    whose output is the claimed task's token, still exits 1 and gives the task back."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert run("tasks", "add", "one", "--db", db).returncode == 0
    for args in (["--agent", "w1"], ["--agent", "w1", "--json"]):
        done = run_unread("tasks", "next", *args, "--db", db)
        assert done.returncode == 1, args
        assert done.stderr == "Error: cannot write the output: its reader has gone\n"
    with taskloom.connect(db) as tl:
        assert [t.status for t in tl.queue.list()] == ["ready"]
