"""What the server refuses, in front of every route: other sites, rebound DNS names, bodies
that are not JSON, missing tokens; and what it always answers as JSON."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskloom.cli import main
from taskloom.client import Taskloom
from taskloom.server.app import create_app
from taskloom.server.routes import MAX_BODY_BYTES
from tests.conftest import serving
from tests.test_panel_modules import served_modules

LOCAL = "http://127.0.0.1:8765"


def request(
    tl: Taskloom,
    method: str,
    path: str,
    *,
    token: str | None = None,
    loopback_only: bool = True,
    base: str = LOCAL,
    **kw: Any,
) -> httpx.Response:
    async def go() -> httpx.Response:
        app = create_app(tl, token=token, loopback_only=loopback_only, mcp=False)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=base) as client:
            return await client.request(method, path, **kw)

    return asyncio.run(go())


def awaiting_card(tl: Taskloom) -> str:
    snap = tl.board("t").add("Deploy", status="awaiting_approval", approval_mode="required")
    return str(snap["card"]["id"])


def test_another_site_cannot_act_through_the_users_browser(tl: Taskloom) -> None:
    card = awaiting_card(tl)
    path = f"/api/threads/t/cards/{card}/decision"
    evil = {"Origin": "http://evil.example"}
    r = request(tl, "POST", path, headers=evil, json={"approve": True})
    assert r.status_code == 403 and r.json()["error"] == "cross_origin"
    plain = {"Content-Type": "text/plain"}  # what a no-cors fetch or a form can send
    r = request(tl, "POST", path, headers=plain, content=b'{"approve": true}')
    assert r.status_code == 415
    assert tl.board("t").list()["cards"][0]["status"] == "awaiting_approval"
    r = request(tl, "POST", path, headers={"Origin": LOCAL}, json={"approve": True})
    assert r.status_code == 200 and r.json()["cards"][0]["status"] == "ready"


def test_a_rebound_dns_name_is_refused_on_a_loopback_server(tl: Taskloom) -> None:
    tl.board("t").add("secret plan")
    for path in ("/api/threads", "/api/threads/t/board", "/api/events", "/"):
        r = request(tl, "GET", path, base="http://evil.example:8765")
        assert r.status_code == 421 and r.json()["error"] == "misdirected_request", path
    for base in ("http://localhost:8765", "http://[::1]:8765", "http://127.0.0.2:8765", LOCAL):
        assert request(tl, "GET", "/api/threads", base=base).status_code == 200
    key = {"Authorization": "Bearer " + "k" * 20}
    served = request(
        tl, "GET", "/api/threads", base="http://tl.example", token="k" * 20, loopback_only=False,
        headers=key,
    )  # fmt: skip
    assert served.status_code == 200  # a server behind a token answers to its own name


def test_a_refused_name_is_told_the_address_the_server_is_on(tl: Taskloom) -> None:
    """A server bound to ``::1`` said to open it at ``http://127.0.0.1:PORT/``, where nothing
    listens: the 421 names the server's own address, port included (on ``127.0.0.1`` where
    the machine has no IPv6 loopback)."""
    host, shown = "::1", "[::1]"
    try:
        socket.create_server((host, 0), family=socket.AF_INET6).close()
    except OSError:
        host, shown = "127.0.0.1", "127.0.0.1"
    with serving(create_app(tl, mcp=False), host=host, log_level="warning") as port:
        url = f"http://{shown}:{port}/api/threads"
        refused = httpx.get(url, headers={"Host": f"evil.example:{port}"})
        assert refused.status_code == 421
        address = refused.json()["message"].rpartition("open it as ")[2]
        assert address == f"http://{shown}:{port}/"
        assert httpx.get(address + "api/threads").status_code == 200


def test_the_panel_loads_with_a_token_and_data_needs_it(tl: Taskloom) -> None:
    token = "s3cret-token"
    for path in ("/", "/static/app.css", "/static/theme.js"):
        assert request(tl, "GET", path, token=token).status_code == 200, path
    served_modules(lambda path: request(tl, "GET", path, token=token))  # every module, no token
    refused = request(tl, "GET", "/api/threads", token=token)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == 'Bearer realm="taskloom"'  # the scheme to use
    for header in (f"Bearer {token}", f"bearer {token}", f"BEARER  {token} "):
        r = request(tl, "GET", "/api/threads", token=token, headers={"Authorization": header})
        assert r.status_code == 200, header
    r = request(tl, "GET", f"/api/threads?token={token}", token=token,
                headers={"Authorization": "Bearer"})  # fmt: skip
    assert r.status_code == 200


def test_thread_ids_with_slashes_are_reachable(tl: Taskloom) -> None:
    thread = "org/repo#12"
    tl.board(thread).add("fix it")
    tl.goal(thread).set("Ship", token_budget=100)
    r = request(tl, "GET", "/api/threads/org%2Frepo%2312/board")
    assert r.status_code == 200 and r.json()["cards"][0]["title"] == "fix it"
    r = request(tl, "POST", "/api/threads/org%2Frepo%2312/goal/pause")
    assert r.status_code == 200 and tl.goal(thread).get()["goal"]["status"] == "paused"


def test_a_budget_is_changed_only_when_named(tl: Taskloom) -> None:
    tl.goal("t").set("Ship", token_budget=100)
    for body in ({}, {"tokenBudget": 5000}, {"token_budget": 10**30}, {"token_budget": "5"}):
        r = request(tl, "POST", "/api/threads/t/goal/budget", json=body)
        assert r.status_code == 400 and r.json()["error"] == "invalid_input", body
    assert tl.goal("t").get()["goal"]["token_budget"] == 100
    r = request(tl, "POST", "/api/threads/t/goal/budget", json={"token_budget": 500})
    assert r.status_code == 200 and tl.goal("t").get()["goal"]["token_budget"] == 500


def test_every_answer_is_json_with_the_security_headers(tl: Taskloom) -> None:
    missing = request(tl, "GET", "/api/nothing-here")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    wrong = request(tl, "GET", "/api/threads/t/goal/pause")
    assert wrong.status_code == 405 and wrong.json()["error"] == "method_not_allowed"
    for r in (missing, request(tl, "GET", "/"), request(tl, "GET", "/api/threads")):
        assert r.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
        assert r.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000, b'{"time_budget_s": 99999999999999999999999}', b'{"reason": "\xff"}'],
)
def test_a_body_python_cannot_read_or_store_is_a_400(tl: Taskloom, body: bytes) -> None:
    """JSON nested past Python's recursion limit and a budget past 64 bits were 500s."""
    tl.goal("t").set("Obj", token_budget=100)
    r = request(tl, "POST", "/api/threads/t/goal/budget", content=body,
                headers={"Content-Type": "application/json"})  # fmt: skip
    assert r.status_code == 400 and r.json()["error"] == "invalid_input", r.text


