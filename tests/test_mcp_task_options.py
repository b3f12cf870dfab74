"""``--task-ttl`` and ``--task-poll`` on ``taskloom mcp`` (stdio) and ``taskloom serve`` (``/mcp``
over HTTP): a task's record says the time to live and the poll interval given, and a bad
value is one ``Error:`` line before any database is opened."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main
from taskloom.domain.queue import TaskStatus
from tests.conftest import Server
from tests.test_mcp_protocols import _as, _post, _result
from tests.test_mcp_tasks import delegate, mcp


def test_taskloom_mcp_tasks_carry_the_ttl_and_poll_interval_given(
    db_url: str, tmp_path: Path
) -> None:
    argv = ("--tools", "planner", "--task-ttl", "120", "--task-poll", "0.25")
    server = mcp(db_url, "planning", "boss", tmp_path, *argv)
    created = delegate(server, "Write the notes")
    got = server.call("tasks/get", {"taskId": created["taskId"]})["result"]
    server.close()
    for task in (created, got):
        assert (task["ttlMs"], task["pollIntervalMs"]) == (120_000, 250)


def test_taskloom_serve_tasks_carry_the_ttl_and_poll_interval_given(db_url: str) -> None:
    server = Server(db_url, "--task-ttl=90", "--task-poll=2.5")
    server.start()
    try:
        mine = _as("planning", "boss", "planner")
        call = {"name": "task_delegate", "arguments": {"title": "Count the open issues"}}
        created = _result(_post(server.url, "tools/call", call, mine))
        got = _result(_post(server.url, "tasks/get", {"taskId": created["taskId"]}, mine))
    finally:
        server.kill()
    for task in (created, got):
        assert (task["ttlMs"], task["pollIntervalMs"]) == (90_000, 2500)


def test_by_default_a_task_is_kept_a_day_and_polled_every_second(
    db_url: str, tmp_path: Path
) -> None:
    server = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner")
    created = delegate(server, "Defaults")
    server.close()
    assert (created["ttlMs"], created["pollIntervalMs"]) == (86_400_000, 1000)


TTL_ERROR = "Error: --task-ttl must be from 1 to 3155760000 seconds (100 years)"
POLL_ERROR = "Error: --task-poll must be from 0.1 to 3600 seconds"


@pytest.mark.parametrize("command", [["mcp", "--thread", "t"], ["serve", "--port", "8765"]])
@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--task-ttl", "0"], TTL_ERROR),
        (["--task-ttl", "inf"], TTL_ERROR),
        (["--task-ttl", "nan"], TTL_ERROR),
        (["--task-poll", "0"], POLL_ERROR),
        (["--task-poll", "0.05"], POLL_ERROR),
        (["--task-poll", "-1"], POLL_ERROR),
        (["--task-poll", "7200"], POLL_ERROR),
        (["--task-poll", "nan"], POLL_ERROR),
    ],
)
def test_a_bad_value_is_one_error_line_and_no_database(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
    flags: list[str],
    said: str,
) -> None:
    db = tmp_path / "never.db"
    code = main([*command, *flags, "--db", f"sqlite:///{db}"])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == ""
    assert captured.err.splitlines() == [said], captured.err
    assert not db.exists()


def test_a_task_that_expires_mid_call_stops_its_call(db_url: str) -> None:
    """A ``goal_wait`` (300 s) answered as a task kept 2 s: once its time to live has run
    out, ``tasks/get`` answers as for an id never made, and the call stops at its next look
    (its queue task ends, its runner thread free), where it waited out its 300 s for an
    answer nobody could read."""
    with taskloom.connect(db_url) as tl:
        tl.goal("release").set("Ship v2.0")
    server = Server(db_url, "--task-ttl=2")
    server.start()
    try:
        mine = _as("release", "boss", "all")
        call = {"name": "goal_wait", "arguments": {"wait_s": 300}}
        created = _result(_post(server.url, "tools/call", call, mine))
        get = {"taskId": created["taskId"]}
        working = _result(_post(server.url, "tasks/get", get, mine))
        deadline = time.monotonic() + 60  # far under the wait's 300 s
        with taskloom.connect(db_url) as tl:
            while True:
                [run] = tl.queue.list()
                if run.status not in (TaskStatus.READY, TaskStatus.IN_PROGRESS):
                    break
                assert time.monotonic() < deadline, f"the call still runs: {run.status}"
                time.sleep(0.2)
        expired = _post(server.url, "tasks/get", get, mine).json()
    finally:
        server.kill()
    assert created["resultType"] == "task" and working["status"] == "working"
    assert expired["error"] == {
        "code": -32602,
        "message": "Failed to retrieve task: task not found",
    }
    assert run.status is TaskStatus.DEAD and "expired" in (run.last_error or ""), run
