"""`taskloom mcp` as a real subprocess, driven by the official MCP SDK client over stdio."""

from __future__ import annotations

import asyncio
import json
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

import taskloom
from tests.conftest import Server, subprocess_env


def params(db: str, thread: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "taskloom", "mcp", "--thread", thread, "--db", db],
        env=subprocess_env(),
    )


async def _session_calls(db: str, thread: str, title: str) -> dict[str, object]:
    async with (
        stdio_client(params(db, thread)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        added = await session.call_tool("todo", {"op": "add", "content": title})
        bad = await session.call_tool("todo", {"op": "add"})
        listed = await session.call_tool("todo", {"op": "list"})
        board = await session.read_resource("taskloom://board")
        templates = await session.list_resource_templates()  # none, but answered
        return {
            "names": [t.name for t in tools.tools],
            "templates": templates.resource_templates,
            "added": added,
            "bad": bad,
            "listed": listed.content[0].text,  # type: ignore[union-attr]
            "board": board.contents[0].text,  # type: ignore[union-attr]
        }


def test_mcp_stdio_tools_errors_and_thread_isolation(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'mcp.db'}"

    async def both() -> list[dict[str, object]]:
        return list(
            await asyncio.gather(
                _session_calls(db, "thread-a", "only in a"),
                _session_calls(db, "thread-b", "only in b"),
            )
        )

    a, b = asyncio.run(asyncio.wait_for(both(), 120))
    with taskloom.connect(db) as tl:
        registry = tl.tools.names()
    assert a["names"] == registry  # the MCP tool list is the registry
    assert not a["added"].is_error  # type: ignore[attr-defined]
    assert a["templates"] == []
    assert a["bad"].is_error  # type: ignore[attr-defined]
    assert "op 'add' needs `content`" in a["bad"].content[0].text  # type: ignore[attr-defined]
    assert "only in a" in str(a["listed"]) and "only in b" not in str(a["listed"])
    assert "only in b" in str(b["board"]) and "only in a" not in str(b["board"])


def test_mcp_stdio_answers_every_request_when_input_ends_early(tmp_path: Path) -> None:
    """A client that writes all its requests and closes stdin (a script, ``< calls.jsonl``)
    still gets every answer: the end of input waits for the requests in flight."""
    db = f"sqlite:///{tmp_path / 'piped.db'}"
    adds = [_call("todo", {"op": "add", "content": f"item {i}"}) for i in range(1, 21)]
    answers, _ = _pipe(db, "piped", adds)
    assert sorted(answers) == list(range(21))
    assert not any(a.get("error") or a["result"].get("isError") for a in answers.values())
    with taskloom.connect(db) as tl:
        cards = tl.board("piped").list()["cards"]
        assert sorted(c["title"] for c in cards) == sorted(f"item {i}" for i in range(1, 21))


async def _http_session(url: str, thread: str | None, title: str) -> dict[str, object]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"X-Taskloom-Thread": thread, "X-Taskloom-Agent": "agent-x"} if thread else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(f"{url}/mcp?tools=default,todo_write", http_client=http) as (
            read,
            write,
        ),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        added = await session.call_tool("todo", {"op": "add", "content": title})
        listed = await session.call_tool("todo", {"op": "list"})
        todos = [{"content": title, "status": "completed", "activeForm": title}]
        completed = await session.call_tool("todo_write", {"todos": todos})
        board = await session.read_resource("taskloom://board") if thread else None
        return {
            "names": [t.name for t in tools.tools],
            "added": added,
            "completed": completed,
            "listed": listed.content[0].text,  # type: ignore[union-attr]
            "board": board.contents[0].text if board else "",  # type: ignore[union-attr]
        }


def test_mcp_streamable_http_on_serve_binds_threads_from_headers(tmp_path: Path) -> None:
    server = Server(f"sqlite:///{tmp_path / 'mcp-http.db'}")
    server.start()
    try:

        async def three() -> list[dict[str, object]]:
            return list(
                await asyncio.gather(
                    _http_session(server.url, "thread-a", "only in a"),
                    _http_session(server.url, "thread-b", "only in b"),
                    _http_session(server.url, None, "nowhere"),
                )
            )

        a, b, unbound = asyncio.run(asyncio.wait_for(three(), 120))
        # DNS rebinding: a page on another origin cannot reach the tools through a browser.
        rebound = httpx.post(
            f"{server.url}/mcp",
            headers={"Host": "evil.example", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
        assert rebound.status_code in (403, 421)
    finally:
        server.kill()
    with taskloom.connect(server.db_url) as tl:
        assert a["names"] == tl.tools.names(profile="default,todo_write")  # ?tools= chose them
        for thread, title in (("thread-a", "only in a"), ("thread-b", "only in b")):
            cards = tl.board(thread).list()["cards"]
            assert [(c["title"], c["status"]) for c in cards] == [(title, "done")]
    assert not a["added"].is_error  # type: ignore[attr-defined]
    assert "only in a" in str(a["listed"]) and "only in b" not in str(a["listed"])
    assert "only in b" in str(b["listed"]) and "only in a" not in str(b["listed"])
    assert not b["completed"].is_error  # type: ignore[attr-defined]
    assert "only in a" in str(a["board"]) and "only in b" not in str(a["board"])
    assert unbound["added"].is_error  # type: ignore[attr-defined]
    unbound_error = unbound["added"].content[0].text  # type: ignore[attr-defined]
    assert "needs a thread: send the X-Taskloom-Thread header" in unbound_error


def test_the_end_of_input_waits_only_for_requests_that_will_be_answered() -> None:
    """A request cancelled by the client (its id sent back as text, as clients may) gets no
    answer and is not waited for; a reused id waits for both answers."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    from taskloom.mcp.stdio import _Unanswered

    def request(request_id: int) -> SessionMessage:
        return SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="ping"))

    cancel = types.JSONRPCNotification(
        jsonrpc="2.0", method="notifications/cancelled", params={"requestId": "7"}
    )
    answer = SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=8, result={}))

    async def scenario() -> bool:
        unanswered = _Unanswered()
        for item in (request(7), request(8), request(8), SessionMessage(cancel), answer):
            unanswered.read(item)
            unanswered.sent(item)
        with anyio.move_on_after(0.2):
            await unanswered.drained()
            return False  # drained while one answer for 8 is still owed
        unanswered.sent(answer)
        with anyio.fail_after(5):
            await unanswered.drained()
        return True

    assert anyio.run(scenario)


def _opening() -> list[str]:
    """The lines a client opens with: ``initialize`` (id 0), then ``initialized``."""
    init = {"protocolVersion": "2025-06-18", "capabilities": {}}
    init["clientInfo"] = {"name": "script", "version": "1"}
    return [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]


def _command(db: str, thread: str) -> list[str]:
    return [sys.executable, "-m", "taskloom", "mcp", "--thread", thread, "--db", db]


def _pipe_lines(db: str, thread: str, lines: list[str]) -> tuple[list[dict], str]:
    """Pipe ``lines`` to ``taskloom mcp`` in one go, as a script does, and close stdin; the
    answers in the order written (each checked to be a JSON-RPC message) and the stderr."""
    done = subprocess.run(
        _command(db, thread),
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=subprocess_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert all(a["jsonrpc"] == "2.0" for a in answers), done.stdout  # stdout is the wire only
    return answers, done.stderr


def _pipe(db: str, thread: str, requests: list[dict[str, object]]) -> tuple[dict[int, dict], str]:
    """Pipe ``initialize`` and ``requests`` (ids 1, 2, …) to ``taskloom mcp`` in one go, as a
    script does; the answers by id, and what the server wrote on stderr."""
    lines = [_line(i, r) for i, r in enumerate(requests, start=1)]
    answers, stderr = _pipe_lines(db, thread, _opening() + lines)
    return {a["id"]: a for a in answers}, stderr


def _line(request_id: int, request: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, **request})


def _call(name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"method": "tools/call", "params": {"name": name, "arguments": arguments}}


def test_mcp_stdio_applies_piped_tool_calls_in_the_order_received(tmp_path: Path) -> None:
    """The SDK runs each request as its own task; tool calls (and resource reads) of one
    session still take effect one at a time, in order, so a later one sees every earlier."""
    adds = [_call("todo", {"op": "add", "content": f"item {i}"}) for i in range(1, 11)]
    board = {"method": "resources/read", "params": {"uri": "taskloom://board"}}
    db = f"sqlite:///{tmp_path / 'ordered.db'}"
    answers, _ = _pipe(db, "ordered", [*adds, _call("todo", {"op": "list"}), board])
    assert not any(a.get("error") or a["result"].get("isError") for a in answers.values())
    in_order = [f"item {i}" for i in range(1, 11)]
    listed = answers[11]["result"]["content"][0]["text"]
    assert re.findall(r"item \d+", listed) == in_order, listed
    read = answers[12]["result"]["contents"][0]["text"]
    assert re.findall(r"item \d+", read) == in_order, read
    with taskloom.connect(db) as tl:
        assert [c["title"] for c in tl.board("ordered").list()["cards"]] == in_order


def test_mcp_stdio_without_an_agent_says_how_to_name_one(tmp_path: Path) -> None:
    """``task_next`` is in the default profile; served without ``--agent`` it refuses, and
    the error says how the host names the agent (it said only that none was bound)."""
    answers, _ = _pipe(f"sqlite:///{tmp_path / 'agent.db'}", "t", [_call("task_next", {})])
    result = answers[1]["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("error: the queue tools need an agent id, and this call has none")
    assert "taskloom mcp --agent" in text and "X-Taskloom-Agent" in text


def test_mcp_stdio_unknown_resource_is_a_resource_not_found_error(tmp_path: Path) -> None:
    read = {"method": "resources/read", "params": {"uri": "taskloom://nope"}}
    board = {"method": "resources/read", "params": {"uri": "taskloom://board"}}
    answers, stderr = _pipe(f"sqlite:///{tmp_path / 'res.db'}", "res", [read, board])
    error = answers[1]["error"]
    assert error["code"] == -32002  # the MCP spec's "resource not found" (2025-11-25)
    assert "taskloom://nope" in error["message"] and error["data"] == {"uri": "taskloom://nope"}
    assert "Traceback" not in stderr
    assert answers[2]["result"]["contents"][0]["uri"] == "taskloom://board"


def test_mcp_stdio_unknown_resource_error_cuts_a_long_uri(tmp_path: Path) -> None:
    """A 20,000-character URI came back whole in the error's message and data; the error
    repeats its first characters, as every other not-found text does."""
    from taskloom.domain.text import MAX_SHOWN_ID

    uri = "taskloom://" + "x" * 20_000
    read = {"method": "resources/read", "params": {"uri": uri}}
    answers, stderr = _pipe(f"sqlite:///{tmp_path / 'long.db'}", "res", [read])
    error = answers[1]["error"]
    shown = uri[:MAX_SHOWN_ID] + "…"
    assert error["code"] == -32002
    assert error["message"] == f"unknown resource '{shown}' (taskloom://board, taskloom://goal)"
    assert error["data"] == {"uri": shown}
    assert "x" * MAX_SHOWN_ID not in error["message"] and "Traceback" not in stderr


async def _http_header_session(url: str, thread: bytes | None) -> dict[str, object]:
    """One MCP session over HTTP whose thread header is raw bytes (as a client sends it)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    headers = {"X-Taskloom-Thread": thread, "X-Taskloom-Agent": "agent-é".encode()}
    async with (
        httpx2.AsyncClient(headers=headers if thread else {}, timeout=30) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        added = await session.call_tool("todo", {"op": "add", "content": "accented"})
        got: dict[str, object] = {"added": added.content[0].text, "error": added.is_error}  # type: ignore[union-attr]
        for uri in ("taskloom://board", "taskloom://nope"):
            try:
                got[uri] = (await session.read_resource(uri)).contents[0].text  # type: ignore[union-attr]
            except MCPError as exc:
                got[uri] = (exc.code, exc.message)
        return got


def test_mcp_http_headers_are_utf8_and_resource_errors_have_codes(tmp_path: Path) -> None:
    """``X-Taskloom-Thread: é-thread`` sent as UTF-8 is the same board as
    ``taskloom mcp --thread é-thread``; bytes that are not UTF-8 are refused, not misread.
    Reading a resource with no thread bound, or an unknown one, is a JSON-RPC error with
    the code the spec gives."""
    server = Server(f"sqlite:///{tmp_path / 'mcp-utf8.db'}")
    server.start()
    try:

        async def three() -> list[dict[str, object]]:
            return list(
                await asyncio.gather(
                    _http_header_session(server.url, "é-thread".encode()),
                    _http_header_session(server.url, b"caf\xe9"),  # Latin-1, not UTF-8
                    _http_header_session(server.url, None),
                )
            )

        utf8, latin1, unbound = asyncio.run(asyncio.wait_for(three(), 120))
    finally:
        server.kill()
    assert not utf8["error"] and "accented" in str(utf8["taskloom://board"])
    with taskloom.connect(server.db_url) as tl:
        assert [c["title"] for c in tl.board("é-thread").list()["cards"]] == ["accented"]
        assert [t["thread_id"] for t in tl.threads()] == ["é-thread"]
    nope = "unknown resource 'taskloom://nope' (taskloom://board, taskloom://goal)"
    assert utf8["taskloom://nope"] == (-32002, nope)
    assert latin1["error"] and "X-Taskloom-Thread header is not valid UTF-8" in str(latin1["added"])
    code, message = latin1["taskloom://board"]  # type: ignore[misc]
    assert code == -32602 and "not valid UTF-8" in message
    assert unbound["error"] and "needs a thread" in str(unbound["added"])
    code, message = unbound["taskloom://board"]  # type: ignore[misc]
    assert code == -32602 and "X-Taskloom-Thread" in message


class _Client:
    """``taskloom mcp`` driven as an MCP client drives it: stdin held open, one line at a
    time, each answer awaited for a bounded time, so a line the server leaves unanswered
    fails the test instead of hanging it."""

    def __init__(self, db: str, thread: str, stderr: Path) -> None:
        self._stderr = stderr.open("w", encoding="utf-8")
        self.proc = subprocess.Popen(
            _command(db, thread),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            env=subprocess_env(),
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        initialize, initialized = _opening()
        assert "result" in self.send(initialize, wait=60)
        self.write(initialized)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def write(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def send(self, line: str, wait: float = 10) -> dict:
        """Write ``line`` and return the next answer."""
        self.write(line)
        try:
            answer = self._lines.get(timeout=wait)
        except queue.Empty:
            pytest.fail(f"no answer within {wait}s to {line[:80]!r}")
        assert answer is not None, "the server exited"
        message = json.loads(answer)
        assert message["jsonrpc"] == "2.0", answer  # stdout is the wire only
        return message

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            assert self.proc.wait(timeout=60) == 0
        finally:
            self.proc.kill()
            self._stderr.close()


def _raw_call(request_id: int, arguments: str) -> str:
    """A ``todo`` tool call whose arguments are raw JSON text (not encoded by Python)."""
    call = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"todo","arguments":%s}}'
    return call % (request_id, arguments)


# Lines a client may send that are not a JSON-RPC message the SDK accepts: the line, the
# error code it must be answered with, and the id the answer must carry.
BAD_LINES = {
    "not JSON": ("this is not JSON", -32700, None),
    "cut short": ('{"jsonrpc":"2.0","id":7,"method":', -32700, None),
    "lone surrogate": (_raw_call(7, r'{"op":"add","content":"\ud83d"}'), -32600, 7),
    "lone surrogate id": (r'{"jsonrpc":"2.0","id":"\ud83d","method":"ping"}', -32600, None),
    "199 levels": (_raw_call(7, '{"op":"add","content":' + "[" * 199 + "]" * 199 + "}"), -32600, 7),
    "1100 levels": ('{"id":7,"x":' + "[" * 1100 + "]" * 1100 + "}", -32600, None),
    "4301 digits": (_raw_call(7, '{"op":"add","content":' + "9" * 4301 + "}"), -32600, 7),
    "4301-digit id": ('{"jsonrpc":"2.0","id":' + "9" * 4301 + ',"method":"ping"}', -32600, None),
    "no method": ('{"jsonrpc":"2.0","id":"seven"}', -32600, "seven"),
    "params a list": ('{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[]}', -32600, 7),
    "not an object": ("[1, 2]", -32600, None),
    "id not a string or integer": ('{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
    "bad response": (r'{"jsonrpc":"2.0","id":7,"result":"\ud83d"}', -32600, None),
    "a key twice": (_raw_call(7, '{"op":"list","op":"add","content":"x"}'), -32600, 7),
    "arguments as JSON text": (_raw_call(7, '"{\\"op\\": \\"list\\"}"'), -32602, 7),
    "arguments a list": (_raw_call(7, "[1, 2]"), -32602, 7),
    "no tool name": (
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}',
        -32602,
        7,
    ),
    "initialize without a protocol version": (
        '{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"capabilities":{},'
        '"clientInfo":{"name":"c","version":"1"}}}',
        -32602,
        7,
    ),
    "a read without a uri": ('{"jsonrpc":"2.0","id":7,"method":"resources/read"}', -32602, 7),
}
REASONS = {
    "a key twice": "the request gives the key 'op' twice",
    "arguments as JSON text": "params.arguments must be an object, not text (send the",
    "arguments a list": "params.arguments must be an object, not a list",
    "no tool name": "params.name must be the tool's name (text), not missing",
    "initialize without a protocol version": "params.protocolVersion: Field required",
    "a read without a uri": "params.uri: Field required",
}


@pytest.mark.parametrize(("line", "code", "request_id"), BAD_LINES.values(), ids=BAD_LINES.keys())
def test_mcp_stdio_answers_a_line_it_cannot_accept_then_goes_on(
    tmp_path: Path, line: str, code: int, request_id: object
) -> None:
    """Every line gets an answer: one that is not a JSON-RPC message is answered with an
    error (carrying its id when there is one to send back) and has no effect, and the
    next request is served as usual."""
    db = f"sqlite:///{tmp_path / 'bad.db'}"
    client = _Client(db, "bad", tmp_path / "stderr.txt")
    try:
        refused = client.send(line)
        assert refused["id"] == request_id, refused
        assert refused["error"]["code"] == code and refused["error"]["message"], refused
        reason = REASONS.get(next(k for k, v in BAD_LINES.items() if v[0] == line), "")
        assert reason in refused["error"]["message"], refused
        added = client.send(_line(8, _call("todo", {"op": "add", "content": "after"})))
        assert added["id"] == 8 and not added["result"]["isError"], added
        listed = client.send(_line(9, {"method": "tools/list"}))
        assert listed["id"] == 9 and listed["result"]["tools"]
    finally:
        client.close()
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    with taskloom.connect(db) as tl:
        assert [c["title"] for c in tl.board("bad").list()["cards"]] == ["after"]


def test_a_file_that_starts_with_a_byte_order_mark_is_served(tmp_path: Path) -> None:
    """``taskloom mcp < calls.jsonl`` of a file an editor saved with a byte order mark: its
    first line (the ``initialize``) is served, as JSON allows; it was a parse error, and
    every call after it was refused as made before the session was open."""
    db = f"sqlite:///{tmp_path / 'bom.db'}"
    lines = [*_opening(), _line(1, _call("todo", {"op": "add", "content": "from a BOM file"}))]
    lines[0] = "\ufeff" + lines[0]
    answers, _ = _pipe_lines(db, "bom", lines)
    by_id = {a["id"]: a for a in answers}
    assert set(by_id) == {0, 1} and "result" in by_id[0], answers
    assert not by_id[1]["result"]["isError"], by_id[1]
    with taskloom.connect(db) as tl:
        assert [c["title"] for c in tl.board("bom").list()["cards"]] == ["from a BOM file"]


def test_mcp_stdio_answers_piped_bad_lines_and_applies_the_rest_in_order(tmp_path: Path) -> None:
    """A script's bad lines, the last one included, are each answered; the good lines around
    them take effect in the order read."""
    db = f"sqlite:///{tmp_path / 'piped-bad.db'}"
    lines = [
        _line(1, _call("todo", {"op": "add", "content": "item 1"})),
        "not JSON",
        _raw_call(2, r'{"op":"add","content":"\ud83d"}'),
        _line(3, _call("todo", {"op": "add", "content": "item 3"})),
        _line(4, _call("todo", {"op": "list"})),
        "",  # blank lines are skipped, not answered
        '{"jsonrpc":"2.0","id":5,"method":',
    ]
    answers, stderr = _pipe_lines(db, "piped-bad", _opening() + lines)
    by_id = {a["id"]: a for a in answers}
    assert len(answers) == 7 and set(by_id) == {0, 1, 2, 3, 4, None}, answers
    assert [a["error"]["code"] for a in answers if a["id"] is None] == [-32700, -32700]
    assert by_id[2]["error"]["code"] == -32600
    assert not any(by_id[i]["result"]["isError"] for i in (1, 3, 4))
    assert re.findall(r"item \d+", by_id[4]["result"]["content"][0]["text"]) == ["item 1", "item 3"]
    assert "Traceback" not in stderr


Call = tuple[dict[str, str], str, dict[str, object]]
"""One tool call of a session: the headers it is sent with, the tool, its arguments."""


async def _one_session(url: str, calls: list[Call]) -> list[tuple[bool, str]]:
    """``calls`` in one MCP session over HTTP, each with its own headers; whether each
    answer was an error, and its text."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    answers: list[tuple[bool, str]] = []
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for headers, tool, args in calls:
            http.headers.clear()
            http.headers.update(headers)
            result = await session.call_tool(tool, args)
            answers.append((result.is_error, result.content[0].text))  # type: ignore[union-attr]
    return answers


def _in_one_session(url: str, calls: list[Call]) -> list[tuple[bool, str]]:
    return asyncio.run(asyncio.wait_for(_one_session(url, calls), 120))


def test_an_mcp_http_session_keeps_the_thread_of_its_first_call(tmp_path: Path) -> None:
    """A session that changed its X-Taskloom-Thread header midway read and cleared another
    thread's board under its old session id."""
    db = f"sqlite:///{tmp_path / 'pinned.db'}"
    with taskloom.connect(db) as tl:
        tl.board("bob").add("bob's private card")
    server = Server(db)
    server.start()
    try:
        # It forgets its thread header on its first call, sends alice's, then bob's.
        answers = _in_one_session(
            server.url,
            [
                ({}, "todo", {"op": "list"}),
                ({"X-Taskloom-Thread": "alice"}, "todo", {"op": "add", "content": "alice's card"}),
                ({"X-Taskloom-Thread": "bob"}, "todo", {"op": "list"}),
                ({"X-Taskloom-Thread": "bob"}, "todo", {"op": "clear"}),
                ({"X-Taskloom-Thread": "alice"}, "todo", {"op": "list"}),
            ],
        )
    finally:
        server.kill()
    (forgot_error, forgot), (added_error, _), *switched, (back_error, back) = answers
    assert forgot_error and "needs a thread" in forgot
    assert not added_error and not back_error and "alice's card" in back
    for is_error, text in switched:
        assert is_error and "bound to thread 'alice'" in text
        assert "bob's private card" not in text
    with taskloom.connect(db) as tl:
        assert [c["title"] for c in tl.board("bob").list()["cards"]] == ["bob's private card"]


def test_an_mcp_http_session_keeps_the_agent_of_its_first_call(tmp_path: Path) -> None:
    """A session bound only to an agent (a queue worker, no thread) could change its agent
    header midway and claim the tasks meant for another agent; naming a thread it had left
    out is still fine, and a call without headers acts as the session's agent."""
    db = f"sqlite:///{tmp_path / 'pinned-agent.db'}"
    with taskloom.connect(db) as tl:
        for n in (1, 2):
            tl.queue.add(f"for a {n}", target_agent="a")
        for_b, _ = tl.queue.add("for b", target_agent="b")
    server = Server(db)
    server.start()
    try:
        # It claims as agent a (no thread header), tries to claim as b, then names a thread.
        answers = _in_one_session(
            server.url,
            [
                ({"X-Taskloom-Agent": "a"}, "task_next", {}),
                ({"X-Taskloom-Agent": "b"}, "task_next", {}),
                ({"X-Taskloom-Agent": "a", "X-Taskloom-Thread": "t"}, "todo", {"op": "list"}),
                ({}, "task_next", {}),
            ],
        )
    finally:
        server.kill()
    (first_error, first), (b_error, b_text), (thread_error, _), (bare_error, bare) = answers
    assert not first_error and "for a 1" in first
    assert b_error and "bound to thread None and agent 'a'" in b_text
    assert "X-Taskloom-Agent header cannot change" in b_text
    assert not thread_error
    assert not bare_error and "for a 2" in bare
    with taskloom.connect(db) as tl:
        assert tl.queue.get(for_b.id).status.value == "ready"
        assert sorted(t.title for t in tl.queue.list(status="in_progress")) == [
            "for a 1",
            "for a 2",
        ]


def test_reads_go_on_while_many_writers_wait_for_the_lock(tmp_path: Path) -> None:
    """Writers waiting for SQLite's write lock (another process holds it) filled asyncio's
    six default threads, and every other request waited behind them, reads included."""
    import sqlite3

    path = tmp_path / "busy.db"
    with taskloom.connect(f"sqlite:///{path}") as tl:
        tl.board("t").add("readable while writers wait")
    server = Server(f"sqlite:///{path}")
    server.start()
    holder = sqlite3.connect(path, isolation_level=None)
    answers: list[int] = []
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:

            def write(i: int) -> None:
                answers.append(client.post(f"/api/threads/w{i}/goal/pause").status_code)

            holder.execute("BEGIN IMMEDIATE")  # the write lock, held as a long job would
            writers = [threading.Thread(target=write, args=(i,)) for i in range(12)]
            for writer in writers:
                writer.start()
            time.sleep(1)  # the writers are in, each waiting for the lock
            try:
                read = client.get("/api/threads/t/board", timeout=5)
            finally:
                holder.execute("ROLLBACK")
            for writer in writers:
                writer.join(60)
        assert read.status_code == 200 and "readable" in read.text
        assert answers == [404] * 12  # each went on once the lock was free: no goal there
    finally:
        holder.close()
        server.kill()


def test_mcp_over_http_answers_a_body_it_cannot_accept_as_stdio_does(tmp_path: Path) -> None:
    """The same bad message gets the same error code over both transports (the SDK answered
    HTTP's with -32602, "invalid params", and its model's whole validation dump)."""
    server = Server(f"sqlite:///{tmp_path / 'mcp-bad.db'}")
    server.start()
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    try:
        for name, (line, code, request_id) in BAD_LINES.items():
            answer = httpx.post(f"{server.url}/mcp", content=line.encode(), headers=headers)
            assert answer.status_code == 400, (name, answer.text)
            error = answer.json()
            assert (error["id"], error["error"]["code"]) == (request_id, code), (name, error)
            assert "validation error" not in error["error"]["message"], (name, error)
        not_utf8 = httpx.post(f"{server.url}/mcp", content=b'{"id":\xff}', headers=headers)
        assert not_utf8.status_code == 400 and not_utf8.json()["error"]["code"] == -32700
        huge = httpx.post(f"{server.url}/mcp", content=b" " * (5 * 1024 * 1024), headers=headers)
        assert huge.status_code == 413
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
        opened = httpx.post(f"{server.url}/mcp", json=hello, headers=headers)
        assert opened.status_code == 200 and "mcp-session-id" in opened.headers, opened.text
    finally:
        server.kill()
