"""The HTTP API in-process, and the SSE stream over a real loopback socket."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from datetime import timedelta
from typing import Any

import anyio
import httpx
import pytest

from taskloom.cli import main
from taskloom.client import Taskloom
from taskloom.server.app import create_app
from taskloom.server.http import CleanStopServer
from taskloom.store.outbox import prune_events
from taskloom.tools.spec import ToolContext
from tests.conftest import FakeClock, serving, subprocess_env


def request(
    tl: Taskloom, method: str, path: str, token: str | None = None, **kw: object
) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(tl, token=token))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.request(method, path, **kw)  # type: ignore[arg-type]

    return asyncio.run(go())


def test_a_decision_on_a_plan_that_changed_since_it_was_shown_is_refused(tl: Taskloom) -> None:
    """The model may still edit a waiting plan: a person approving from a view that has not
    refreshed would approve a plan they were never shown."""
    shown = tl.board("t").add("Pay", plan=["pay $10"], status="awaiting_approval")["card"]
    tl.board("t").edit(shown["id"], plan=["pay $10000 to someone else"])
    path = f"/api/threads/t/cards/{shown['id']}/decision"
    r = request(tl, "POST", path, json={"approve": True, "seen": shown["updated_at"]})
    assert r.status_code == 409 and "look at its plan again" in r.json()["message"]
    assert tl.board("t").get().get(shown["id"]).status.value == "awaiting_approval"
    now = tl.board("t").get().get(shown["id"])
    r = request(tl, "POST", path, json={"approve": True, "seen": now.updated_at})
    assert r.status_code == 200 and tl.board("t").get().get(shown["id"]).status.value == "ready"


def test_pausing_a_blocked_goal_keeps_what_a_person_must_do(tl: Taskloom) -> None:
    """The panel's Pause on a blocked goal sends no reason: the model's reason for the block
    was erased, and with it what the person must do. It is kept; a reason given replaces it."""
    tl.goal("t").set("Deploy the release")
    tl.tools.dispatch("goal_block", {"reason": "needs the prod password"}, ToolContext("t"))
    r = request(tl, "POST", "/api/threads/t/goal/pause")
    assert r.status_code == 200 and r.json()["goal"]["status"] == "paused"
    assert tl.goal("t").get()["goal"]["reason"] == "needs the prod password"
    tl.goal("t").resume()
    tl.goal("t").block("needs the prod password")
    r = request(tl, "POST", "/api/threads/t/goal/pause", json={"reason": "on hold till Monday"})
    assert r.json()["goal"]["reason"] == "on hold till Monday"


def test_a_refused_api_budget_names_the_bound_the_api_takes(tl: Taskloom) -> None:
    """0 or -5 were refused with the library's bound (2^63 - 1), which the route itself
    refuses past 2^53 - 1 (the panel's bound too): every refusal names the route's bound."""
    tl.goal("t").set("Ship", token_budget=100)
    for budget in (0, -5, 2**53, 2**60, 1.5):
        r = request(tl, "POST", "/api/threads/t/goal/budget", json={"token_budget": budget})
        assert r.status_code == 400, budget
        assert f"positive integer up to {2**53 - 1}" in r.json()["message"]
        assert str(2**63 - 1) not in r.json()["message"]
    assert tl.goal("t").get()["goal"]["token_budget"] == 100
    r = request(tl, "POST", "/api/threads/t/goal/budget", json={"token_budget": 2**53 - 1})
    assert r.status_code == 200 and r.json()["goal"]["token_budget"] == 2**53 - 1


def test_a_move_of_a_card_that_changed_since_it_was_shown_is_refused(tl: Taskloom) -> None:
    """A move took no `seen`: a view behind the database marked done a card whose plan had
    been rejected since."""
    shown = tl.board("t").add("Drop the old tables")["card"]
    tl.board("t").update_status(shown["id"], "awaiting_approval")
    tl.board("t").decide_plan(shown["id"], approve=False)
    path = f"/api/threads/t/cards/{shown['id']}/status"
    r = request(tl, "POST", path, json={"status": "done", "seen": shown["updated_at"]})
    assert r.status_code == 409 and "(now rejected" in r.json()["message"]
    assert tl.board("t").get().get(shown["id"]).status.value == "rejected"
    now = tl.board("t").get().get(shown["id"]).updated_at
    r = request(tl, "POST", path, json={"status": "done", "seen": now})
    assert r.status_code == 200 and tl.board("t").get().get(shown["id"]).status.value == "done"
    r = request(tl, "POST", path, json={"status": "done", "seen": 5})
    assert r.status_code == 400


def test_the_status_route_does_not_decide_on_a_plan(tl: Taskloom) -> None:
    """Setting "ready" or "done" through the status route approved a plan with neither a
    decision nor the check that it was the plan shown."""
    card = tl.board("t").add("Deploy", plan=["x"], status="awaiting_approval")["card"]["id"]
    for status in ("ready", "done"):
        r = request(tl, "POST", f"/api/threads/t/cards/{card}/status", json={"status": status})
        assert r.status_code == 409 and "decision" in r.json()["message"]
    assert tl.board("t").get().get(card).status.value == "awaiting_approval"


def test_api_reads_and_human_actions(tl: Taskloom) -> None:
    snap = tl.board("t").add("Deploy", status="awaiting_approval", approval_mode="required")
    card = snap["card"]["id"]
    assert request(tl, "GET", "/api/threads").json()[0]["thread_id"] == "t"
    assert request(tl, "GET", "/api/threads/t/board").json()["cards"][0]["title"] == "Deploy"
    r = request(tl, "POST", f"/api/threads/t/cards/{card}/decision", json={"approve": True})
    assert r.status_code == 200 and r.json()["cards"][0]["status"] == "ready"
    r = request(tl, "POST", f"/api/threads/t/cards/{card}/status", json={"status": "done"})
    assert r.json()["summary"]["done"] == 1
    tl.goal("t").set("Ship", token_budget=10)
    assert request(tl, "POST", "/api/threads/t/goal/pause").json()["goal"]["status"] == "paused"
    r = request(tl, "POST", "/api/threads/t/goal/budget", json={"token_budget": 500})
    assert r.json()["goal"]["token_budget"] == 500
    r = request(tl, "POST", "/api/threads/t/goal/resume")
    assert r.json()["goal"]["status"] == "active"
    r = request(tl, "POST", "/api/threads/t/goal/pause", json={"reason": "lunch"})
    assert r.json()["goal"]["status"] == "paused" and r.json()["goal"]["reason"] == "lunch"
    assert request(tl, "POST", "/api/threads/t/goal/clear").json()["goal"] is None
    assert tl.goal("t").get()["goal"] is None
    task, _ = tl.queue.add("job")
    assert request(tl, "GET", "/api/tasks/stats").json()["ready"] == 1
    tl.queue.add("review it", kind="review")
    listed = request(tl, "GET", "/api/tasks?kind=review").json()
    assert [t["title"] for t in listed] == ["review it"]
    both = request(tl, "GET", "/api/tasks?kind=review&kind=task").json()
    assert {t["title"] for t in both} == {"job", "review it"}
    assert request(tl, "GET", "/api/tasks?kind=No").status_code == 400
    r = request(tl, "POST", f"/api/tasks/{task.id}/cancel", json={"reason": "no"})
    assert r.json()["status"] == "canceled"
    r = request(tl, "POST", f"/api/tasks/{task.id}/requeue")
    assert r.status_code == 400 and "only a dead task is requeued" in r.json()["message"]
    tl.queue.add("flaky", max_attempts=1)
    claimed = tl.queue.claim("w", kinds="task")
    assert claimed is not None and claimed.title == "flaky"
    tl.queue.fail(claimed.id, claimed.lease_token or "", "boom")
    r = request(tl, "POST", f"/api/tasks/{claimed.id}/requeue", json={})
    assert r.json()["status"] == "ready" and r.json()["attempts"] == 0
    assert r.json()["lease_token"] is None


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "fragment"),
    [
        ("POST", "/api/threads/t/cards/nope/status", {"status": "done"}, 404, "not found"),
        ("POST", "/api/threads/t/cards/x/decision", {"approve": "yes"}, 400, "approve"),
        ("POST", "/api/threads/t/cards/x/decision", {"approve": True, "v": 1}, 400, "unknown"),
        ("POST", "/api/threads/t/cards/x/status", {}, 400, "status"),
        ("POST", "/api/threads/t/goal/explode", {}, 400, "unknown goal action"),
        ("POST", "/api/threads/t/goal/budget", {"token_budget": 0}, 400, "positive"),
        ("POST", "/api/threads/t/goal/budget", {"token_budget": 5, "x": 1}, 400, "unknown field"),
        ("POST", "/api/threads/t/goal/pause", {"reasn": "typo"}, 400, "unknown field: reasn"),
        ("POST", "/api/threads/t/goal/pause", {"reason": 5}, 400, "`reason` must be text"),
        ("GET", "/api/tasks/nope", None, 404, "not found"),
        ("GET", "/api/tasks?status=weird", None, 400, "weird"),
        ("GET", "/api/events?after=abc", None, 400, "`after` must be"),
        ("GET", "/api/events?after=3-xyz", None, 400, "`after` must be"),
    ],
)
def test_bad_input_is_4xx_json(
    tl: Taskloom, method: str, path: str, body: object, status: int, fragment: str
) -> None:
    tl.goal("t").set("x")
    r = request(tl, method, path, json=body) if body is not None else request(tl, method, path)
    assert r.status_code == status, r.text
    assert fragment in r.json()["message"]


def test_token_required_when_configured(tl: Taskloom) -> None:
    assert request(tl, "GET", "/api/threads", token="s3cret").status_code == 401
    ok = request(
        tl, "GET", "/api/threads", token="s3cret", headers={"authorization": "Bearer s3cret"}
    )
    assert ok.status_code == 200
    assert request(tl, "GET", "/api/threads?token=s3cret", token="s3cret").status_code == 200


@pytest.mark.parametrize("terminal", [True, False])
def test_the_startup_line_says_how_to_open_a_panel_with_a_token(terminal: bool) -> None:
    """A base64 token's ``+`` typed into the address is a space; on a terminal the line gives
    the address ready to open, and into a log (systemd, docker) never the token."""
    from taskloom.cli import common, serve

    common.err._force_terminal = terminal
    try:
        hint = serve._token_hint("http://127.0.0.1:8765/", "Ab+cD/eF==")
    finally:
        common.err._force_terminal = None
    if terminal:
        assert hint == "open http://127.0.0.1:8765/?token=Ab%2BcD%2FeF%3D%3D"
    else:
        assert "Ab+cD" not in hint and "?token=" in hint


def test_serve_refuses_public_bind_without_token(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--host", "0.0.0.0"]) == 1
    assert "refusing to bind 0.0.0.0 without a token" in capsys.readouterr().err


@pytest.fixture
def live_server(tl: Taskloom) -> Iterator[str]:
    with serving(create_app(tl, poll_s=0.05), log_level="warning") as port:
        yield f"http://127.0.0.1:{port}"


def sse_frames(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """The fields of each SSE frame in ``lines``, as they come (comments, such as pings,
    skipped): an event has ``data``, an id-only frame just ``id``."""
    current: dict[str, str] = {}
    for line in lines:
        if not line:
            if current:
                yield current
            current = {}
        elif not line.startswith(":"):
            key, _, value = line.partition(":")
            current[key] = value.strip()


MARKERS = ("opening", "opened")
"""The events that start and end an opening, around its snapshots."""


def browser_events(
    frames: Iterable[dict[str, str]], last_id: str, *, markers: bool = False
) -> Iterator[dict[str, str]]:
    """The events of ``frames`` as a browser dispatches them: each ``id`` is the stream's last
    event id at that point, which any frame with an ``id:`` sets (data or not) and which
    starts as the ``Last-Event-ID`` sent (``last_id``, "" if none). So an opening's snapshots
    have the id from before it; their body has the head. The opening's own ``opening`` and
    ``opened`` events are left out unless ``markers``."""
    for frame in frames:
        last_id = frame.get("id", last_id)
        if "data" in frame and (markers or frame.get("event") not in MARKERS):
            yield {**frame, "id": last_id}


def read_events(
    url: str, n: int, headers: dict[str, str] | None = None, *, markers: bool = False
) -> list[dict[str, str]]:
    """The first ``n`` events of a stream, as a browser sees them (:func:`browser_events`)."""
    headers = headers or {}
    with httpx.stream("GET", url, headers=headers, timeout=30) as response:
        frames = sse_frames(response.iter_lines())
        events = browser_events(frames, headers.get("last-event-id", ""), markers=markers)
        return list(itertools.islice(events, n))


def seq(sse_id: str) -> int:
    """The outbox id an SSE id names (``12-<stamp>``: event 12)."""
    return int(sse_id.split("-")[0])


def body_id(event: dict[str, str]) -> str:
    """The outbox id in an event's JSON body: an opening snapshot's is the head."""
    return str(json.loads(event["data"])["id"])


def test_sse_streams_changes_from_another_process_and_resumes(
    tl: Taskloom, live_server: str, db_url: str
) -> None:
    tl.board("t").add("first")
    tl.board("other").add("elsewhere")
    first = read_events(f"{live_server}/api/events?thread=t", 1)
    assert first[0]["event"] == "todo_state"
    assert json.loads(first[0]["data"])["data"]["cards"][0]["title"] == "first"
    head = body_id(first[0])
    # A different OS process (the CLI) writes; the open stream must deliver it.
    got: list[dict[str, str]] = []
    reader = threading.Thread(
        target=lambda: got.extend(
            read_events(f"{live_server}/api/events?thread=t", 1, headers={"last-event-id": head})
        )
    )
    reader.start()
    subprocess.run(
        [sys.executable, "-m", "taskloom", "board", "add", "t", "from the cli", "--db", db_url],
        check=True,
        env=subprocess_env(),
        capture_output=True,
        timeout=60,
    )
    reader.join(30)
    assert len(got) == 1 and seq(got[0]["id"]) > int(head)
    change = json.loads(got[0]["data"])["data"]
    assert got[0]["event"] == "todo_change" and change["version"] == 2
    assert [c["title"] for c in change["cards"]] == ["from the cli"]  # the change, not the board
    # Resume from the very start replays both, in order, with no duplicates.
    replay = read_events(f"{live_server}/api/events?thread=t&after=0", 2)
    changes = [json.loads(e["data"])["data"] for e in replay]
    assert [(c["version"], [card["title"] for card in c["cards"]]) for c in changes] == [
        (1, ["first"]),
        (2, ["from the cli"]),
    ]
    assert replay[1]["id"] == got[0]["id"]
    assert seq(replay[0]["id"]) < int(head)  # the opening snapshot was at the head


def test_fresh_stream_opens_with_snapshots_and_pruned_cursor_gets_them_too(
    tl: Taskloom, live_server: str
) -> None:
    board = tl.board("t")
    for title in ("a", "b", "c"):
        board.add(title)
    tl.goal("t").set("Ship it", token_budget=100)
    opening = read_events(f"{live_server}/api/events?thread=t&tasks=0", 2)
    assert [e["event"] for e in opening] == ["todo_state", "goal_state"]
    assert len(json.loads(opening[0]["data"])["data"]["cards"]) == 3
    # Both at the head, in their bodies only: the stream's last event id is not set yet.
    with tl.store.read() as tx:
        head = str(tx.event_head())
    assert [body_id(e) for e in opening] == [head, head]
    assert [e["id"] for e in opening] == ["", ""]
    # A cursor still covered resumes exactly: after event 1 come the 2nd and 3rd board changes.
    resumed = read_events(f"{live_server}/api/events?thread=t&tasks=0", 2, {"last-event-id": "1"})
    changes = [json.loads(e["data"])["data"] for e in resumed]
    assert [(c["version"], c["cards"][0]["title"]) for c in changes] == [(2, "b"), (3, "c")]
    # Retention prunes all but the newest event; the same cursor now gets the current state.
    assert prune_events(tl.store, tl.now(), keep=1) == 3
    again = read_events(f"{live_server}/api/events?thread=t&tasks=0", 2, {"last-event-id": "1"})
    assert [e["event"] for e in again] == ["todo_state", "goal_state"]
    assert len(json.loads(again[0]["data"])["data"]["cards"]) == 3
    assert prune_events(tl.store, tl.now(), keep=1) == 0  # nothing more to prune


def test_a_cursor_past_the_head_gets_the_snapshots_not_silence(
    tl: Taskloom, live_server: str
) -> None:
    """A browser's Last-Event-ID from another database (a restore, a switch) is past this
    outbox's head: the stream starts from the current state instead of waiting for an id it
    may never reach."""
    tl.board("t").add("only")
    frames = read_events(f"{live_server}/api/events?thread=t&tasks=0", 1, {"last-event-id": "9999"})
    assert frames[0]["event"] == "todo_state"
    assert json.loads(frames[0]["data"])["data"]["cards"][0]["title"] == "only"


def _open(store: Any, after: Any) -> Any:
    """:func:`open_stream` on ``store`` from the cursor ``after``, on a hub of its own."""
    from taskloom.server.hub import EventHub
    from taskloom.server.sse import open_stream

    async def go() -> Any:
        hub = EventHub(store, poll_s=0.01)
        try:
            return await open_stream(hub, after=after, thread_id="t")
        finally:
            await hub.stop()

    return asyncio.run(go())


def test_a_cursor_from_another_database_gets_an_opening_not_its_events(
    tl: Taskloom, live_server: str, make_tl: Any
) -> None:
    """A server restarted on a restored backup, or on another database file, whose outbox
    had reached the browser's Last-Event-ID with other events, resumed after it: the panel
    kept showing boards that no longer existed. An SSE id names its event (a stamp): the
    same database resumes from it, another opens afresh; a plain id is still taken."""
    from taskloom.server.cursor import Cursor, parse_cursor

    for i in range(3):
        tl.board("t").add(f"first {i}")
    (live,) = read_events(f"{live_server}/api/events?thread=t&tasks=0", 1, {"last-event-id": "2"})
    assert seq(live["id"]) == 3 and live["id"] != "3"
    cursor = parse_cursor(live["id"])
    same = _open(tl.store, cursor)
    assert not same.fresh and same.cursor == 3
    other = make_tl("other.db")
    for i in range(5):
        other.board("t").add(f"other {i}")
    elsewhere = _open(other.store, cursor)
    assert elsewhere.fresh and elsewhere.cursor == 5
    cards = elsewhere.frames[0].wire.decode()
    assert "other 4" in cards and "first" not in cards
    assert not _open(other.store, Cursor(3)).fresh  # a plain id, on trust as before


def test_the_thread_list_is_computed_again_only_after_a_change(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every open panel asks for the list every few seconds, and each answer decoded every
    board and goal: 400 big threads cost seconds of CPU per call. Until the outbox moves, the
    answer is the one computed last."""
    computed = []
    threads = tl.threads

    def counted() -> list[dict[str, Any]]:
        computed.append(1)
        return threads()

    monkeypatch.setattr(tl, "threads", counted)
    tl.board("a").add("one")
    app = create_app(tl, mcp=False)

    async def go() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:

            async def listed() -> dict[str, Any]:
                return {r["thread_id"]: r for r in (await client.get("/api/threads")).json()}

            first = await listed()
            assert await listed() == first and len(computed) == 1
            tl.board("b").add("two")
            assert set(await listed()) == {"a", "b"} and len(computed) == 2
            tl.goal("a").set("Ship it")
            assert (await listed())["a"]["goal_status"] == "active" and len(computed) == 3

    asyncio.run(go())


def test_a_stream_the_database_cannot_open_is_an_http_error(tl: Taskloom) -> None:
    from taskloom.domain.errors import StoreBusy

    def unavailable(*_: object, **__: object) -> object:
        raise StoreBusy("database is busy: no free database connection")

    tl.store.read = unavailable  # type: ignore[method-assign]
    response = request(tl, "GET", "/api/events?thread=t")
    assert response.status_code == 503 and response.json()["error"] == "store_busy"


def test_prune_by_age_keeps_the_newest(tl_fixed: Taskloom, clock: FakeClock) -> None:
    tl_fixed.board("t").add("old")
    clock.advance(10 * 86400)
    tl_fixed.board("t").add("new")
    with pytest.raises(ValueError, match="keep"):
        prune_events(tl_fixed.store, tl_fixed.now(), keep=0)
    assert prune_events(tl_fixed.store, tl_fixed.now(), older_than=timedelta(days=7)) == 1
    assert prune_events(tl_fixed.store, tl_fixed.now(), older_than=timedelta(seconds=0)) == 0
    with tl_fixed.store.read() as tx:
        assert len(tx.events_after(0)) == 1


def test_prune_by_age_keeps_the_newest_after_a_rolled_back_write(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """On PostgreSQL a write that rolled back still drew an event id: the newest event is
    below the head then, and must stay all the same."""
    from taskloom.domain.events import Event

    tl_fixed.board("t").add("old")
    tl_fixed.board("t").add("newest")
    with contextlib.suppress(RuntimeError), tl_fixed.store.write() as tx:
        tx.append_event(Event("todo_state", "t", {}, created_at="2026-01-01T12:00:00.000Z"))
        raise RuntimeError("rolled back")
    clock.advance(86400)
    assert prune_events(tl_fixed.store, tl_fixed.now(), keep=None, older_than=timedelta(0)) == 1
    with tl_fixed.store.read() as tx:
        (kept,) = tx.events_after(0)
    assert kept.data["cards"][-1]["title"] == "newest"


def test_viewers_never_see_lease_tokens(tl: Taskloom, live_server: str) -> None:
    task, _ = tl.queue.add("secret work")
    claimed = tl.queue.claim("w1", lease=60)
    assert claimed is not None and claimed.lease_token
    listed = httpx.get(f"{live_server}/api/tasks?status=in_progress").json()
    assert listed[0]["claimed_by"] == "w1" and listed[0]["lease_token"] is None
    assert httpx.get(f"{live_server}/api/tasks/{task.id}").json()["lease_token"] is None
    frames = read_events(f"{live_server}/api/events?after=0", 2)
    assert claimed.lease_token not in "".join(f["data"] for f in frames)


def test_a_wrong_method_names_the_methods_the_route_takes(tl: Taskloom, live_server: str) -> None:
    """A 405 carries ``Allow`` (HTTP requires it): a client learns what it may send."""
    for method, path, allowed in (
        ("DELETE", "/api/threads", {"GET", "HEAD"}),
        ("GET", "/api/tasks/x/cancel", {"POST"}),
        ("PUT", "/api/threads/t/goal/pause", {"POST"}),
    ):
        r = httpx.request(method, live_server + path)
        assert r.status_code == 405 and r.json()["error"] == "method_not_allowed", path
        assert set(r.headers.get("allow", "").split(", ")) == allowed, path


def test_threads_list_counts_cards_and_goal(tl: Taskloom) -> None:
    tl.board("a").add("one", status="done")
    tl.board("a").add("two")
    tl.goal("g").set("Only a goal")
    rows = {r["thread_id"]: r for r in request(tl, "GET", "/api/threads").json()}
    assert rows["a"]["cards"] == {"done": 1, "todo": 1} and rows["a"]["goal_status"] is None
    assert rows["g"]["cards"] == {} and rows["g"]["goal_status"] == "active"


def test_a_thread_whose_goal_was_cleared_leaves_the_list_unless_its_board_has_cards(
    tl: Taskloom, live_server: str
) -> None:
    """A person cleared a goal in the panel and its thread stayed in the list for good, as
    "no cards" with no goal: nothing left to open. A thread with nothing left (no goal, no
    card) is no longer listed; one whose board still has cards is, without its goal."""

    def listed() -> dict[str, dict[str, Any]]:
        rows = httpx.get(f"{live_server}/api/threads", timeout=10).json()
        return {row["thread_id"]: row for row in rows}

    tl.goal("release").set("Ship v2.0")
    tl.goal("docs").set("Write the guide")
    tl.board("docs").add("Outline")
    tl.goal("kept").set("Still going")
    card = tl.board("emptied").add("Scratch")["card"]["id"]
    assert listed().keys() == {"release", "docs", "kept", "emptied"}
    for thread in ("release", "docs"):
        cleared = httpx.post(f"{live_server}/api/threads/{thread}/goal/clear", timeout=10)
        assert cleared.status_code == 200 and cleared.json()["goal"] is None
    tl.board("emptied").remove(card)
    rows = listed()
    assert rows.keys() == {"docs", "kept"}
    assert rows["docs"]["cards"] == {"todo": 1} and rows["docs"]["goal_status"] is None
    assert rows["kept"]["goal_status"] == "active"
    assert sorted(row["thread_id"] for row in tl.threads()) == ["docs", "kept"]
    tl.goal("release").set("Ship v2.1")  # a new goal lists the thread again
    assert listed()["release"]["goal_status"] == "active"


def test_panel_and_assets_are_served(tl: Taskloom) -> None:
    """The page loads app.js as a module, and app.js and every module it imports are served
    as JavaScript; the live stream (EventSource) is among them."""
    from tests.test_panel_modules import served_modules

    page = request(tl, "GET", "/")
    assert page.status_code == 200 and '<script type="module" src="/static/app.js">' in page.text
    scripts = served_modules(lambda path: request(tl, "GET", path))
    assert "EventSource" in "".join(scripts.values())


def test_scripts_are_javascript_whatever_the_platforms_table_of_types_says(tl: Taskloom) -> None:
    """A machine whose table of types maps .js to another type still serves the panel's
    modules as JavaScript, and the server leaves the process's table as it is."""
    import mimetypes

    from tests.test_panel_modules import served_modules

    was = mimetypes.guess_type("x.js")[0] or "text/javascript"
    mimetypes.add_type("text/plain", ".js")
    try:
        served_modules(lambda path: request(tl, "GET", path))
        assert mimetypes.guess_type("x.js")[0] == "text/plain"
    finally:
        mimetypes.add_type(was, ".js")


def test_the_app_wires_module_level_handlers(tl: Taskloom) -> None:
    """Every route's handler, the error handlers and the lifespan are module-level functions
    of the server: ``create_app`` defines none of its own."""
    from starlette.routing import Route

    from taskloom.server import app as app_module
    from taskloom.server import routes

    app = create_app(tl, mcp=False)
    handlers = [r.endpoint for r in app.routes if isinstance(r, Route)]
    handlers += list(app.exception_handlers.values())
    assert len(handlers) == 16 + 4
    for handler in handlers:
        assert handler.__module__ == routes.__name__, handler
        assert getattr(routes, handler.__name__) is handler
    assert app.router.lifespan_context.__module__ == app_module.__name__


def test_stream_behind_the_shared_window_catches_up_from_the_table(tl: Taskloom) -> None:
    """A window of 3 frames and 8 events: a client resuming from 0 reads the table first,
    then joins the window, and sees every event once, in order."""
    from taskloom.server.hub import EventHub

    async def go() -> list[int]:
        hub = EventHub(tl.store, poll_s=0.01, window=3)
        await hub.start()
        for i in range(8):
            await asyncio.to_thread(tl.board("t").add, f"card {i}")
        while hub.last < 8 or hub.floor == 0:
            await asyncio.sleep(0.01)
        seen = await _ids_from_the_start(hub, "t", 8)
        await hub.stop()
        return seen

    assert asyncio.run(go()) == list(range(1, 9))


def test_hub_window_is_capped_by_bytes_and_readers_behind_it_catch_up(tl: Taskloom) -> None:
    """Big events (a board with long notes) fill a byte-capped window long before its frame
    cap: the hub keeps only the newest that fit, and a reader from 0 still gets every event
    once, in order (the older ones from the table, in byte-bounded reads)."""
    from taskloom.server.hub import WINDOW_BYTES, EventHub, read_frames

    board = tl.board("big")
    card = board.add("card", notes="x" * 20_000)["card"]["id"]
    edits = 30

    async def go() -> tuple[list[int], EventHub]:
        hub = EventHub(tl.store, poll_s=0.01, window_bytes=100_000)
        await hub.start()
        for i in range(edits):
            await asyncio.to_thread(board.edit, card, notes=f"{i:03d}" + "y" * 20_000)
        while hub.last < edits + 1:
            await asyncio.sleep(0.01)
        seen = await _ids_from_the_start(hub, "big", edits + 1)
        await hub.stop()
        return seen, hub

    seen, hub = asyncio.run(go())
    assert seen == list(range(1, edits + 2))
    # Each frame is over 20 KB: at most four fit in 100,000 bytes, far below the frame cap.
    assert 1 <= hub.held_frames <= 4 and hub.held_bytes <= 100_000
    assert hub.floor == hub.last - hub.held_frames and hub.floor > 0
    assert EventHub(tl.store).window_bytes == WINDOW_BYTES == 32 * 1024 * 1024
    # A read from the table stops at about its byte budget, not at its frame limit.
    assert 1 <= len(read_frames(tl.store, 0, max_bytes=60_000)) < edits
    assert len(read_frames(tl.store, 0)) == edits + 1
    with pytest.raises(ValueError, match="at least one frame"):
        EventHub(tl.store, window_bytes=0)


async def _ids_from_the_start(hub: Any, thread_id: str, n: int) -> list[int]:
    """The ids of the first ``n`` events a stream opened at cursor 0 delivers."""
    from taskloom.server.cursor import Cursor
    from taskloom.server.sse import event_stream, open_stream

    seen: list[int] = []
    opened = await open_stream(hub, after=Cursor(0), thread_id=thread_id)
    stream = event_stream(hub, opened, thread_id=thread_id)
    async for wire in stream:
        seen.append(seq(wire.split(b"\r\n")[0].removeprefix(b"id: ").decode()))
        if len(seen) == n:
            break
    await stream.aclose()
    return seen


def test_retention_survives_a_failed_prune_and_warns(
    tl: Taskloom, caplog: pytest.LogCaptureFixture
) -> None:
    """A prune that fails (the database locked by another writer) is logged as a warning with
    its reason and tried again next time; it does not end pruning until a restart."""
    import logging

    from taskloom.domain.errors import StoreBusy

    for title in ("a", "b", "c"):
        tl.board("t").add(title)
    write = tl.store.write
    failures = []

    def busy_once() -> object:
        if not failures:
            failures.append(1)
            raise StoreBusy("database is busy: database is locked")
        return write()

    tl.store.write = busy_once  # type: ignore[method-assign]
    app = create_app(tl, retain_events=1, prune_every_s=0.05, mcp=False)

    async def go() -> None:
        async with app.router.lifespan_context(app):
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                with tl.store.read() as tx:
                    if len(tx.events_after(0)) == 1:
                        return
                await asyncio.sleep(0.05)

    with caplog.at_level(logging.WARNING, logger="taskloom.server"):
        asyncio.run(go())
    with tl.store.read() as tx:
        assert [e.id for e in tx.events_after(0)] == [3]  # pruned on the retry
    warnings = [r.getMessage() for r in caplog.records if r.name == "taskloom.server"]
    assert len(warnings) == 1
    assert "pruning the event log failed" in warnings[0] and "database is locked" in warnings[0]


def test_a_retention_window_beyond_the_calendar_is_refused(tl: Taskloom) -> None:
    """``now - timedelta(days=1_000_000)`` overflows: refused up front, not a dead pruner."""
    with pytest.raises(ValueError, match="retain_age"):
        create_app(tl, retain_age=timedelta(days=1_000_000), mcp=False)
    with pytest.raises(ValueError, match="retain_age"):
        create_app(tl, retain_age=timedelta(0), mcp=False)
    with pytest.raises(ValueError, match="retain_events"):
        create_app(tl, retain_events=0, mcp=False)
    create_app(tl, retain_age=timedelta(days=36525), mcp=False)
    with pytest.raises(ValueError, match="calendar"):
        prune_events(tl.store, tl.now(), older_than=timedelta(days=1_000_000))


@pytest.mark.parametrize("days", ["nan", "inf", "-inf", "1e12", "1000000", "36526", "-1"])
def test_serve_refuses_a_retention_window_it_cannot_hold(
    days: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*_: object, **__: object) -> None:
        raise AssertionError("the server started")

    monkeypatch.setattr(CleanStopServer, "run", never)
    assert main(["serve", "--retain-days", days]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "Error: --retain-days must be from 0 to 36525"


def test_prune_in_batches_each_its_own_transaction(tl: Taskloom) -> None:
    """The server prunes a batch at a time, so neither other writers nor a server stopping
    mid-prune wait for a whole backlog; readers see progress after every batch."""
    from taskloom.store.outbox import pruned_through

    for i in range(10):
        tl.board("t").add(f"card {i}")
    with pytest.raises(ValueError, match="batch"):
        prune_events(tl.store, tl.now(), keep=1, batch=0)
    deleted = []
    while n := prune_events(tl.store, tl.now(), keep=1, batch=4):
        deleted.append(n)
        with tl.store.read() as tx:
            assert pruned_through(tx) == sum(deleted)
    assert deleted == [4, 4, 1]
    with tl.store.read() as tx:
        assert [e.id for e in tx.events_after(0)] == [10]


def test_after_zero_replays_what_retention_kept(tl: Taskloom, live_server: str) -> None:
    """``after=0`` means "from the oldest event kept", pruned or not; a pruned cursor other
    than 0 still gets the current snapshots."""
    for title in ("a", "b", "c"):
        tl.board("t").add(title)
    tl.goal("t").set("Ship it")  # events 1-3 are the board's, 4 the goal's
    assert prune_events(tl.store, tl.now(), keep=2) == 2
    replay = read_events(f"{live_server}/api/events?tasks=0&after=0", 2)
    assert [(e["event"], seq(e["id"])) for e in replay] == [("todo_change", 3), ("goal_state", 4)]
    stale = read_events(f"{live_server}/api/events?tasks=0", 2, {"last-event-id": "1"})
    assert [(e["event"], body_id(e)) for e in stale] == [("todo_state", "4"), ("goal_state", "4")]
    assert {e["id"] for e in stale} == {"1"}  # the cursor stays until the opening is whole


def test_a_fresh_stream_reads_the_snapshots_a_page_at_a_time(
    tl: Taskloom, live_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no thread filter, every board is in the opening: it is read and sent in pages,
    so the first frame leaves before most boards are read, and a stream never holds them all."""
    from taskloom.server import sse
    from taskloom.server.hub import EventHub
    from taskloom.store.base import Document

    monkeypatch.setattr(sse, "SNAPSHOT_PAGE", 8, raising=False)
    boards = 40
    for i in range(boards):
        tl.board(f"b{i:02d}").add(f"card {i}")
    tl.goal("b00").set("Ship it")
    # Over HTTP: every board, then the goal, each at the head.
    frames = read_events(f"{live_server}/api/events?tasks=0", boards + 1)
    assert [json.loads(f["data"])["thread_id"] for f in frames[:boards]] == [
        f"b{i:02d}" for i in range(boards)
    ]
    assert frames[-1]["event"] == "goal_state" and {body_id(f) for f in frames} == {str(boards + 1)}
    assert {f["id"] for f in frames} == {""}

    loaded = [0]  # documents read from the database so far
    read = tl.store.read

    class Counted:
        def __init__(self, tx: Any) -> None:
            self.tx = tx

        def __getattr__(self, name: str) -> Any:
            found = getattr(self.tx, name)
            if not callable(found):
                return found

            def counted(*args: Any, **kwargs: Any) -> Any:
                out = found(*args, **kwargs)
                rows = out if isinstance(out, list) else [out]
                loaded[0] += sum(
                    isinstance(r, Document) or (isinstance(r, dict) and "state" in r) for r in rows
                )
                return out

            return counted

    @contextlib.contextmanager
    def counting() -> Iterator[Any]:
        with read() as tx:
            yield Counted(tx)

    async def go() -> tuple[int, int]:
        hub = EventHub(tl.store, poll_s=0.01)
        await hub.start()
        tl.store.read = counting  # type: ignore[method-assign]
        opened = await sse.open_stream(hub, after=None, thread_id=None)
        stream = sse.event_stream(hub, opened, thread_id=None)
        assert b"event: opening" in await anext(stream)
        at_first = loaded[0]
        for _ in range(boards + 1):
            await anext(stream)
        await stream.aclose()
        await hub.stop()
        return at_first, loaded[0]

    at_first, at_end = asyncio.run(go())
    assert at_first <= 8 and at_end == boards + 1


def _head(tl: Taskloom) -> str:
    with tl.store.read() as tx:
        return str(tx.event_head())


def test_an_opening_cut_off_midway_is_sent_whole_again(tl: Taskloom, live_server: str) -> None:
    """The snapshots of an opening carry no SSE id, and ``opened``, with the head's id, follows
    the last of them: a browser cut off mid-opening has no Last-Event-ID to resume from past
    the snapshots it missed, so it gets the whole opening again; one that saw the opening
    whole resumes live after the head, repeating none of it."""
    from taskloom.server.sse import SNAPSHOT_PAGE

    boards = 80
    assert boards > 2 * SNAPSHOT_PAGE  # three pages
    names = [f"b{i:02d}" for i in range(boards)]
    for name in names:
        tl.board(name).add("card")
    url = f"{live_server}/api/events?tasks=0"

    def opening() -> tuple[list[dict[str, str]], dict[str, str]]:
        """The snapshots of a fresh stream up to the first frame with an SSE id, and that."""
        with httpx.stream("GET", url, timeout=30) as response:
            frames = sse_frames(response.iter_lines())
            assert next(frames)["event"] == "opening"
            snapshots = []
            for frame in frames:
                if "data" not in frame or "id" in frame:
                    return snapshots, frame
                snapshots.append(frame)
        raise AssertionError("the stream ended")

    def reconnect(last_id: str, thread: str) -> list[dict[str, str]]:
        """The frames of a stream reopened as a browser does (with ``last_id`` unless it has
        none), up to the first event of ``thread``, written to once the stream is open (so
        this ends whether or not the stream opens with snapshots)."""
        headers = {"last-event-id": last_id} if last_id else {}
        frames = []
        with httpx.stream("GET", url, headers=headers, timeout=30) as response:
            tl.board(thread).add("written once the stream is open")
            for frame in sse_frames(response.iter_lines()):
                frames.append(frame)
                if "data" in frame and json.loads(frame["data"]).get("thread_id") == thread:
                    return frames
        raise AssertionError("the stream ended")

    def threads(events: Iterable[dict[str, str]]) -> list[str]:
        return [json.loads(e["data"])["thread_id"] for e in events]

    head = _head(tl)
    snapshots, end = opening()
    assert threads(snapshots) == names and {body_id(f) for f in snapshots} == {head}
    assert end["event"] == "opened" and seq(end["id"]) == int(head)
    # Cut off after 40 boards: the browser has no last event id, and reconnects without one.
    cut = read_events(url, 40)
    last_id = cut[-1]["id"]
    again = list(browser_events(reconnect(last_id, "later"), last_id))
    assert last_id == "" and threads(again[:-1]) == names  # every board, then the write
    # A whole opening ends with the head's id: reconnecting with it resumes after it.
    snapshots, end = opening()
    assert len(snapshots) == boards + 1 and seq(end["id"]) == int(_head(tl))  # with "later"
    resumed = reconnect(end["id"], "b00")  # the write only: no opening
    assert [(seq(f["id"]), f["event"]) for f in resumed] == [(seq(end["id"]) + 1, "todo_change")]
    assert json.loads(resumed[0]["data"])["data"]["version"] == 2


def test_a_fresh_stream_without_snapshots_still_gets_the_head(
    tl: Taskloom, live_server: str
) -> None:
    """No board or goal to open with: ``opened``, with the head's id, follows ``opening`` at
    once, so the client knows where to resume from."""
    tl.queue.add("job")  # an event, but no snapshot
    for query in ("", "?thread=nobody"):
        head = _head(tl)
        with httpx.stream("GET", f"{live_server}/api/events{query}", timeout=30) as response:
            tl.queue.add("written once the stream is open")  # so this ends on any server
            first, second = itertools.islice(sse_frames(response.iter_lines()), 2)
        assert first["event"] == "opening" and json.loads(first["data"]) == {"head": int(head)}
        assert second["event"] == "opened" and seq(second["id"]) == int(head), query


def test_a_stream_stopped_mid_opening_ends_without_the_head(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shutdown mid-opening ends the stream without the head's id (the client reconnects
    for a whole opening); one that comes after the opening was whole does not hold it back."""
    from taskloom.server import sse
    from taskloom.server.hub import EventHub

    monkeypatch.setattr(sse, "SNAPSHOT_PAGE", 2)
    for i in range(5):
        tl.board(f"b{i}").add("card")

    async def go(stop_after: int) -> list[bytes]:
        hub = EventHub(tl.store, poll_s=0.01)
        await hub.start()
        stop = anyio.Event()
        opened = await sse.open_stream(hub, after=None, thread_id=None)
        sent = []
        async for wire in sse.event_stream(hub, opened, thread_id=None, stop=stop):
            sent.append(wire)
            if len(sent) == stop_after:
                stop.set()
        await hub.stop()
        return sent

    cut = asyncio.run(go(4))  # stopped in the second page: it is sent, the third is not
    assert len(cut) == 5 and not any(b"id:" in wire for wire in cut)
    whole = asyncio.run(go(7))  # "opening", five snapshots, "opened"
    assert len(whole) == 7 and not any(b"id:" in wire for wire in whole[:6])
    assert whole[6].startswith(b"id: 5-") and b"event: opened" in whole[6]


def test_a_stream_behind_what_retention_pruned_gets_snapshots_not_a_hole(tl: Taskloom) -> None:
    """A slow stream catching up from the table, whose next events retention deletes before
    it reads them, is sent the current snapshots (then the head), never a silent jump: the
    one change of board "b" among them would otherwise stay missing from its view."""
    from taskloom.server import sse
    from taskloom.server.cursor import Cursor
    from taskloom.server.hub import EventHub

    for i in range(20):
        tl.board("a").add(f"a{i}")
    tl.board("b").add("the only change of b")
    for i in range(20):
        tl.board("a").add(f"a{i + 20}")

    async def go() -> list[bytes]:
        hub = EventHub(tl.store, poll_s=0.01, window=1)  # the stream reads from the table
        await hub.start()
        stop = anyio.Event()
        opened = await sse.open_stream(hub, after=Cursor(1), thread_id=None)  # covered, so far
        prune_events(tl.store, tl.now(), keep=5)
        sent = []
        async for wire in sse.event_stream(hub, opened, thread_id=None, stop=stop):
            sent.append(wire)
            if wire.startswith(b"id:"):
                stop.set()
        await hub.stop()
        return sent

    sent = asyncio.run(go())
    frames = [next(sse_frames(iter([*w.decode().splitlines(), ""]))) for w in sent]
    snapshots = {
        json.loads(f["data"])["thread_id"]: f for f in frames if f.get("event") == "todo_state"
    }
    assert set(snapshots) == {"a", "b"} and all("id" not in f for f in snapshots.values())
    assert "the only change of b" in snapshots["b"]["data"]
    assert frames[-1]["event"] == "opened" and seq(frames[-1]["id"]) == int(_head(tl))


def test_a_database_failure_is_logged_by_the_server(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A database replaced under the server failed every call with a 500 the server never
    mentioned: its operator saw nothing, the panel an empty system."""
    from taskloom.domain.errors import StoreError

    def broken() -> list[object]:
        raise StoreError("the database file x was deleted or replaced: restart the process")

    monkeypatch.setattr(tl, "threads", broken)
    with caplog.at_level("ERROR", logger="taskloom.server"):
        r = request(tl, "GET", "/api/threads")
    assert r.status_code == 500 and "restart the process" in r.json()["message"]
    assert "GET /api/threads: the database file x was deleted" in caplog.text


def test_the_server_purges_expired_stashed_results_of_every_thread(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """Only a thread stashing again purged its own expired results: an ended thread's stayed
    on disk, up to its quota, for ever."""
    tl = tl_fixed
    for thread in ("a", "b"):
        assert "stashed" in tl.guard(thread).wrap("cat", "word " * 5000).lower()
    clock.advance(8 * 86400)  # past the 7-day TTL
    app = create_app(tl, prune_every_s=0.05, mcp=False)

    async def go() -> None:
        async with app.router.lifespan_context(app):
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                with tl.store.read() as tx:
                    if tx.query_one("SELECT count(*) AS n FROM stash_results")["n"] == 0:
                        return
                await asyncio.sleep(0.05)

    asyncio.run(go())
    with tl.store.read() as tx:
        assert tx.query_one("SELECT count(*) AS n FROM stash_results")["n"] == 0
        log = tx.query("SELECT action FROM stash_log WHERE action = 'expired'")
    assert len(log) == 2


def test_a_url_that_is_not_utf8_is_refused_not_read_as_another_thread(
    tl: Taskloom, live_server: str
) -> None:
    """``%FF`` decoded to U+FFFD: the request read, changed and streamed the thread named
    "\ufffd" (which anyone may create) instead of saying the id was not text."""
    tl.board("\ufffd").add("someone else's card")
    tl.goal("\ufffd").set("someone else's goal")
    for method, path in (
        ("GET", "/api/threads/%FF/board"),
        ("GET", "/api/threads/%ED%A0%80/goal"),
        ("POST", "/api/threads/%FE/goal/pause"),
        ("GET", "/api/events?thread=%FF"),
    ):
        response = httpx.request(method, live_server + path, json={}, timeout=10)
        assert response.status_code == 400, (path, response.text)
        assert "not valid UTF-8" in response.json()["message"]
    assert tl.goal("\ufffd").get()["goal"]["status"] == "active"
    ok = httpx.get(live_server + "/api/threads/%C3%A9t%C3%A9/board", timeout=10)
    assert ok.status_code == 200 and ok.json()["thread_id"] == "été"


def test_a_stream_flag_other_than_0_or_1_is_refused(tl: Taskloom, live_server: str) -> None:
    """``tasks=false`` (or ``no``) was read as "with tasks", as anything but ``0`` was: the
    stream sent the queue's events to a client that asked for none."""
    for value in ("false", "no", "", "2"):
        response = httpx.get(f"{live_server}/api/events?thread=t&tasks={value}", timeout=10)
        assert response.status_code == 400, (value, response.text)
        assert response.json() == {"error": "invalid_input", "message": "`tasks` must be 0 or 1"}
    refused = httpx.get(f"{live_server}/api/threads/t/ready?explain=yes", timeout=10)
    assert refused.json() == {"error": "invalid_input", "message": "`explain` must be 0 or 1"}
    tl.board("t").add("a card")
    (board,) = read_events(f"{live_server}/api/events?thread=t&tasks=0", 1)
    assert board["event"] == "todo_state"
