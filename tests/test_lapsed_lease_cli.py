"""A killed worker's lease, once it runs out, is shown as what it is: ``lease_expired`` in
``tasks show``, ``tasks list`` (with the ready tasks), ``tasks stats``; ``doctor`` lists it,
and ``doctor --fix`` fixes exactly that. Real processes: a ``taskloom tasks work`` killed
with SIGKILL, then the CLI as a person runs it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import taskloom
from tests.conftest import subprocess_env

LEASE_S = 2.0


def taskloom_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskloom", *args],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
        check=False,
    )


def _killed_worker(db: str, tmp_path: Path) -> str:
    """A ``tasks work`` process that claimed a task, killed (its command too, which runs in
    a process group of its own), and its lease then run out; the task's id."""
    started = tmp_path / "started"
    command = f"echo $$ > {started}.part && mv {started}.part {started}; exec sleep 60"
    worker = subprocess.Popen(
        [sys.executable, "-m", "taskloom", "tasks", "work", "--agent", "w1", "--db", db,
         "--lease", str(LEASE_S), "--", "sh", "-c", command],
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        for _ in range(3000):
            if started.exists():
                break
            time.sleep(0.02)
        else:
            raise AssertionError("the worker never ran its command")
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(30)
        if started.exists():  # the worker's guard stops the command; this makes sure
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(started.read_text()), signal.SIGKILL)
    with taskloom.connect(db) as tl:
        (task,) = tl.queue.list(status="in_progress")  # no renewal any more
    while time.time() <= (task.lease_expires_at or 0) + 0.05:
        time.sleep(0.05)
    return task.id


@pytest.mark.slow
def test_a_killed_workers_lapsed_lease_is_shown_and_fixed_as_lease_expired(
    db_url: str, tmp_path: Path
) -> None:
    with taskloom.connect(db_url) as tl:
        tl.queue.add("long job", priority=1)
        waiting, _ = tl.queue.add("next job", priority=2)
    task_id = _killed_worker(db_url, tmp_path)
    db = ("--db", db_url)

    shown = taskloom_cli("tasks", "show", task_id, *db)
    assert shown.returncode == 0, shown.stderr
    assert f"{task_id}  [lease_expired] p1 task: long job @w1" in shown.stdout
    assert "(ran out: no one holds it, and the next claim takes it)" in shown.stdout
    as_json = json.loads(taskloom_cli("tasks", "show", task_id, *db, "--json").stdout)
    assert as_json["state"] == "lease_expired" and as_json["status"] == "in_progress"

    listed = taskloom_cli("tasks", "list", *db).stdout.splitlines()
    assert listed[0].startswith(f"{task_id}  [lease_expired]")
    ready = json.loads(taskloom_cli("tasks", "list", "--status", "ready", *db, "--json").stdout)
    assert [t["id"] for t in ready] == [task_id, waiting.id]
    assert [t["state"] for t in ready] == ["lease_expired", "ready"]
    running = taskloom_cli("tasks", "list", "--status", "in_progress", *db)
    assert running.stdout.strip() == "(no tasks)"

    stats = json.loads(taskloom_cli("tasks", "stats", *db, "--json").stdout)
    assert stats["lease_expired"] == 1 and stats["in_progress"] == 0 and stats["ready"] == 1
    assert "lease_expired 1" in taskloom_cli("tasks", "stats", *db).stdout

    report = taskloom_cli("doctor", *db)
    assert report.returncode == 0, report.stderr
    assert f"lease_expired: 1  {task_id}" in report.stdout
    fixed = json.loads(taskloom_cli("doctor", "--fix", *db, "--json").stdout)
    assert fixed["lease_expired"] == [task_id] and fixed["fixed"] == [task_id]
    after = json.loads(taskloom_cli("tasks", "show", task_id, *db, "--json").stdout)
    assert after["state"] == after["status"] == "ready"
    assert after["last_error"] == "lease expired"
    again = json.loads(taskloom_cli("doctor", *db, "--json").stdout)
    assert again["lease_expired"] == [] and again["fixed"] == []
