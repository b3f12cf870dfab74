"""The JSON API refuses a query parameter a route does not take, over real HTTP on loopback.

``GET /api/tasks?stauts=ready`` (a typo) was ignored in silence and listed every task: a
script filtering by it read the wrong answer as the right one. Now every route of the API
refuses with 400 and one line naming the parameter and those the route takes; the token
(``?token=``, for a client that cannot send headers) goes to every route.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from taskloom.client import Taskloom
from taskloom.server.app import create_app
from taskloom.server.http import DeadlineH11Protocol
from tests.conftest import serving

TOKEN = "s3cret-token"


@pytest.fixture
def api(tl: Taskloom) -> Iterator[httpx.Client]:
    app = create_app(tl, poll_s=0.05, mcp=False)
    with (
        serving(app, log_level="critical", http=DeadlineH11Protocol) as port,
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client,
    ):
        yield client


def routes(tl: Taskloom) -> list[tuple[str, str, tuple[str, ...]]]:
    """Every route of the JSON API: method, path, the query parameters it takes."""
    card = tl.board("t").add("Ship")["card"]["id"]
    tl.goal("t").set("Obj")
    task = tl.queue.add("Review")[0].id
    return [
        ("GET", "/api/threads", ()),
        ("GET", "/api/threads/t/board", ()),
        ("GET", "/api/threads/t/goal", ()),
        ("GET", "/api/threads/t/stash", ()),
        ("GET", "/api/threads/t/ready", ("explain",)),
        ("POST", "/api/threads/t/goal/pause", ()),
        ("POST", f"/api/threads/t/cards/{card}/status", ()),
        ("POST", f"/api/threads/t/cards/{card}/decision", ()),
        ("GET", "/api/tasks", ("status", "agent", "kind", "limit")),
        ("GET", "/api/tasks/stats", ()),
        ("GET", "/api/tasks/ready", ("agent", "kind", "limit")),
        ("GET", f"/api/tasks/{task}", ()),
        ("POST", f"/api/tasks/{task}/cancel", ()),
        ("POST", f"/api/tasks/{task}/requeue", ()),
        ("GET", "/api/events", ("after", "thread", "tasks")),
    ]


def test_a_misspelt_filter_is_refused_not_ignored(tl: Taskloom, api: httpx.Client) -> None:
    tl.queue.add("Review")
    answer = api.get("/api/tasks", params={"stauts": "ready"})
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "invalid_input",
        "message": "unknown query parameter: stauts"
        " (this route takes status, agent, kind, limit and token)",
    }


def test_every_route_refuses_a_parameter_it_does_not_take(tl: Taskloom, api: httpx.Client) -> None:
    for method, path, takes in routes(tl):
        answer = api.request(method, path, params={"bogus": "1"}, json={})
        assert answer.status_code == 400, (method, path, answer.text)
        message = answer.json()["message"]
        assert "\n" not in message
        own = f"{', '.join(takes)} and token" if takes else "only token"
        assert message == f"unknown query parameter: bogus (this route takes {own})", path
    # Nothing was done by a refused action.
    assert tl.goal("t").get()["goal"]["status"] == "active"
    assert [t.status.value for t in tl.queue.list()] == ["ready"]


def test_several_unknown_parameters_are_named_the_long_ones_shortened(
    api: httpx.Client,
) -> None:
    answer = api.get("/api/tasks/stats?b=1&a=2&" + "z" * 5000 + "=3&a=4")
    assert answer.status_code == 400
    message = answer.json()["message"]
    assert message.startswith("unknown query parameters: a, b, zzzz")
    assert len(message) < 300
    blank = api.get("/api/threads?=x")  # a parameter with no name is one it does not take
    assert blank.status_code == 400


def test_the_parameters_a_route_takes_and_the_token_still_work(
    tl: Taskloom, api: httpx.Client
) -> None:
    tl.queue.add("Review")
    assert len(api.get("/api/tasks", params={"status": "ready", "limit": "5"}).json()) == 1
    assert api.get("/api/tasks?kind=a&kind=b").status_code == 200
    assert api.get("/api/tasks/ready", params={"agent": "a", "limit": "3"}).status_code == 200
    assert api.get("/api/threads/t/ready", params={"explain": "1"}).status_code == 200
    assert api.get("/api/tasks/stats", params={"token": "anything"}).status_code == 200


def test_the_token_in_the_query_opens_the_stream_and_a_wrong_parameter_does_not(
    tl: Taskloom,
) -> None:
    """The panel's stream sends ``thread``, ``tasks``, ``after`` and ``token`` in its
    address (an EventSource cannot send headers)."""
    app = create_app(tl, poll_s=0.05, token=TOKEN, mcp=False)
    with (
        serving(app, log_level="critical", http=DeadlineH11Protocol) as port,
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client,
    ):
        query = {"thread": "t", "tasks": "1", "after": "0", "token": TOKEN}
        with client.stream("GET", "/api/events", params=query) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
        refused = client.get("/api/events", params={**query, "thread_id": "t"})
        assert refused.status_code == 400
        assert refused.json()["message"] == (
            "unknown query parameter: thread_id (this route takes after, thread, tasks and token)"
        )
        # The panel's files are not the API: a cache-busting parameter still gets them.
        assert client.get("/static/app.js", params={"v": "2"}).status_code == 200
        assert client.get("/", params={"token": TOKEN, "v": "2"}).status_code == 200
