"""A client that gives up on a call (``notifications/cancelled``, or gone) frees what the call
held: a waiting tool stops at its next look, so its thread, the session's order and the end
of the process wait for nobody."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import subprocess_env


def _line(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return (
        json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n"
    ).encode()


def _call(request_id: int, name: str, arguments: dict[str, Any]) -> bytes:
    return _line(request_id, "tools/call", {"name": name, "arguments": arguments})


def _cancel(request_id: int) -> bytes:
    params = {"requestId": request_id, "reason": "the user pressed stop"}
    return (
        json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}) + "\n"
    ).encode()


def _answer(proc: subprocess.Popen[bytes], wait: float = 30) -> dict[str, Any]:
    """The next line the server writes, within ``wait`` seconds."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], wait)
    assert ready, f"no answer within {wait}s"
    return dict(json.loads(proc.stdout.readline()))


def test_a_cancelled_wait_stops_at_once_and_the_session_goes_on(
    db_url: str, tmp_path: Path
) -> None:
    """``goal_wait`` and ``task_wait`` for 300 s, each cancelled: the next call answers, and
    the server exits as soon as its input ends, not 300 s later."""
    argv = [sys.executable, "-m", "taskloom", "mcp", "--thread", "t", "--agent", "a"]
    stderr = (tmp_path / "stderr.txt").open("wb")
    proc = subprocess.Popen(
        [*argv, "--tools", "all", "--db", db_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
        stderr=stderr,
        env=subprocess_env(),
    )
    assert proc.stdin is not None
    try:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}}
        init["clientInfo"] = {"name": "canceller", "version": "1"}
        proc.stdin.write(_line(0, "initialize", init))
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        proc.stdin.write(_call(1, "goal_set", {"objective": "ship it"}))
        proc.stdin.write(_call(2, "task_delegate", {"title": "nobody takes this"}))
        proc.stdin.flush()
        answers = [_answer(proc) for _ in range(3)]
        assert [a["id"] for a in answers] == [0, 1, 2]
        delegated = answers[2]["result"]["content"][0]["text"]
        task_id = delegated.split("Task ", 1)[1].split(" ", 1)[0]

        proc.stdin.write(_call(3, "goal_wait", {"wait_s": 300}))
        proc.stdin.write(_call(4, "task_wait", {"task_id": task_id, "wait_s": 300}))
        proc.stdin.flush()
        time.sleep(0.5)
        proc.stdin.write(_cancel(3))
        proc.stdin.flush()
        time.sleep(2)  # goal_wait stops within a second of looks; task_wait starts
        proc.stdin.write(_cancel(4))
        proc.stdin.write(_call(5, "goal_get", {}))
        proc.stdin.flush()
        started = time.monotonic()
        after = _answer(proc)  # no answer to 3 or 4: they were cancelled
        assert after["id"] == 5 and "ship it" in after["result"]["content"][0]["text"]
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        assert time.monotonic() - started < 15
    finally:
        proc.kill()
        proc.wait()
        stderr.close()
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text(encoding="utf-8")