def test_a_key_given_twice_is_refused_not_read_as_the_last(tl: Taskloom) -> None:
    """As everywhere JSON comes in: ``{"reason": "a", "reason": "b"}`` says two things, and
    which one the caller meant is not ours to guess."""
    tl.goal("t").set("Obj", token_budget=100)
    r = request(tl, "POST", "/api/threads/t/goal/pause",
                content=b'{"reason": "a", "reason": "b"}',
                headers={"Content-Type": "application/json"})  # fmt: skip
    assert r.status_code == 400 and "gives the key 'reason' twice" in r.json()["message"], r.text
    assert tl.goal("t").get()["goal"]["status"] == "active"


def test_a_huge_body_is_refused(tl: Taskloom) -> None:
    tl.board("t").add("x")
    body = b'{"reason": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}'
    r = request(tl, "POST", "/api/tasks/none/cancel", content=body,
                headers={"Content-Type": "application/json"})  # fmt: skip
    assert r.status_code == 413 and "larger than" in r.json()["message"]


def test_serve_refuses_a_blank_token(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--host", "0.0.0.0", "--token", "   "])
    assert code == 1 and "token must not be blank" in capsys.readouterr().err


@pytest.mark.parametrize("token", ["tök-secret", "two words", "tab\tin"])
def test_serve_refuses_a_token_no_header_can_carry(
    capsys: pytest.CaptureFixture[str], token: str
) -> None:
    """Clients send the token in an Authorization header (ASCII only): a "tök" token was
    accepted at start and then refused on every request that sent it that way."""
    code = main(["serve", "--token", token])
    assert code == 1 and "token must be printable ASCII" in capsys.readouterr().err


def test_a_local_mcp_client_on_another_port_is_not_refused(tl: Taskloom) -> None:
    """The MCP Inspector (a page on its own localhost port) may call /mcp, whose own rules
    accept local origins; an outside origin is still refused there."""

    async def go(origin: str, base: str = LOCAL) -> int:
        app = create_app(tl)
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "inspector", "version": "1"}}}  # fmt: skip
        headers = {"Origin": origin, "Accept": "application/json, text/event-stream"}
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=base) as client:
                r = await client.post("/mcp", json=body, headers=headers)
        return r.status_code

    assert asyncio.run(go("http://localhost:6274")) == 200
    assert asyncio.run(go("http://evil.example")) == 403
    for base in ("http://127.0.0.2:8765", "http://localhost"):  # any loopback name, as /api
        assert asyncio.run(go("http://localhost:6274", base)) == 200, base
    assert asyncio.run(go("http://localhost:6274", "http://evil.example:8765")) == 421


