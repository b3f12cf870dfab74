"""The JSON API's answers to hostile input, over real HTTP on loopback: what an error repeats
of the request, and which refusal a request gets when several apply."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from taskloom.client import Taskloom
from taskloom.server.app import create_app
from taskloom.server.http import DeadlineH11Protocol
from tests.conftest import serving


@pytest.fixture
def api(tl: Taskloom) -> Iterator[httpx.Client]:
    app = create_app(tl, poll_s=0.05)
    with (
        serving(app, log_level="critical", http=DeadlineH11Protocol) as port,
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client,
    ):
        yield client


def test_an_error_repeats_only_the_start_of_a_long_value_it_refuses(
    tl: Taskloom, api: httpx.Client
) -> None:
    """A status, a field name, a budget, a kind or a status filter half a megabyte long came
    back whole in the error: half a megabyte of message for the panel's toast to show."""
    card = tl.board("t").add("Ship")["card"]["id"]
    tl.goal("t").set("Obj")
    long = "x" * 500_000
    refused = [
        api.post(f"/api/threads/t/cards/{card}/status", json={"status": long}),
        api.post(f"/api/threads/t/cards/{card}/status", json={"status": "done", long: 1}),
        api.post("/api/threads/t/goal/budget", json={"time_budget_s": long}),
        api.post("/api/threads/t/goal/budget", json={"time_budget_s": [[1] * 100_000]}),
        api.get("/api/tasks", params={"status": long[:7000]}),
        api.get("/api/tasks", params={"kind": long[:7000]}),
        api.get("/api/tasks/ready", params={"kind": long[:7000]}),
    ]
    for answer in refused:
        assert answer.status_code == 400, answer.text[:200]
        assert len(answer.json()["message"]) < 300, answer.json()["message"][:300]
    first = refused[0].json()["message"]
    assert "xxxxxxxxxx…" in first and "expected todo|" in first  # the hint after it stays
    assert tl.board("t").get().get(card).status.value == "todo"


def test_a_bad_pause_reason_is_refused_as_bad_input_whatever_the_goal_s_state(
    tl: Taskloom, api: httpx.Client
) -> None:
    """Sent to a paused goal, a reason PostgreSQL cannot store got 409 (only an active goal
    can be paused), to an active one 400: the same bad input, two answers. The reason is
    checked first."""
    tl.goal("t").set("Obj")
    for status in ("active", "paused"):
        if status == "paused":
            tl.goal("t").pause("held")
        r = api.post("/api/threads/t/goal/pause", json={"reason": "a\u0000b"})
        assert r.status_code == 400 and "NUL" in r.json()["message"], r.text
    assert tl.goal("t").get()["goal"]["reason"] == "held"


def test_a_query_parameter_that_takes_one_value_is_refused_given_twice(
    tl: Taskloom, api: httpx.Client
) -> None:
    """``status=ready&status=dead`` listed the dead tasks alone (the last value won in
    silence), and ``thread=a&thread=b`` followed b: a caller expecting both got half. A
    body's key given twice is refused; so is such a parameter. ``kind`` may be repeated."""
    tl.queue.add("Review", kind="review")
    twice = [
        "/api/tasks?status=ready&status=dead",
        "/api/tasks?limit=5&limit=500",
        "/api/tasks?agent=a&agent=b",
        "/api/tasks/ready?agent=a&agent=b",
        "/api/threads/t/ready?explain=1&explain=0",
        "/api/events?thread=a&thread=b",
        "/api/events?tasks=1&tasks=0",
        "/api/events?after=0&after=5",
    ]
    for path in twice:
        r = api.get(path)
        assert r.status_code == 400, (path, r.status_code)
        assert "given 2 times: it takes one value" in r.json()["message"], path
    both = api.get("/api/tasks?kind=review&kind=build&status=ready").json()
    assert [t["title"] for t in both] == ["Review"]
