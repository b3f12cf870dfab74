"""What an ending ``taskloom mcp`` does to the slow calls it runs
(:func:`taskloom.mcp.runs.on_exit`).

Every server is a real process over stdio on a real database; it ends by the end of its
stdin, SIGTERM, SIGINT or SIGKILL while a call runs, and the database says how the call
ended; a new server, polled for the task, answers truthfully and finishes what may be run
again.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import taskloom
from taskloom.mcp.runs import CALL_KIND, SERVER_EXITED
from tests.conftest import subprocess_env
from tests.test_mcp_goal_tasks import goal_wait, running, supervisor, text
from tests.test_mcp_tasks import ROOT, Stdio

ENDS = {"eof": None, "sigterm": signal.SIGTERM, "sigint": signal.SIGINT}


def end(server: Stdio, how: str) -> float:
    """End ``server`` as ``how`` says; how long it took to exit (it must, with 0)."""
    started = time.monotonic()
    if how == "eof":
        assert server.proc.stdin is not None
        server.proc.stdin.close()
    else:
        server.proc.send_signal(ENDS[how])
    assert server.proc.wait(timeout=10) == 0
    return time.monotonic() - started


def no_traceback(stderr: Path) -> None:
    said = stderr.read_text(encoding="utf-8")
    assert "Traceback" not in said and "Fatal" not in said and "Error" not in said, said


def call_task(tl: taskloom.Taskloom) -> Any:
    [task] = tl.queue.list(kinds=CALL_KIND)
    return task


@pytest.mark.parametrize("how", list(ENDS))
def test_an_orderly_exit_gives_a_running_goal_wait_back_for_the_next_server(
    db_url: str, tmp_path: Path, how: str
) -> None:
    """A goal_wait runs on the server's runner when the server ends (stdin closed, SIGTERM,
    SIGINT). The server exits at once, cleanly, its wait's queue task given back unclaimed
    (the attempt not counted), where it stayed in progress under the dead server's lease;
    the MCP task is working, waiting for a worker; a new server takes the wait up and
    answers with the goal's end."""
    with taskloom.connect(db_url) as tl:
        tl.goal("release").set("Ship v2.0")
        first = supervisor(db_url, tmp_path)
        created = goal_wait(first, 300)
        running(first, created["taskId"])
        took = end(first, how)
        given_back = call_task(tl)
        second = supervisor(db_url, tmp_path)
        waiting = second.call("tasks/get", {"taskId": created["taskId"]})["result"]
        running(second, created["taskId"])
        tl.goal("release").complete("tagged v2.0.0", host=False)
        done = second.poll(created["taskId"], "completed")
        second.close()
    no_traceback(tmp_path / "stderr.txt")
    assert took < 10
    assert given_back.status == "ready" and given_back.attempts == 0, given_back
    assert waiting["status"] == "working"
    assert text(done).startswith("The goal has ended: it is complete.\n")


def test_a_killed_server_s_goal_wait_is_taken_up_by_the_next_server(
    db_url: str, tmp_path: Path
) -> None:
    """kill -9 leaves the wait in progress under the dead process's claim; the next server,
    polled for the task, sweeps the claim and runs the wait again to its end."""
    with taskloom.connect(db_url) as tl:
        tl.goal("release").set("Ship v2.0")
        first = supervisor(db_url, tmp_path)
        created = goal_wait(first, 300)
        running(first, created["taskId"])
        first.kill()
        assert call_task(tl).status == "in_progress"
        second = supervisor(db_url, tmp_path)
        running(second, created["taskId"])
        tl.goal("release").block("needs the signing key")
        done = second.poll(created["taskId"], "completed")
        second.close()
        assert call_task(tl).attempts == 2
    assert text(done).startswith("The goal has ended: it is blocked.\n")


