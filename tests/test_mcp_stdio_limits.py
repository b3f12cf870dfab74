"""``taskloom mcp`` reads a line of stdin up to the size ``/mcp`` reads a body: a longer one
is answered and dropped a piece at a time, never held whole in memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from taskloom.mcp.messages import MAX_MESSAGE
from tests.conftest import subprocess_env


def test_a_line_over_the_limit_is_refused_and_the_next_one_answered(tmp_path: Path) -> None:
    ping = b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n'
    big = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "'
    big += b"a" * (MAX_MESSAGE + 10) + b'"}}\n'
    last = b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"x": "'
    last += b"b" * (2 * MAX_MESSAGE)  # the input ends inside it
    argv = [sys.executable, "-m", "taskloom", "mcp", "--thread", "t", "--agent", "a"]
    done = subprocess.run(
        [*argv, "--db", f"sqlite:///{tmp_path / 'limits.db'}"],
        input=big + ping + last,
        capture_output=True,
        env=subprocess_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    over = f"Invalid request: over {MAX_MESSAGE} bytes"
    assert answers == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": over}},
        {"jsonrpc": "2.0", "id": 2, "result": {}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": over}},
    ]
    assert b"Traceback" not in done.stderr