def test_an_mcp_message_that_is_not_json_content_is_refused_as_json(tl: Taskloom) -> None:
    """``/mcp`` answered a body sent as text/plain (or with no Content-Type) with a plain-text
    400 ("Invalid Content-Type header"), unlike every other error of the server."""

    async def go(headers: dict[str, str]) -> httpx.Response:
        app = create_app(tl)
        body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
        headers = {"Accept": "application/json, text/event-stream", **headers}
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as client:
                return await client.post("/mcp", content=body, headers=headers)

    for headers in ({"Content-Type": "text/plain"}, {}):
        r = asyncio.run(go(headers))
        assert r.status_code == 415, r.text
        assert r.json()["error"] == {
            "code": -32600,
            "message": "Invalid request: send the message as Content-Type: application/json",
        }
    r = asyncio.run(go({"Content-Type": "application/json; charset=utf-8"}))
    assert r.status_code != 415


def test_a_server_with_a_token_works_behind_a_reverse_proxy(tl: Taskloom) -> None:
    """Bound to loopback behind Caddy or nginx, it sees the public Host and Origin: the token,
    not those headers, is then what keeps other sites out."""
    card = awaiting_card(tl)
    proxied = {"base": "https://tl.example.com", "token": "k" * 20}
    key = {"Authorization": "Bearer " + "k" * 20}
    assert request(tl, "GET", "/api/threads", headers=key, **proxied).status_code == 200
    assert request(tl, "GET", "/", **proxied).status_code == 200
    r = request(
        tl, "POST", f"/api/threads/t/cards/{card}/decision", json={"approve": True},
        headers={**key, "Origin": "https://tl.example.com"}, **proxied,
    )  # fmt: skip
    assert r.status_code == 200
    assert request(tl, "GET", "/api/threads", **proxied).status_code == 401


def test_serve_refuses_a_port_it_cannot_listen_on_before_saying_it_is_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--port 99999 listened on 34463 while printing 99999; a port in use printed the panel's
    address, then uvicorn's error, and exited 3."""
    db = ["--db", f"sqlite:///{tmp_path / 'x.db'}"]
    for port in ("0", "99999", "-1"):
        assert main(["serve", "--port", port, *db]) == 1
        assert "--port" in capsys.readouterr().err
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        assert main(["serve", "--port", port, *db]) == 1
    captured = capsys.readouterr()
    assert f"cannot listen on 127.0.0.1:{port}" in captured.err and "panel on" not in captured.err


def test_every_action_route_refuses_an_unknown_field(tl: Taskloom) -> None:
    """``{"reasn": …}`` cancelled a task without its reason, in silence."""
    card = tl.board("t").add("x")["card"]["id"]
    task, _ = tl.queue.add("y")
    r = request(tl, "POST", f"/api/tasks/{task.id}/cancel", json={"reasn": "typo"})
    assert r.status_code == 400 and "reasn" in r.json()["message"]
    assert tl.queue.get(task.id).status == "ready"
    r = request(tl, "POST", f"/api/threads/t/cards/{card}/status", json={"status": "done", "x": 1})
    assert r.status_code == 400 and "x" in r.json()["message"]
    assert tl.board("t").list()["cards"][0]["status"] == "todo"


@pytest.mark.parametrize("query", ["/api/tasks?limit=%C2%B2", "/api/events?after=%C2%B2"])
def test_a_digit_int_cannot_read_gets_the_route_s_own_message(tl: Taskloom, query: str) -> None:
    r = request(tl, "GET", query)
    assert r.status_code == 400 and "int()" not in r.json()["message"], r.text


def test_a_refused_token_says_whether_one_was_sent(tl: Taskloom) -> None:
    """Both answers said "token required": a person who opened the panel with a mistyped
    token was told to open it with a token. A base64 token's "+" arrives whole when escaped."""
    token = "Ab+cD/eF=="
    none = request(tl, "GET", "/api/threads", token=token)
    wrong = request(tl, "GET", "/api/threads?token=Ab%2BcD", token=token)
    assert none.status_code == wrong.status_code == 401
    assert none.json()["message"].startswith("token required")
    assert wrong.json()["message"].startswith("wrong token")
    escaped = request(tl, "GET", "/api/threads?token=Ab%2BcD%2FeF%3D%3D", token=token)
    assert escaped.status_code == 200


def test_a_refused_cursor_names_the_parameter_sent(tl: Taskloom) -> None:
    """``after=-1`` was refused as a bad Last-Event-ID, a header the caller never sent."""
    r = request(tl, "GET", "/api/events?after=-1")
    assert r.status_code == 400 and r.json()["message"].startswith("`after` must be"), r.text
    r = request(tl, "GET", "/api/events", headers={"Last-Event-ID": "x" * 10_000})
    assert r.status_code == 400 and r.json()["message"].startswith("Last-Event-ID must be")