SERVE_A_DEPLOY = """
import asyncio, sys, time
import taskloom
from pydantic import BaseModel
from taskloom.mcp import McpConfig, TaskSettings, serve_stdio
from taskloom.tools.spec import ToolContext, ToolResult, ToolSpec

class Args(BaseModel):
    listens: bool = True

def deploy(env, args, ctx):
    with open(sys.argv[2], "a") as log:
        log.write("deployed\\n")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if args.listens and ctx.cancelled():
            break
        time.sleep(0.05)
    return ToolResult(content="done")

tl = taskloom.connect(sys.argv[1])
rerun = sys.argv[3] == "rerun"
always = lambda env, ctx: True
tl.tools.registry.register(ToolSpec("deploy", "Deploy.", Args, deploy, slow=always, rerun=rerun))
config = McpConfig("deploy", TaskSettings(poll_interval_s=0.2))
asyncio.run(serve_stdio(tl, ToolContext("ops", "boss"), config))
"""
"""A server with a slow tool of the host's own, which has an effect (a line in a file) and
then waits, giving up when asked to (``listens``) or not."""


def serve_a_deploy(db: str, tmp_path: Path, rerun: bool) -> Stdio:
    env = subprocess_env()
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env["PYTHONPATH"]
    argv = [sys.executable, "-c", SERVE_A_DEPLOY, db, str(tmp_path / "deploys.txt")]
    return Stdio([*argv, "rerun" if rerun else "once"], tmp_path / "stderr.txt", env)


def deploy(server: Stdio, tmp_path: Path, listens: bool) -> str:
    """Start a deploy; its MCP task's id, once it has run its effect."""
    arguments = {"listens": listens}
    created = server.call("tools/call", {"name": "deploy", "arguments": arguments})["result"]
    assert created["resultType"] == "task", created
    deadline = time.monotonic() + 30
    while not (tmp_path / "deploys.txt").exists():
        assert time.monotonic() < deadline, "the deploy never started"
        time.sleep(0.05)
    return str(created["taskId"])


@pytest.mark.parametrize(
    ("rerun", "listens"),
    [(False, True), (False, False), (True, False)],
    ids=["effect-gives-up", "effect-deaf", "rerun-deaf"],
)
def test_an_orderly_exit_ends_each_call_as_its_tool_allows(
    db_url: str, tmp_path: Path, rerun: bool, listens: bool
) -> None:
    """A call of a tool with an effect ends failed, saying the server exited, its queue
    task dead, whether it gave up when asked or went on (ended by the exit, after its
    grace); a call that may run again and goes on is given back. Either way the server
    exits within seconds."""
    first = serve_a_deploy(db_url, tmp_path, rerun)
    task_id = deploy(first, tmp_path, listens)
    took = end(first, "sigterm")
    second = serve_a_deploy(db_url, tmp_path, rerun)
    shown = second.call("tasks/get", {"taskId": task_id})["result"]
    second.kill()
    with taskloom.connect(db_url) as tl:
        queued = call_task(tl)
    no_traceback(tmp_path / "stderr.txt")
    assert took < 10
    if rerun:
        assert queued.status in ("ready", "in_progress") and shown["status"] == "working"
        return
    assert queued.status == "dead" and queued.last_error == SERVER_EXITED
    assert shown["status"] == "failed" and shown["statusMessage"] == SERVER_EXITED


def test_a_killed_server_s_call_with_an_effect_is_not_run_again(
    db_url: str, tmp_path: Path
) -> None:
    """kill -9 during a call of a tool with an effect: the next server, polled for the
    task, sweeps the dead claim and ends the call failed without running it again."""
    first = serve_a_deploy(db_url, tmp_path, rerun=False)
    task_id = deploy(first, tmp_path, listens=True)
    first.kill()
    second = serve_a_deploy(db_url, tmp_path, rerun=False)
    failed = second.poll(task_id, "failed")
    second.close()
    with taskloom.connect(db_url) as tl:
        queued = call_task(tl)
    assert failed["statusMessage"] == SERVER_EXITED
    assert failed["error"]["message"] == SERVER_EXITED
    assert queued.status == "dead"
    assert (tmp_path / "deploys.txt").read_text() == "deployed\n"  # run once only


