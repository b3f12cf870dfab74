"""Both MCP protocol generations on one server: clients of 2025-11-25 (an ``initialize``
handshake, then a session) and of 2026-07-28 (no handshake, no session: every request
carries its own envelope). Over stdio the binding is the command line; over streamable HTTP
it is each request's headers, never tool arguments, and a 2025-11-25 session keeps the
thread, agent and tools of its first requests.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from typing import Any

import httpx
import pytest
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

import taskloom
from taskloom.server.app import create_app
from tests.conftest import Server, subprocess_env
from tests.mcp_tasks_client import (
    EXTENSION,
    MODERN,
    DetailedTask,
    GetTask,
    TaskIdParams,
    TasksClient,
    envelope,
)


def _stdio(db: str, thread: str, agent: str) -> StdioServerParameters:
    argv = ["mcp", "--thread", thread, "--agent", agent, "--db", db]
    return StdioServerParameters(
        command=sys.executable, args=["-m", "taskloom", *argv], env=subprocess_env()
    )


def test_both_generations_over_stdio(db_url: str) -> None:
    """A 2025-11-25 client (handshake) and a 2026-07-28 client (none) of ``taskloom mcp``
    both add to the board of the thread its command line names."""

    async def legacy() -> tuple[str | None, bool, int]:
        async with (
            stdio_client(_stdio(db_url, "shared", "old-client")) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            added = await session.call_tool("todo", {"op": "add", "content": "from 2025-11-25"})
            try:  # the Tasks extension's methods are 2026-07-28 ones
                await session.send_request(GetTask(params=TaskIdParams(task_id="x")), DetailedTask)
            except MCPError as exc:
                return init.protocol_version, added.is_error, exc.code
            raise AssertionError("tasks/get answered on a 2025-11-25 session")

    async def current() -> tuple[str | None, bool, Any]:
        async with Client(_stdio(db_url, "shared", "new-client"), mode="auto") as client:
            added = await client.call_tool("todo", {"op": "add", "content": "from 2026-07-28"})
            advertised = client.server_capabilities.extensions
            return client.protocol_version, added.is_error, advertised

    async def both() -> list[tuple[str | None, bool, Any]]:
        return [await legacy(), await current()]

    (old, old_error, no_tasks), (new, new_error, advertised) = asyncio.run(
        asyncio.wait_for(both(), 120)
    )
    assert (old, new) == ("2025-11-25", "2026-07-28")  # the new client found the new one
    assert not old_error and not new_error
    assert no_tasks == -32601 and advertised == {EXTENSION: {}}
    with taskloom.connect(db_url) as tl:
        titles = [c["title"] for c in tl.board("shared").list()["cards"]]
    assert titles == ["from 2025-11-25", "from 2026-07-28"]


def _post(
    url: str,
    method: str,
    params: dict[str, Any],
    headers: dict[str, str],
    tasks: bool = True,
    query: str = "",
) -> httpx.Response:
    """One 2026-07-28 request over streamable HTTP: its envelope, and the routing headers
    the transport asks for (``Mcp-Name``: the tool's or the task's name)."""
    name = params.get("name") or params.get("taskId")
    routing = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
        **({"Mcp-Name": str(name)} if name else {}),
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method}
    body["params"] = {**params, "_meta": envelope(tasks)}
    return httpx.post(f"{url}/mcp{query}", headers={**routing, **headers}, json=body, timeout=30)


def _result(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    assert "mcp-session-id" not in response.headers  # no session in this generation
    answer = response.json()
    assert "result" in answer, answer
    return dict(answer["result"])


def _as(thread: str | None, agent: str | None, tools: str | None = None) -> dict[str, str]:
    named = {"X-Taskloom-Thread": thread, "X-Taskloom-Agent": agent, "X-Taskloom-Tools": tools}
    return {k: v for k, v in named.items() if v is not None}


@pytest.fixture
def server(db_url: str) -> Any:
    running = Server(db_url)
    running.start()
    yield running
    running.kill()


def test_both_generations_over_http_bind_each_request_by_its_headers(server: Server) -> None:
    """A 2025-11-25 session and 2026-07-28 requests on one ``/mcp``: each acts on the thread
    and as the agent its headers name; a request without a session may name another agent
    (it is a connection of its own), a session may not."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async def session() -> tuple[str | None, bool, str]:
        headers = _as("legacy-thread", "agent-a")
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            streamable_http_client(f"{server.url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            added = await session.call_tool("todo", {"op": "add", "content": "legacy card"})
            http.headers["X-Taskloom-Agent"] = "agent-b"  # a switch midway: refused
            switched = await session.call_tool("task_next", {})
            return init.protocol_version, added.is_error, switched.content[0].text  # type: ignore[union-attr]

    version, error, switched = asyncio.run(asyncio.wait_for(session(), 120))
    add = {"name": "todo", "arguments": {"op": "add", "content": "modern card"}}
    added = _result(_post(server.url, "tools/call", add, _as("modern-thread", "agent-c")))
    with taskloom.connect(server.db_url) as tl:
        tl.queue.add("for d", target_agent="agent-d")
    claim = {"name": "task_next", "arguments": {}}
    claimed = _result(_post(server.url, "tools/call", claim, _as(None, "agent-d")))
    unbound = _result(_post(server.url, "tools/call", add, _as(None, "agent-c")))
    assert version == "2025-11-25" and not error
    assert "its X-Taskloom-Agent header cannot change" in switched
    assert added["isError"] is False and claimed["isError"] is False
    assert "for d" in claimed["content"][0]["text"]
    assert unbound["isError"] is True
    assert "needs a thread: send the X-Taskloom-Thread header" in unbound["content"][0]["text"]
    with taskloom.connect(server.db_url) as tl:
        assert [c["title"] for c in tl.board("legacy-thread").list()["cards"]] == ["legacy card"]
        assert [c["title"] for c in tl.board("modern-thread").list()["cards"]] == ["modern card"]
        [task] = tl.queue.list()
        assert task.claimed_by == "agent-d"


def test_the_tools_served_come_from_the_header_or_the_query(server: Server) -> None:
    def listed(headers: dict[str, str], query: str = "") -> Any:
        response = _post(server.url, "tools/list", {}, headers, query=query)
        return response.json()

    by_header = listed(_as("t", "a", "worker"))["result"]["tools"]
    by_query = listed(_as("t", "a"), "?tools=planner,task_next")["result"]["tools"]
    default = listed(_as("t", "a"))["result"]["tools"]
    unknown = listed(_as("t", "a", "plannr"))
    with taskloom.connect(server.db_url) as tl:
        assert [t["name"] for t in by_header] == tl.tools.names(profile="worker")
        assert [t["name"] for t in by_query] == tl.tools.names(profile="planner,task_next")
        assert [t["name"] for t in default] == tl.tools.names()
    assert unknown["error"]["code"] == -32602
    message = unknown["error"]["message"]
    assert message.startswith("unknown tool profile or tool 'plannr': choose a profile (default,")
    assert "planner" in message and "task_delegate" in message
    outside = {"name": "todo_write", "arguments": {"todos": []}}
    refused = _result(_post(server.url, "tools/call", outside, _as("t", "a", "planner")))
    assert refused["isError"] is True and "unknown tool 'todo_write'" in str(refused)


def test_a_call_with_an_unknown_tools_choice_logs_no_traceback(
    tl: taskloom.Taskloom, caplog: pytest.LogCaptureFixture
) -> None:
    """A 2026-07-28 call whose X-Taskloom-Tools names no tools is a tool error; checking its
    Mcp-Param headers, the SDK listed the tools first, and every such call logged that
    listing's failure with a traceback (any client could fill the log)."""

    async def go() -> httpx.Response:
        app = create_app(tl)
        call = {"name": "todo", "arguments": {"op": "list"}}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        body["params"] = {**call, "_meta": envelope(True)}
        headers = {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "todo",
            **_as("t", "a", "plannr"),
        }
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                return await c.post("/mcp", json=body, headers=headers)

    with caplog.at_level(logging.DEBUG):
        answer = _result(asyncio.run(go()))
    assert answer["isError"] is True
    assert "unknown tool profile or tool 'plannr'" in answer["content"][0]["text"]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_mcp_tasks_over_http(server: Server) -> None:
    """The Tasks extension over streamable HTTP: ``tasks/get`` with the ``Mcp-Name``
    header, the result once the work is done, and another thread's headers answered as for
    an unknown id."""
    mine = _as("planning", "boss", "planner")
    call = {"name": "task_delegate", "arguments": {"title": "Count the open issues"}}
    created = _result(_post(server.url, "tools/call", call, mine))
    task_id = created["taskId"]
    assert created["resultType"] == "task"
    get = {"taskId": task_id}
    working = _result(_post(server.url, "tasks/get", get, mine))
    foreign = _post(server.url, "tasks/get", get, _as("elsewhere", "boss")).json()
    misnamed = _post(
        server.url, "tasks/get", get, {**mine, "Mcp-Name": "someone-elses-task"}
    ).json()
    with taskloom.connect(server.db_url) as tl:
        task = tl.queue.claim("worker-1")
        assert task is not None and task.source == "planning"
        tl.queue.done(task.id, task.lease_token or "", "17")
    done = _result(_post(server.url, "tasks/get", get, mine))
    assert working["status"] == "working"
    assert foreign["error"] == {
        "code": -32602,
        "message": "Failed to retrieve task: task not found",
    }
    assert misnamed["error"]["code"] == -32020  # the header disagrees with the body
    assert done["status"] == "completed" and "<result>17</result>" in json.dumps(done["result"])


def test_the_sdk_client_speaks_the_extension_over_http(server: Server) -> None:
    """The SDK's client on protocol 2026-07-28 with the extension's client side, over
    streamable HTTP: ``call_tool`` of ``task_wait`` on work already delegated returns at
    once, and on work still to be done returns once it is done."""
    import threading
    import time

    import httpx2

    with taskloom.connect(server.db_url) as tl:
        task, _ = tl.queue.add("Ship it", source="planning")

    def worker() -> None:
        with taskloom.connect(server.db_url) as tl:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                claimed = tl.queue.claim("worker-1", bind_process=False)
                if claimed is not None:
                    tl.queue.done(claimed.id, claimed.lease_token or "", "shipped")
                    return
                time.sleep(0.05)

    async def run() -> tuple[Any, TasksClient]:
        # The work is done once the server has answered with a task, not before.
        tasks = TasksClient(lambda _: threading.Thread(target=worker, daemon=True).start())
        http = httpx2.AsyncClient(headers=_as("planning", "boss", "planner"), timeout=30)
        from mcp.client.streamable_http import streamable_http_client

        transport = streamable_http_client(f"{server.url}/mcp", http_client=http)
        async with http, Client(transport, mode=MODERN, extensions=[tasks]) as client:
            result = await client.call_tool("task_wait", {"task_id": task.id})
        return result, tasks

    result, tasks = asyncio.run(asyncio.wait_for(run(), 120))
    assert len(tasks.seen) == 1
    assert "<result>shipped</result>" in result.content[0].text


def test_a_list_request_with_a_cursor_is_refused(server: Server) -> None:
    """``tools/list``, ``resources/list`` and ``resources/templates/list`` are one page each
    (no ``nextCursor``), so a cursor is one the server never gave: -32602, as the spec says
    for an invalid cursor. Each answered the first page again, as if it were the next."""
    mine = _as("t", "a")
    for method in ("tools/list", "resources/list", "resources/templates/list"):
        whole = _result(_post(server.url, method, {}, mine))
        assert "nextCursor" not in whole, whole
        refused = _post(server.url, method, {"cursor": "page-2"}, mine).json()
        assert refused["error"]["code"] == -32602, (method, refused)
        assert "invalid cursor 'page-2'" in refused["error"]["message"]
