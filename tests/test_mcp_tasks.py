"""The MCP Tasks extension over stdio, driven by raw JSON-RPC lines of protocol 2026-07-28 and
by the SDK's client with a client side of the extension (``tests/mcp_tasks_client.py``).

Every server is a real ``taskloom mcp`` process on a real database; the delegated work is
done by a worker of the queue (the test, through ``tl.queue``), as another agent does it.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from psycopg import sql

import taskloom
from taskloom.store.pg_url import join_url
from tests.backends import needed_pg_server
from tests.conftest import subprocess_env
from tests.mcp_tasks_client import TasksClient, modern

ROOT = Path(__file__).resolve().parents[1]


class Stdio:
    """``taskloom mcp`` (or another server command) driven line by line, each answer awaited
    for a bounded time."""

    def __init__(self, argv: list[str], stderr: Path, env: dict[str, str] | None = None) -> None:
        self._stderr = stderr.open("a", encoding="utf-8")
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            env=env or subprocess_env(),
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._next = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, line: str, wait: float = 30) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        try:
            answer = self._lines.get(timeout=wait)
        except queue.Empty:
            pytest.fail(f"no answer within {wait}s to {line[:80]!r}")
        assert answer is not None, "the server exited"
        return dict(json.loads(answer))

    def call(self, method: str, params: dict[str, Any], *, tasks: bool = True) -> dict[str, Any]:
        """A 2026-07-28 request (no handshake); its answer."""
        self._next += 1
        return self.send(modern(self._next, method, params, tasks))

    def poll(self, task_id: str, until: str, wait: float = 60) -> dict[str, Any]:
        """``tasks/get`` at the interval the server asks for, until the task is ``until``."""
        deadline = time.monotonic() + wait
        while True:
            answer = self.call("tasks/get", {"taskId": task_id})
            task = answer["result"]
            if task["status"] == until:
                return dict(task)
            assert task["status"] == "working", task
            assert time.monotonic() < deadline, f"task still {task['status']}"
            time.sleep(task["pollIntervalMs"] / 1000)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(30)
        self._stderr.close()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            assert self.proc.wait(timeout=60) == 0
        finally:
            self.proc.kill()
            self._stderr.close()


def mcp(db: str, thread: str, agent: str, tmp_path: Path, *more: str) -> Stdio:
    argv = [sys.executable, "-m", "taskloom", "mcp", "--thread", thread, "--agent", agent]
    return Stdio([*argv, "--db", db, *more], tmp_path / "stderr.txt")


def work(tl: taskloom.Taskloom, result: str | None = None, error: str | None = None) -> str:
    """Take the one task ready in the queue, as a worker agent, and finish it."""
    task = tl.queue.claim("worker-1", bind_process=False)
    assert task is not None
    if error is None:
        tl.queue.done(task.id, task.lease_token or "", result)
    else:
        tl.queue.fail(task.id, task.lease_token or "", error, retry=False)
    return task.id


def delegate(server: Stdio, title: str) -> dict[str, Any]:
    answer = server.call("tools/call", {"name": "task_delegate", "arguments": {"title": title}})
    return dict(answer["result"])


def test_a_delegated_task_is_an_mcp_task_that_a_restarted_server_finishes(
    db_url: str, tmp_path: Path
) -> None:
    """The MCP task is durable before it is returned: the server that made it dies (kill -9)
    while the work runs, the work ends, and a new server process answers ``tasks/get`` with
    the result, the MCP status and the A2A state of the queue task."""
    first = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner")
    created = delegate(first, "Summarise the build log")
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["ttlMs"] == 86_400_000 and created["pollIntervalMs"] == 1000
    working = first.call("tasks/get", {"taskId": created["taskId"]})["result"]
    assert working["resultType"] == "complete" and working["status"] == "working"
    assert working["statusMessage"] == "ready (TASK_STATE_SUBMITTED): waiting for a worker"
    first.kill()
    with taskloom.connect(db_url) as tl:
        queued = work(tl, "3 warnings, no errors")
        assert tl.queue.get(queued).source == "planning"  # the delegating thread
    second = mcp(db_url, "planning", "boss", tmp_path)
    done = second.poll(created["taskId"], "completed")
    second.close()
    assert done["result"]["isError"] is False
    text = done["result"]["content"][0]["text"]
    assert f"Task {queued} is completed" in text
    assert "<result>3 warnings, no errors</result>" in text
    assert done["createdAt"] == created["createdAt"]


def test_a_failed_task_is_a_completed_mcp_task_with_an_error_result(
    db_url: str, tmp_path: Path
) -> None:
    """``failed`` is for protocol errors: work that failed is ``completed`` with ``isError``."""
    server = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner")
    created = delegate(server, "Deploy")
    with taskloom.connect(db_url) as tl:
        work(tl, error="no credentials for <prod>")
    done = server.poll(created["taskId"], "completed")
    server.close()
    assert done["result"]["isError"] is True
    assert "failed for good: <error>no credentials for &lt;prod&gt;</error>" in str(done)


def test_a_working_task_s_last_update_is_when_its_work_last_changed(
    db_url: str, tmp_path: Path
) -> None:
    """``lastUpdatedAt`` of a working task says when its work last changed, so a client can
    tell a task stuck waiting from one a worker has just taken; it was the time of the poll."""
    server = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner")
    created = delegate(server, "Rebuild the index")
    time.sleep(1.1)  # later polls of unchanged work say the same time, not the poll's
    waiting = [server.call("tasks/get", {"taskId": created["taskId"]})["result"] for _ in "ab"]
    with taskloom.connect(db_url) as tl:
        claimed = tl.queue.claim("worker-1", bind_process=False)
        assert claimed is not None
    taken = server.call("tasks/get", {"taskId": created["taskId"]})["result"]
    server.close()
    assert [w["lastUpdatedAt"] for w in waiting] == [created["lastUpdatedAt"]] * 2
    assert created["lastUpdatedAt"] == created["createdAt"]
    assert taken["statusMessage"].startswith("in_progress") and taken["status"] == "working"
    assert taken["lastUpdatedAt"] > created["lastUpdatedAt"]


def test_cancelling_an_mcp_task_cancels_the_queue_task(db_url: str, tmp_path: Path) -> None:
    server = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner")
    created = delegate(server, "Rebuild the index")
    with taskloom.connect(db_url) as tl:
        [queued] = tl.queue.list()
        cancelled = server.call("tasks/cancel", {"taskId": created["taskId"]})["result"]
        assert cancelled["resultType"] == "complete"
        assert tl.queue.get(queued.id).status.value == "canceled"
        assert tl.queue.claim("worker-1") is None  # no worker takes it now
    got = server.call("tasks/get", {"taskId": created["taskId"]})["result"]
    updated = server.call("tasks/update", {"taskId": created["taskId"], "inputResponses": {}})
    server.close()
    assert got["status"] == "cancelled" and "result" not in got
    assert updated["result"]["resultType"] == "complete"


def test_piped_task_requests_take_effect_in_the_order_read(db_url: str, tmp_path: Path) -> None:
    """``tasks/*`` requests take effect after the calls read before them, as calls do: a
    ``tasks/cancel`` piped after a two-second ``task_wait`` cancels once the wait has
    answered, and a ``tasks/get`` piped after the cancel sees it. The cancel ran at once,
    cutting the wait short, and the get could answer ``working``."""
    server = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner")
    task_id = delegate(server, "Rebuild the index")["taskId"]
    with taskloom.connect(db_url) as tl:
        [queued] = tl.queue.list()
    waited = {"name": "task_wait", "arguments": {"task_id": queued.id, "wait_s": 2}}
    lines = [modern(100, "tools/call", waited, tasks=False)]
    lines += [modern(101, "tasks/cancel", {"taskId": task_id})]
    lines += [modern(102, "tasks/get", {"taskId": task_id})]
    assert server.proc.stdin is not None
    server.proc.stdin.write("".join(line + "\n" for line in lines))
    server.proc.stdin.flush()
    answers = {}
    for _ in lines:
        answer = json.loads(server._lines.get(timeout=30) or "null")
        answers[answer["id"]] = answer
    server.close()
    wait_text = answers[100]["result"]["content"][0]["text"]
    assert "is not done" in wait_text and "cancel" not in wait_text, wait_text
    assert answers[101]["result"]["resultType"] == "complete"
    assert answers[102]["result"]["status"] == "cancelled"


def test_cancelling_an_mcp_task_that_has_ended_is_refused_with_its_status(
    db_url: str, tmp_path: Path
) -> None:
    """The extension asks a receiver to refuse ``tasks/cancel`` of a task in a terminal
    status (-32602); it was acknowledged, as if something had been canceled."""
    server = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner")
    done = delegate(server, "Tag the release")
    canceled = delegate(server, "Announce it")
    server.call("tasks/cancel", {"taskId": canceled["taskId"]})
    with taskloom.connect(db_url) as tl:
        work(tl, result="tagged")  # ends the first before any poll has seen it end
    answers = [server.call("tasks/cancel", {"taskId": t["taskId"]}) for t in (done, canceled)]
    got = server.call("tasks/get", {"taskId": done["taskId"]})["result"]
    server.close()
    assert [a["error"] for a in answers] == [
        {"code": -32602, "message": f"Cannot cancel task: it has already ended ({status})"}
        for status in ("completed", "cancelled")
    ]
    assert got["status"] == "completed"  # the refused cancel changed nothing


def test_another_threads_or_an_unknown_task_id_reveals_nothing(db_url: str, tmp_path: Path) -> None:
    """``tasks/get`` and ``tasks/cancel`` answer a task of another thread (or agent) with the
    very error an id never made gets: nothing says it exists."""
    owner = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner")
    created = delegate(owner, "Private work")
    others = [
        mcp(db_url, "elsewhere", "boss", tmp_path),
        mcp(db_url, "planning", "intruder", tmp_path),
    ]
    answers = []
    for other in others:
        for method in ("tasks/get", "tasks/cancel", "tasks/update"):
            answers.append(other.call(method, {"taskId": created["taskId"]}))
            answers.append(other.call(method, {"taskId": "0" * 32}))
        other.close()
    still = owner.call("tasks/get", {"taskId": created["taskId"]})["result"]
    owner.close()
    errors = [a["error"] for a in answers]
    assert errors == [{"code": -32602, "message": "Failed to retrieve task: task not found"}] * 12
    assert still["status"] == "working"  # the cancels from elsewhere did nothing


def test_a_task_id_that_is_not_text_is_refused_with_the_reason(db_url: str, tmp_path: Path) -> None:
    """``tasks/get`` with no ``taskId``, or a number, was answered "Invalid request
    parameters" with empty data: nothing said which parameter was wrong."""
    server = mcp(db_url, "planning", "boss", tmp_path)
    answers = [
        server.call(method, params)
        for method in ("tasks/get", "tasks/cancel", "tasks/update")
        for params in ({}, {"taskId": 7})
    ]
    unknown = server.call("tasks/get", {"taskId": "7"})
    server.close()
    messages = [a["error"]["message"] for a in answers]
    assert {a["error"]["code"] for a in answers} == {-32602}
    why = "Invalid params: params.taskId must be the task's id (text), not"
    assert messages == [f"{why} missing (or null)", f"{why} a number"] * 3
    assert unknown["error"]["message"] == "Failed to retrieve task: task not found"


def test_tasks_update_with_input_responses_not_an_object_says_so(
    db_url: str, tmp_path: Path
) -> None:
    """``tasks/update`` whose ``inputResponses`` is a number or a list was answered "Invalid
    request parameters" with empty data; it now names the parameter, and an object (or none)
    is acknowledged as before."""
    server = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner")
    task_id = delegate(server, "Needs no input")["taskId"]
    refused = [
        server.call("tasks/update", {"taskId": task_id, "inputResponses": value})["error"]
        for value in (5, ["yes"], "yes")
    ]
    taken = server.call("tasks/update", {"taskId": task_id, "inputResponses": {"q": {}}})
    server.close()
    why = "Invalid params: params.inputResponses must be an object, not"
    assert refused == [
        {"code": -32602, "message": f"{why} {kind}"} for kind in ("a number", "a list", "text")
    ]
    assert taken["result"]["resultType"] == "complete"


def test_a_client_without_the_extension_gets_plain_results(db_url: str, tmp_path: Path) -> None:
    """A call answers at once for a client that does not declare the extension (either
    protocol generation), and for a fast tool whatever the client declares."""
    server = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner")
    plain = server.call(
        "tools/call", {"name": "task_delegate", "arguments": {"title": "Job"}}, tasks=False
    )["result"]
    fast = server.call("tools/call", {"name": "todo", "arguments": {"op": "list"}})["result"]
    server.close()
    assert plain["resultType"] == "complete" and "is not done (no worker has it yet)" in str(plain)
    assert "content" in fast and fast["resultType"] == "complete"


def test_a_wait_s_the_tool_refuses_is_refused_for_a_task_too(db_url: str, tmp_path: Path) -> None:
    """The task follows the work whatever ``wait_s`` says, but a ``wait_s`` that is not a
    number from 0 to 300 is the same error as without the extension: it delegated the work
    and answered a task."""
    server = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner")
    answers = [
        server.call("tools/call", {"name": "task_delegate", "arguments": arguments}, tasks=tasks)
        for arguments in ({"title": "Job", "wait_s": "5"}, {"title": "Job", "wait_s": 301})
        for tasks in (True, False)
    ]
    server.close()
    texts = [a["result"]["content"][0]["text"] for a in answers]
    assert texts[0] == texts[1] and texts[2] == texts[3], texts
    assert all(
        t.startswith("error: invalid arguments for tool 'task_delegate': wait_s") for t in texts
    )
    with taskloom.connect(db_url) as tl:
        assert tl.queue.list() == []  # nothing was delegated


def test_the_sdk_client_speaking_the_extension_gets_the_result_of_delegated_work(
    db_url: str,
) -> None:
    """The SDK's client, on protocol 2026-07-28 with the extension's client side: its
    ``call_tool`` returns the delegated work's result, polled through ``tasks/get``."""
    argv = ["mcp", "--thread", "t", "--agent", "boss", "--tools", "planner", "--db", db_url]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "taskloom", *argv], env=subprocess_env()
    )
    tl = taskloom.connect(db_url)

    def worker() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            task = tl.queue.claim("worker-1", bind_process=False)
            if task is not None:
                tl.queue.done(task.id, task.lease_token or "", f"done: {task.title}")
                return
            time.sleep(0.05)

    async def run() -> tuple[Any, TasksClient]:
        tasks = TasksClient(lambda _: threading.Thread(target=worker, daemon=True).start())
        async with Client(params, mode="2026-07-28", extensions=[tasks]) as client:
            result = await client.call_tool("task_delegate", {"title": "Write the notes"})
        return result, tasks

    try:
        result, tasks = asyncio.run(asyncio.wait_for(run(), 120))
    finally:
        tl.close()
    assert len(tasks.seen) == 1 and tasks.polls[-1].status == "completed"
    assert (
        not result.is_error and "<result>done: Write the notes</result>" in result.content[0].text
    )


SERVE_WITH_A_MODEL = """
import asyncio, sys
import taskloom
from taskloom.mcp import McpConfig, TaskSettings, serve_stdio
from taskloom.tools.spec import ToolContext
from tests.test_llm_robust import extract_cfg

tl = taskloom.connect(sys.argv[1])
tl.guard_config = extract_cfg(sys.argv[2])
config = McpConfig("worker", TaskSettings(poll_interval_s=0.2))
asyncio.run(serve_stdio(tl, ToolContext("t1", "analyst"), config))
"""
"""An MCP server whose guard asks a model (the test's loopback provider) to extract."""


def _serve_with_a_model(db: str, model_url: str, tmp_path: Path) -> Stdio:
    env = subprocess_env()
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env["PYTHONPATH"]
    argv = [sys.executable, "-c", SERVE_WITH_A_MODEL, db, model_url]
    return Stdio(argv, tmp_path / "stderr.txt", env)


def test_a_slow_call_runs_on_a_worker_and_a_restarted_server_takes_it_up(
    db_url: str, tmp_path: Path, openai_server: tuple[Any, str]
) -> None:
    """An extraction that asks the model is an MCP task run by a worker of the server. The
    server dies (kill -9) while the model call hangs; a new server, polled for the task,
    takes the call up again (its dead process's claim is given back at once) and answers."""
    from tests.test_llm_extract_queries import WEAK
    from tests.test_llm_robust import extract_cfg, stash_log

    provider, url = openai_server
    gate = threading.Event()

    def reply(system: str, prompt: str) -> tuple[int, str]:
        gate.wait(60)  # the first server dies while its call waits here
        return 200, "batch 7 was processed in 12ms"

    provider.reply = reply
    with taskloom.connect(db_url) as tl:
        result_id = stash_log(tl, extract_cfg(url))
    first = _serve_with_a_model(db_url, url, tmp_path)
    call = {"name": "extract_from_result", "arguments": {"result_id": result_id, "query": WEAK}}
    created = first.call("tools/call", call)["result"]
    assert created["resultType"] == "task" and created["pollIntervalMs"] == 200
    running = first.call("tasks/get", {"taskId": created["taskId"]})["result"]
    assert running["status"] == "working"
    deadline = time.monotonic() + 60
    while not provider.requests:  # the worker has asked the model
        assert time.monotonic() < deadline, "the call never reached the model"
        time.sleep(0.05)
    first.kill()
    asked_first = len(provider.requests)
    gate.set()
    second = _serve_with_a_model(db_url, url, tmp_path)
    done = second.poll(created["taskId"], "completed")
    second.close()
    assert len(provider.requests) > asked_first  # asked again, by the second server
    assert done["result"]["isError"] is False
    assert "method: LLM map-reduce" in done["result"]["content"][0]["text"]
    with taskloom.connect(db_url) as tl:
        [run] = tl.queue.list(status="completed")
        assert run.kind == "taskloom.mcp-call" and run.attempts == 2


def test_a_forged_call_in_the_queue_never_runs_on_another_thread(
    db_url: str, tmp_path: Path
) -> None:
    """A task shaped as a server's own call (kind ``taskloom.mcp-call`` for the agent
    ``taskloom-mcp``), added by anyone who may add tasks, whose payload names another thread
    and agent; a slow call then starts the server's call runner, which ran the forged ``todo
    add`` on the other thread. A call runs only as its MCP task's record says, so the forged
    task ends dead, unrun, saying why."""
    from taskloom.mcp.runs import CALL_KIND, NOT_A_CALL, RUNNER_AGENT

    forged = {
        "mcp_task": "not-a-task",
        "tool": "todo",
        "arguments": {"op": "add", "content": "written from another thread"},
        "thread": "victim",
        "agent": "victim-agent",
    }
    with taskloom.connect(db_url) as tl:
        task, _ = tl.queue.add(
            "Looks like a call", kind=CALL_KIND, target_agent=RUNNER_AGENT, payload=forged
        )
    server = mcp(db_url, "attacker", "evil", tmp_path, "--tools", "planner")
    waited = server.call("tools/call", {"name": "goal_wait", "arguments": {}})
    server.poll(waited["result"]["taskId"], "completed")
    deadline = time.monotonic() + 20
    with taskloom.connect(db_url) as tl:
        while tl.queue.get(task.id).status != "dead" and time.monotonic() < deadline:
            time.sleep(0.1)
        ended = tl.queue.get(task.id)
        server.close()
        assert tl.board("victim").list()["cards"] == []
        assert tl.board("attacker").list()["cards"] == []
    assert ended.status == "dead" and NOT_A_CALL in (ended.last_error or "")


def test_a_model_may_not_delegate_a_task_of_taskloom_s_own_kinds(
    db_url: str, tmp_path: Path
) -> None:
    server = mcp(db_url, "attacker", "evil", tmp_path, "--tools", "planner")
    arguments = {"title": "Looks like a call", "kind": " taskloom.mcp-call", "payload": {}}
    refused = server.call("tools/call", {"name": "task_delegate", "arguments": arguments})
    server.close()
    result = refused["result"]
    assert result["isError"] is True
    assert (
        "kinds that start with 'taskloom.' are taskloom's own work"
        in (result["content"][0]["text"])
    )
    with taskloom.connect(db_url) as tl:
        assert tl.queue.list() == []


def test_a_task_is_kept_for_its_time_to_live_then_gone(db_url: str, tmp_path: Path) -> None:
    """``--task-ttl``: the task says how long it is kept (``ttlMs``), and once that time has
    passed, ``tasks/get`` answers as for an id never made, and its record is deleted."""
    from taskloom.store import mcp_tasks

    server = mcp(db_url, "planning", "boss", tmp_path, "--tools", "planner", "--task-ttl", "3")
    created = delegate(server, "Short-lived")
    assert created["ttlMs"] == 3000
    kept = server.call("tasks/get", {"taskId": created["taskId"]})["result"]
    time.sleep(3.2)
    gone = server.call("tasks/get", {"taskId": created["taskId"]})
    delegate(server, "Another")  # a new task deletes the expired records
    server.close()
    assert kept["status"] == "working"
    assert gone["error"] == {"code": -32602, "message": "Failed to retrieve task: task not found"}
    with taskloom.connect(db_url) as tl:
        assert mcp_tasks.get(tl.store, created["taskId"], 0.0) is None  # deleted, not hidden


def test_a_database_gone_is_an_error_with_its_reason_for_tasks_and_their_calls(
    tmp_path: Path,
) -> None:
    """The database goes away under a running server: ``tasks/get``, ``tasks/cancel`` and
    ``tasks/update`` answer -32603 with the reason (they said only "Internal server error"),
    and a long call answers a tool error, as the same call without the extension does; no
    traceback is logged."""
    server_url = needed_pg_server()
    name = f"tl_gone_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = with_database(server_url, name)
    server = mcp(url, "planning", "boss", tmp_path, "--tools", "planner,goal_wait")
    try:
        created = delegate(server, "Before the outage")
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        errors = [
            server.call(method, {"taskId": created["taskId"]})["error"]
            for method in ("tasks/get", "tasks/cancel", "tasks/update")
        ]
        calls = [
            server.call("tools/call", {"name": tool, "arguments": arguments})["result"]
            for tool, arguments in (("task_delegate", {"title": "During"}), ("goal_wait", {}))
        ]
        server.close()
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
    assert {e["code"] for e in errors} == {-32603}
    assert all(e["message"].startswith("database unreachable: ") for e in errors), errors
    assert all(c["isError"] for c in calls), calls
    assert all(
        c["content"][0]["text"].startswith("error: database unreachable: ") for c in calls
    ), calls
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text(encoding="utf-8")


def with_database(server_url: str, database: str) -> str:
    """``server_url`` with its database changed to ``database``."""
    return join_url(urlsplit(server_url)._replace(path=f"/{database}"))
