"""``taskloom tasks work`` ends what a command leaves running, detached or not, on Linux: its
guard is a child subreaper, so every orphan below it comes to it, and it ends them once the
command is over, however it ended."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main, task_command
from tests.conftest import subprocess_env
from tests.test_worker_cli import running, running_with, stopped

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


@pytest.fixture
def n() -> Iterator[str]:
    """A sleep's length no other process uses; whatever still sleeps it is killed after."""
    mark = f"7{random.randrange(10**6, 10**7)}"
    yield mark
    for pid in running_with(mark):
        os.kill(pid, signal.SIGKILL)


def work(capsys: pytest.CaptureFixture[str], db: str, *args: str) -> tuple[int, str]:
    code = main(["tasks", "work", "--db", db, "--agent", "w1", "--until-empty", *args])
    return code, capsys.readouterr().out


def sleepers(n: str, at_least: int = 1, within: float = 30.0) -> list[int]:
    """The processes sleeping ``n``, once ``at_least`` of them run."""
    deadline = time.monotonic() + within
    while len(found := running_with(n, ("sleep",))) < at_least and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def test_a_detached_grandchild_holding_the_output_is_ended_when_the_command_exits(
    sqlite_url: str, n: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``setsid`` took the sleeper out of the command's process group: it went on running,
    holding the output, after its task completed."""
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("leaves a daemon")
    started = time.monotonic()
    code, out = work(capsys, sqlite_url, "--", "sh", "-c", f'setsid sh -c "sleep {n}" & echo hi')
    assert code == 0 and time.monotonic() - started < 30
    assert tl.queue.get(task.id).result == "hi"
    assert running_with(n) == []
    assert re.search(r"completed in [0-9.]+ s; ended [0-9]+ process(es)? it left running", out)


def test_a_timeout_ends_a_detached_child_of_a_command_that_ignores_sigterm(
    sqlite_url: str, n: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("stubborn", max_attempts=1)
    script = f'trap "" TERM; setsid sleep {n} & sleep {n}; sleep {n}'
    started = time.monotonic()
    code, out = work(capsys, sqlite_url, "--timeout", "1", "--json", "--", "sh", "-c", script)
    assert code == 4 and time.monotonic() - started < 60
    assert tl.queue.get(task.id).last_error == "timed out after 1 s (killed)"
    assert running_with(n) == []
    shown = json.loads(out)
    assert shown["outcome"] == "dead" and shown["strays_ended"] >= 1


def test_a_stray_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path, n: str) -> None:
    ready = tmp_path / "ready"
    script = (
        f"setsid sh -c 'trap \"\" TERM; touch {ready}; sleep {n}' &"
        f" while [ ! -e {ready} ]; do sleep 0.05; done; echo hi"
    )
    ended: list[int] = []
    done = task_command.run(["sh", "-c", script], b"", {}, 60, 100, 100, on_strays=ended.append)
    assert done.returncode == 0 and done.stdout == b"hi\n"
    assert running_with(n) == [] and ended and ended[0] >= 1


def test_a_daemon_that_double_forks_is_ended_and_a_closed_stdout_does_not_end_the_command(
    n: str,
) -> None:
    daemon = (
        "import os\n"
        "if os.fork(): os._exit(0)\n"
        "os.setsid()\n"
        "if os.fork(): os._exit(0)\n"
        f"os.execvp('sleep', ['sleep', '{n}'])\n"
    )
    script = f'{sys.executable} -c "{daemon}"; exec 1>&-; sleep 1; echo still here >&2; exit 3'
    ended: list[int] = []
    done = task_command.run(["sh", "-c", script], b"", {}, 60, 100, 100, on_strays=ended.append)
    assert (done.returncode, done.stderr) == (3, b"still here\n")
    assert running_with(n) == [] and ended == [1]


def test_each_command_ends_only_its_own_strays_when_several_run_at_once(n: str) -> None:
    """Strays come to the guard of the command they left, not to the worker: a command that
    ends leaves another command's strays alone, while that one still runs."""
    other = f"8{n[1:]}"
    ended: list[int] = []
    later = threading.Thread(
        target=task_command.run,
        args=(["sh", "-c", f"(setsid sleep {other} &); sleep 3"], b"", {}, 60, 10, 10),
        kwargs={"on_strays": ended.append},
    )
    later.start()
    try:
        (orphan,) = sleepers(other)
        mine: list[int] = []
        task_command.run(
            ["sh", "-c", f"(setsid sleep {n} &); sleep 0.5"], b"", {}, 60, 10, 10,
            on_strays=mine.append,
        )  # fmt: skip
        assert mine == [1] and running_with(n, ("sleep",)) == []
        assert running(orphan)
    finally:
        later.join(60)
        for pid in running_with(other):
            os.kill(pid, signal.SIGKILL)
    assert ended == [1] and stopped(orphan)


def test_a_killed_worker_takes_the_detached_children_of_its_command_too(
    sqlite_url: str, n: str
) -> None:
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("runs long")
    argv = ["tasks", "work", "--db", sqlite_url, "--agent", "w1", "--", "sh", "-c"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskloom", *argv, f"setsid sleep {n} & sleep {n}"],
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        found = sleepers(n, at_least=2, within=60)
        assert len(found) == 2 and tl.queue.get(task.id).status == "in_progress"
        proc.kill()
        proc.wait(30)
        assert all(stopped(pid) for pid in found), running_with(n)
    finally:
        proc.kill()
    tl.close()


def test_a_subreaper_adopts_the_orphans_below_it() -> None:
    code = (
        "import subprocess, sys, time\n"
        "from taskloom.cli import subreaper\n"
        "assert subreaper.become()\n"
        "subprocess.run(['sh', '-c', 'sleep 30 & echo $!'], stdout=open('/dev/null', 'w'))\n"
        "kids = subreaper.children()\n"
        "print(len(kids))\n"
        "for kid in kids:\n"
        "    import os, signal; os.kill(kid, signal.SIGKILL); os.waitpid(kid, 0)\n"
        "print(len(subreaper.children()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True
    )
    assert out.stdout.split() == ["1", "0"], out.stderr
