"""A goal run as an MCP task: ``goal_wait`` over ``taskloom mcp`` with the Tasks extension,
run by the server's call runner, several calls at once.

Every server is a real ``taskloom mcp`` process on a real database; the goal is driven to
its end by this test's process, as the agent loop working on it would."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import taskloom
from taskloom.mcp.runs import MAX_CALLS
from tests.test_mcp_tasks import Stdio, mcp

ACTIVE_RUN = "in_progress (TASK_STATE_WORKING): running"
NO_THREAD_FREE = "ready (TASK_STATE_SUBMITTED): waiting for a worker"


def supervisor(db: str, tmp_path: Path) -> Stdio:
    """The planner of thread ``release``, polled every 200 ms."""
    return mcp(db, "release", "boss", tmp_path, "--tools", "planner", "--task-poll", "0.2")


def goal_wait(server: Stdio, wait_s: float) -> dict[str, Any]:
    call = {"name": "goal_wait", "arguments": {"wait_s": wait_s}}
    return dict(server.call("tools/call", call)["result"])


def running(server: Stdio, task_id: str) -> None:
    """Poll until a runner thread of the server runs the call."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        task = server.call("tasks/get", {"taskId": task_id})["result"]
        assert task["status"] == "working", task
        if task["statusMessage"] == ACTIVE_RUN:
            return
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} never started running")


def text(done: dict[str, Any]) -> str:
    assert done["result"]["isError"] is False, done
    return str(done["result"]["content"][0]["text"])


def test_goal_wait_is_an_mcp_task_that_ends_with_the_goal(db_url: str, tmp_path: Path) -> None:
    """``tools/call`` answers with a task; ``tasks/get`` says it is running while the goal is
    active, and carries the goal inline once another process completes it."""
    with taskloom.connect(db_url) as tl:
        tl.goal("release").set("Ship v2.0")
        server = supervisor(db_url, tmp_path)
        created = goal_wait(server, 300)
        assert created["resultType"] == "task" and created["status"] == "working"
        assert created["pollIntervalMs"] == 200
        running(server, created["taskId"])
        tl.goal("release").complete("tagged v2.0.0", host=False)
    done = server.poll(created["taskId"], "completed")
    plain = server.call(
        "tools/call", {"name": "goal_wait", "arguments": {"wait_s": 300}}, tasks=False
    )["result"]
    server.close()
    assert text(done).startswith("The goal has ended: it is complete.\n")
    assert "<evidence>tagged v2.0.0</evidence>" in text(done)
    # A client without the extension waits in the request, as for any call: here it has ended.
    assert plain["resultType"] == "complete" and "it is complete" in plain["content"][0]["text"]


def test_a_short_call_finishes_while_a_long_one_still_waits(db_url: str, tmp_path: Path) -> None:
    """Two slow calls at once: the second (a wait with nothing to wait for) completes while
    the first still waits on the active goal, which then ends it."""
    with taskloom.connect(db_url) as tl:
        tl.goal("release").set("Ship v2.0")
        server = supervisor(db_url, tmp_path)
        long = goal_wait(server, 300)
        short = goal_wait(server, 0)
        quick = server.poll(short["taskId"], "completed")
        still = server.call("tasks/get", {"taskId": long["taskId"]})["result"]
        tl.goal("release").block("needs the signing key")
    ended = server.poll(long["taskId"], "completed")
    server.close()
    assert text(quick).startswith("The goal is still active after 0 s")
    assert still["status"] == "working"
    assert text(ended).startswith("The goal has ended: it is blocked.\n")


def test_cancelling_a_goal_wait_stops_it_and_frees_its_thread(db_url: str, tmp_path: Path) -> None:
    """With every runner thread waiting on the goal, one more call waits for a thread;
    ``tasks/cancel`` of one wait stops that wait (not after its 300 s), and the call
    waiting for a thread runs on the thread it frees. The other waits go on until the
    goal ends. The cancel writes no warning on stderr; a client shows it in its log."""
    with taskloom.connect(db_url) as tl:
        tl.goal("release").set("Ship v2.0")
        server = supervisor(db_url, tmp_path)
        waits = [goal_wait(server, 300) for _ in range(MAX_CALLS)]
        for created in waits:
            running(server, created["taskId"])
        extra = goal_wait(server, 0)
        queued = server.call("tasks/get", {"taskId": extra["taskId"]})["result"]
        assert queued["statusMessage"] == NO_THREAD_FREE  # every thread is busy
        first = waits[0]["taskId"]
        server.call("tasks/cancel", {"taskId": first})
        freed = server.poll(extra["taskId"], "completed")
        others = [server.call("tasks/get", {"taskId": w["taskId"]})["result"] for w in waits]
        tl.goal("release").pause()
        ended = [server.poll(w["taskId"], "completed") for w in waits[1:]]
        cancelled = server.call("tasks/get", {"taskId": first})["result"]
    server.close()
    assert text(freed).startswith("The goal is still active after 0 s")
    assert [o["status"] for o in others] == ["cancelled"] + ["working"] * (MAX_CALLS - 1)
    assert all(text(e).startswith("The goal has ended: it is paused.\n") for e in ended)
    assert cancelled["status"] == "cancelled" and "result" not in cancelled
    # A cancel is what the client asked for: no warning on stderr (the client's log).
    assert "no longer this worker" not in (tmp_path / "stderr.txt").read_text(encoding="utf-8")


def test_a_goal_wait_the_tool_refuses_is_refused_at_once_not_as_a_task(
    db_url: str, tmp_path: Path
) -> None:
    """A ``goal_wait`` with arguments the tool refuses (``wait_s`` -1, a ``thread_id``) was
    answered with a task, queued for a worker, that only later completed with the error; it
    is the tool's error at once, as without the extension, and nothing is queued."""
    with taskloom.connect(db_url) as tl:
        tl.goal("release").set("Ship v2.0")
        server = supervisor(db_url, tmp_path)
        answers = [
            server.call("tools/call", {"name": "goal_wait", "arguments": arguments}, tasks=tasks)
            for arguments in ({"wait_s": -1}, {"wait_s": 0, "thread_id": "other"})
            for tasks in (True, False)
        ]
        server.close()
        assert tl.queue.list() == []
    texts = [answer["result"]["content"][0]["text"] for answer in answers]
    assert all(answer["result"]["isError"] for answer in answers), answers
    assert texts[0] == texts[1] and "wait_s: Input should be greater than or equal to 0" in texts[0]
    assert texts[2] == texts[3] and "the thread is bound by the host" in texts[2]
