"""examples/queue_workers.py: a producer and worker processes drain a queue exactly once."""

from __future__ import annotations

import multiprocessing
import os
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import taskloom
from tests.conftest import subprocess_env

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "queue_workers.py"
KIND = "example.square"


def _run_example(db_url: str, *, tasks: int, workers: int) -> subprocess.CompletedProcess[str]:
    """The example run to its end on ``db_url``."""
    sizes = ["--tasks", str(tasks), "--workers", str(workers)]
    return subprocess.run(
        [sys.executable, str(EXAMPLE), "--db", db_url, *sizes],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_workers_complete_every_task_once_retrying_the_failures(db_url: str) -> None:
    """Both backends; a task of another kind in the same queue (no ``n`` in its payload) is
    left as it was: the example's workers claimed every kind, and killed it."""
    with taskloom.connect(db_url) as tl:
        foreign, _ = tl.queue.add("someone else's work", payload={"m": 1})
        theirs, _ = tl.queue.add("theirs too", kind="review", dedup_key="square-1")
    done = _run_example(db_url, tasks=12, workers=2)
    assert done.returncode == 0, done.stderr
    assert "added 12 tasks" in done.stdout
    assert "12 of 12 tasks completed (3 after a retry)" in done.stdout
    assert done.stdout.count(" lost") == 2 and "1 lost" not in done.stdout
    with taskloom.connect(db_url) as tl:
        tasks = tl.queue.list(status="completed", limit=100)
        left = [tl.queue.get(foreign.id), tl.queue.get(theirs.id)]
    assert [(t.status, t.attempts, t.claimed_by) for t in left] == [("ready", 0, None)] * 2
    assert len(tasks) == 12
    for task in tasks:
        n = task.payload["n"]
        assert task.result == f"item {n} squared is {n * n}"
        assert task.attempts == (2 if n % 5 == 0 else 1)
        assert task.claimed_by in ("worker-0", "worker-1") and task.kind == "example.square"


def test_bad_flags_are_refused_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--db", f"sqlite:///{tmp_path / 'q.db'}", "--workers", "0"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--workers from 1 to 64" in done.stderr
    assert not (tmp_path / "q.db").exists()


def test_a_task_left_unfinished_exits_1_not_argparses_2(db_url: str) -> None:
    """A task of the run held by another worker (its dedup key live and claimed) stays in
    progress: exit 1, as 2 is a usage error's; ``--help`` lists every exit status."""
    with taskloom.connect(db_url) as tl:
        tl.queue.add("square 0", kind=KIND, payload={"n": 0}, dedup_key=f"{KIND}-0")
        held = tl.queue.claim("elsewhere", lease=600, kinds=[KIND])
    assert held is not None
    done = _run_example(db_url, tasks=3, workers=1)
    assert done.returncode == 1, done.stderr
    assert "added 2 tasks" in done.stdout and "2 of 3 tasks completed" in done.stdout
    assert done.stderr == f"1 task not completed: see taskloom tasks list --kind {KIND}\n"
    shown = subprocess.run(
        [sys.executable, str(EXAMPLE), "--help"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0
    codes = shown.stdout.split("exit status:\n")[1].splitlines()
    assert [line.split()[0] for line in codes if line[:3].strip()] == ["0", "1", "2", "130"]
    assert "left unfinished" in shown.stdout and "usage error" in shown.stdout


def test_ctrl_c_stops_the_workers_cleanly_and_leaves_the_rest_ready(db_url: str) -> None:
    """Ctrl-C reaches the whole process group, as a terminal sends it: each worker finishes
    the task in hand and prints its summary, nothing is left in progress, no traceback."""
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--db", db_url, "--tasks", "2000", "--workers", "2"],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # `cmd &` ignores it
    )
    try:
        assert proc.stdout is not None and "added 2000 tasks" in proc.stdout.readline()
        with taskloom.connect(db_url) as tl:
            deadline = time.monotonic() + 60
            while tl.queue.stats()["completed"] < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted: run it again" in err, err
    assert out.count(" lost") == 2, out
    with taskloom.connect(db_url) as tl:
        stats = tl.queue.stats()
    assert stats["in_progress"] == 0 and stats["ready"] > 0 and stats["completed"] >= 2


def test_a_workers_line_is_one_write(
    db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under ``PYTHONUNBUFFERED`` each ``write`` reaches the pipe on its own: a line written
    as text then newline ran into another worker's line (``… 0 lostworker-1: …``)."""
    writes: list[str] = []
    real = sys.stdout.write
    monkeypatch.setattr(sys.stdout, "write", lambda s: (writes.append(s), real(s))[1])
    example = runpy.run_path(str(EXAMPLE))
    example["work"](db_url, "worker-9", multiprocessing.get_context("spawn").Event())
    assert writes == ["worker-9: 0 completed, 0 failed and retried, 0 dead, 0 lost\n"]