def test_taskloom_serve_stopped_by_sigterm_gives_its_goal_wait_back(db_url: str) -> None:
    """``/mcp`` on ``taskloom serve``: SIGTERM while a goal_wait runs on the server's runner
    stops the server within seconds, the wait's queue task given back as the app's
    lifespan ends."""
    from tests.conftest import Server
    from tests.test_mcp_protocols import _as, _post, _result

    with taskloom.connect(db_url) as tl:
        tl.goal("release").set("Ship v2.0")
        server = Server(db_url)
        server.start()
        try:
            mine = _as("release", "boss", "planner")
            call = {"name": "goal_wait", "arguments": {"wait_s": 300}}
            created = _result(_post(server.url, "tools/call", call, mine))
            deadline = time.monotonic() + 30
            while call_task(tl).status != "in_progress":
                assert time.monotonic() < deadline, "the wait never started"
                time.sleep(0.05)
            assert server.proc is not None
            server.proc.send_signal(signal.SIGTERM)
            assert server.proc.wait(timeout=10) == 0  # shut down in order
        finally:
            server.kill()
        given_back = call_task(tl)
    assert created["resultType"] == "task"
    assert given_back.status == "ready" and given_back.attempts == 0, given_back


@pytest.mark.parametrize("how", ["sigterm", "sigint"])
def test_a_signal_ends_a_plain_goal_wait_in_progress_and_the_server_at_once(
    db_url: str, tmp_path: Path, how: str
) -> None:
    """A goal_wait of a client without the Tasks extension waits in its request; SIGTERM or
    SIGINT answers it as a closed session's request and the server exits 0 within seconds,
    where SIGTERM killed it outright and SIGINT left it waiting for stdin to end."""
    from tests.mcp_tasks_client import modern

    with taskloom.connect(db_url) as tl:
        tl.goal("release").set("Ship v2.0")
    server = supervisor(db_url, tmp_path)
    server.call("tools/call", {"name": "goal_get", "arguments": {}}, tasks=False)  # it serves
    assert server.proc.stdin is not None
    call = {"name": "goal_wait", "arguments": {"wait_s": 300}}
    server.proc.stdin.write(modern(7, "tools/call", call, False) + "\n")
    server.proc.stdin.flush()
    time.sleep(0.5)  # the wait has started: it looks at the goal every second at most
    took = end(server, how)
    answer = json.loads(server._lines.get(timeout=10) or "null")
    no_traceback(tmp_path / "stderr.txt")
    assert took < 10
    assert answer["id"] == 7 and answer["error"]["code"] == -32000, answer


def test_a_client_that_stops_reading_ends_the_server_as_the_end_of_stdin_does(
    db_url: str, tmp_path: Path
) -> None:
    """The client closes its end of the server's stdout (it crashed, or ``| head -1``) while
    a goal_wait runs: the server ends as at the end of stdin, with exit status 0, nothing on
    stderr, and the wait given back for the next server. It died with exit status 1 and a
    BrokenPipeError traceback, leaving the wait in progress under its dead claim."""
    import subprocess

    from tests.mcp_tasks_client import modern

    stderr = tmp_path / "stderr.txt"
    with taskloom.connect(db_url) as tl, stderr.open("w", encoding="utf-8") as errors:
        tl.goal("release").set("Ship v2.0")
        argv = ["mcp", "--thread", "release", "--agent", "boss", "--tools", "planner"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "taskloom", *argv, "--db", db_url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=subprocess_env(),
        )
        assert proc.stdin is not None and proc.stdout is not None
        call = {"name": "goal_wait", "arguments": {"wait_s": 300}}
        proc.stdin.write(modern(1, "tools/call", call).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["result"]["resultType"] == "task"
        deadline = time.monotonic() + 30
        while call_task(tl).status.value != "in_progress":
            assert time.monotonic() < deadline, "the wait never started"
            time.sleep(0.05)
        proc.stdout.close()  # the client stops reading; its next request's answer fails
        proc.stdin.write(modern(2, "tools/list", {}).encode() + b"\n")
        proc.stdin.flush()
        try:
            status = proc.wait(timeout=30)
        finally:
            proc.kill()
            proc.stdin.close()
        given_back = call_task(tl)
    no_traceback(stderr)
    assert status == 0
    assert given_back.status.value == "ready" and given_back.attempts == 0, given_back
