"""The web panel in a real browser (Debian's chromium via Playwright) against `taskloom serve`.

Without chromium these tests skip with a message, unless ``TASKLOOM_REQUIRE_BROWSER=1``
(set by ``.ci/run``), which turns a missing browser into a failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import taskloom
from tests.conftest import Server, subprocess_env

CHROMIUM = Path(os.environ.get("TASKLOOM_CHROMIUM", "/usr/bin/chromium"))
XSS_TITLE = '<img src=x onerror="window.__xss=1">'
XSS_NOTES = "<script>window.__xss=2</script>"

pytestmark = pytest.mark.browser


def _need_browser() -> None:
    if CHROMIUM.exists():
        return
    message = f"chromium not found at {CHROMIUM}: browser tests of the web panel did not run"
    if os.environ.get("TASKLOOM_REQUIRE_BROWSER") == "1":
        pytest.fail(message)
    pytest.skip(message + " (apt-get install chromium)")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    _need_browser()
    srv = Server(f"sqlite:///{tmp_path / 'panel.db'}")
    srv.start()
    yield srv
    srv.kill()


@pytest.fixture
def page(server: Server) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        pg = browser.new_page(viewport={"width": 1280, "height": 900})
        dialogs: list[str] = []
        pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        pg.set_default_timeout(20_000)
        yield pg
        assert dialogs == [], f"the page opened dialogs: {dialogs}"
        browser.close()


def cli(server: Server, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "taskloom", *args, "--db", server.db_url],
        check=True,
        env=subprocess_env(),
        capture_output=True,
        timeout=60,
    )


def open_first_step(server: Server, page: Any, where: str) -> None:
    """A thread ``t`` with one card, the panel opened at ``where`` and live."""
    from playwright.sync_api import expect

    cli(server, "board", "add", "t", "First step")
    page.goto(f"{server.url}{where}")
    expect(page.locator(".card .title", has_text="First step")).to_be_visible()
    expect(page.locator("#live")).to_have_attribute("data-state", "live")


def test_card_added_from_the_cli_appears_live(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    open_first_step(server, page, "/#t")
    cli(server, "board", "add", "t", "Added while watching")
    expect(page.locator(".card .title", has_text="Added while watching")).to_be_visible()
    # Kanban puts it in the To do column; the thread list counts it.
    page.get_by_role("button", name="Kanban").click()
    todo = page.locator('[data-column="todo"]')
    expect(todo.locator(".kcard .title", has_text="Added while watching")).to_be_visible()
    expect(page.locator(".threads .meta")).to_contain_text("2 to do")


def test_plan_approved_in_the_browser_changes_the_store(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    snap = tl.board("t").add(
        "Deploy to production", status="awaiting_approval", approval_mode="required"
    )
    card_id = snap["card"]["id"]
    page.goto(f"{server.url}/#t")
    card = page.locator(f'[data-card="{card_id}"]')
    # A screen reader hears which plan the button decides on.
    card.get_by_role("button", name="Approve the plan: Deploy to production", exact=True).click()
    expect(card.locator(".status")).to_have_attribute("data-status", "ready")
    assert tl.board("t").list()["cards"][0]["status"] == "ready"
    tl.close()


def _goal_shown(server: Server, page: Any, *, budget: int, used: int) -> taskloom.Taskloom:
    """Thread ``t`` with a goal that has used ``used`` of ``budget`` tokens, open in ``page``."""
    tl = taskloom.connect(server.db_url)
    goal_id = tl.goal("t").set("Ship the release", token_budget=budget)["goal"]["goal_id"]
    tl.goal("t").account_usage(goal_id, tokens=used)
    page.goto(f"{server.url}/#t")
    return tl


def test_goal_budget_and_pause_from_the_browser(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = _goal_shown(server, page, budget=1000, used=900)
    expect(page.locator(".goal .usage")).to_have_text("900 / 1,000 tokens")
    page.get_by_role("button", name="Pause").click()
    expect(page.get_by_role("button", name="Resume")).to_be_visible()
    page.get_by_label("New token budget").fill("5000")
    page.get_by_role("button", name="Set budget").click()
    expect(page.locator(".goal .usage")).to_have_text("900 / 5,000 tokens")
    goal = tl.goal("t").get()["goal"]
    assert goal["status"] == "paused" and goal["token_budget"] == 5000
    tl.close()


def test_a_half_typed_budget_and_the_focus_survive_live_updates(
    server: Server, page: object
) -> None:
    """Usage reports rebuilt the goal panel: the typed budget was emptied and the focus went
    to the page, so Enter did nothing; a new card did the same to a focused Approve button."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = _goal_shown(server, page, budget=1000, used=100)
    tl.board("t").add("Plan two", status="awaiting_approval", approval_mode="required")
    goal_id = tl.goal("t").get()["goal"]["goal_id"]
    field = page.get_by_label("New token budget")
    field.fill("25")
    tl.goal("t").account_usage(goal_id, tokens=5)  # the agent reports usage meanwhile
    expect(page.locator(".goal .usage").first).to_have_text("105 / 1,000 tokens")
    expect(page.get_by_label("New token budget")).to_have_value("25")
    expect(page.get_by_label("New token budget")).to_be_focused()
    approve = page.get_by_role("button", name="Approve the plan: Plan two")
    approve.focus()
    tl.board("t").add("Another card")  # another process adds a card
    expect(page.locator(".card .title", has_text="Another card")).to_be_visible()
    expect(page.get_by_role("button", name="Approve the plan: Plan two")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Approve the plan: Plan two")).to_have_count(0)
    assert tl.board("t").list()["cards"][0]["status"] == "ready"
    tl.close()


def test_an_action_waiting_for_the_database_says_so_then_says_done(
    server: Server, page: object
) -> None:
    """Another process holding SQLite's write lock kept a click unanswered for ten seconds,
    with nothing on screen; two failures showed as one toast, neither saying what failed."""
    import sqlite3

    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = _goal_shown(server, page, budget=1000, used=1)
    holder = sqlite3.connect(server.db_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        page.get_by_role("button", name="Pause").click()
        expect(page.locator("#toast")).to_have_text("Pause: waiting for the database…")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    expect(page.locator("#toast")).to_have_text("Pause: done")
    expect(page.get_by_role("button", name="Resume")).to_be_visible()
    holder = sqlite3.connect(server.db_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # past the server's busy timeout: both clicks fail
    try:
        page.get_by_role("button", name="Resume").click()
        page.get_by_label("New token budget").fill("5")
        page.get_by_role("button", name="Set budget").click()
        toast = page.locator("#toast")
        expect(toast).to_contain_text("Resume not applied", timeout=30_000)
        expect(toast).to_contain_text("Budget change not applied", timeout=30_000)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert tl.goal("t").get()["goal"]["status"] == "paused"
    tl.close()


def test_a_second_click_while_an_action_waits_sends_nothing(server: Server, page: object) -> None:
    """A double click on a Cancel waiting for the database sent two cancels, and the second
    came back as a failure for a task the first had cancelled."""
    import sqlite3

    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    task, _ = tl.queue.add("Rebuild cache")
    page.goto(f"{server.url}/")
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    button = page.get_by_role("button", name="Cancel the task: Rebuild cache")
    holder = sqlite3.connect(server.db_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        button.click()
        expect(button).to_have_attribute("aria-disabled", "true")
        expect(button).to_be_focused()  # busy, not disabled: the keyboard stays on it
        button.click(force=True)  # a browser delivers it; Playwright would wait for "enabled"
        expect(page.locator("#toast")).to_have_text("Cancel: waiting for the database…")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    expect(page.locator("#toast")).to_have_text("Cancel: done")
    expect(page.locator("table.tasks .status")).to_have_attribute("data-status", "canceled")
    assert len(posts) == 1, posts
    assert tl.queue.get(task.id).status == "canceled"
    tl.close()


def test_the_panel_runs_under_its_content_policy_without_errors(
    server: Server, page: object
) -> None:
    """The policy refuses inline scripts and styles: the panel's own code must need neither
    (the budget bar was sized by a style attribute), and nothing it loads may fail (the
    browser's favicon request was a 404)."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    tl = _goal_shown(server, page, budget=1000, used=250)
    tl.queue.add("Index the docs")
    tl.board("t").add("First step")
    expect(page.locator(".card .title", has_text="First step")).to_be_visible()
    expect(page.locator("table.tasks td", has_text="Index the docs")).to_have_count(1)
    assert page.locator(".goal .bar i").evaluate("el => el.style.width") == "25%"
    policy = page.evaluate("fetch('/').then(r => r.headers.get('content-security-policy'))")
    assert "script-src 'self'" in policy and "style-src 'self'" in policy
    assert errors == [], errors
    injected = page.evaluate(
        """() => { const s = document.createElement('script'); s.textContent = 'window.__ran = 1';
        document.body.append(s); return window.__ran === undefined; }"""
    )
    assert injected, "an inline script ran despite the policy"
    tl.close()


def test_a_time_budget_is_shown_and_can_be_removed(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    snap = tl.goal("t").set("Ship the release", token_budget=1000, time_budget_s=60)
    tl.goal("t").account_usage(snap["goal"]["goal_id"], tokens=10, seconds=90)
    page.goto(f"{server.url}/#t")
    expect(page.locator(".goal .usage.over")).to_have_text("1 min 30 s / 1 min 0 s of time")
    page.get_by_role("button", name="Remove time budget").click()
    expect(page.locator(".goal .usage.over")).to_have_count(0)
    goal = tl.goal("t").get()["goal"]
    assert goal["time_budget_s"] is None and goal["status"] == "active"
    tl.close()


def test_a_goal_with_only_a_time_budget_is_not_said_to_have_no_budget(
    server: Server, page: object
) -> None:
    """The token usage of a goal limited by time alone read "no budget" beside its time
    budget; it says only the tokens, and "no budget" is kept for a goal with neither."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    snap = tl.goal("t").set("Ship the release", time_budget_s=60)
    tl.goal("t").account_usage(snap["goal"]["goal_id"], tokens=10, seconds=30)
    page.goto(f"{server.url}/#t")
    usage = page.locator(".goal .usage")
    expect(usage).to_have_text(["10 tokens", "30 s / 1 min 0 s of time"])
    tl.goal("t").set_budget(time_budget_s=None)
    expect(usage).to_have_text(["10 tokens · no budget"])
    tl.close()


def test_queue_filters_and_cancel(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    tl.queue.add("Index the docs", kind="index")
    keep, _ = tl.queue.add("Rebuild cache", kind="cache")
    tl.queue.claim("worker-7", lease=300, kinds=["index"])
    page.goto(f"{server.url}/")
    rows = page.locator("table.tasks tbody tr")
    expect(rows).to_have_count(2)
    page.get_by_label("Agent filter").fill("worker-7")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Index the docs")
    page.get_by_label("Agent filter").fill("")
    page.get_by_label("Status filter").select_option("ready")
    expect(rows).to_have_count(1)
    rows.first.get_by_role("button", name="Cancel").click()
    expect(page.locator("table.tasks")).to_have_count(0)
    assert tl.queue.get(keep.id).status == "canceled"
    tl.close()


def test_a_delayed_ready_task_says_from_when_it_may_be_claimed(
    server: Server, page: object
) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    later, _ = tl.queue.add("Retry the sync", delay_s=3600)
    now, _ = tl.queue.add("Index the docs")
    page.goto(f"{server.url}/")
    waits = page.locator(f'[data-task="{later.id}"] .waits')
    expect(waits).to_contain_text("not before")
    expect(waits).to_have_attribute("title", later.to_dict()["not_before"])
    expect(page.locator(f'[data-task="{now.id}"]')).to_be_visible()
    expect(page.locator(f'[data-task="{now.id}"] .waits')).to_have_count(0)
    tl.close()


def test_a_dead_task_is_requeued_from_the_panel(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    task, _ = tl.queue.add("Sync the mirror", max_attempts=1)
    claimed = tl.queue.claim("worker-1")
    assert claimed is not None
    tl.queue.fail(task.id, claimed.lease_token or "", "mirror down")
    page.goto(f"{server.url}/")
    row = page.locator(f'[data-task="{task.id}"]')
    expect(row.locator(".status")).to_have_attribute("data-status", "dead")
    expect(row.get_by_role("button", name="Cancel")).to_have_count(0)  # nothing to cancel
    row.get_by_role("button", name="Requeue").click()
    expect(row.locator(".status")).to_have_attribute("data-status", "ready")  # live
    expect(row.get_by_role("button", name="Cancel")).to_be_visible()
    back = tl.queue.get(task.id)
    assert back.status == "ready" and back.attempts == 0 and back.last_error == "mirror down"
    tl.close()


def test_markup_in_titles_and_notes_is_shown_as_text(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    tl.board("x<b>").add(XSS_TITLE, notes=XSS_NOTES)
    tl.goal("x<b>").set(XSS_NOTES)
    tl.queue.add(XSS_TITLE)
    page.goto(f"{server.url}/")
    expect(page.locator(".card .title")).to_have_text(XSS_TITLE)
    expect(page.locator(".card .sub")).to_have_text(XSS_NOTES)
    expect(page.locator(".goal .objective")).to_have_text(XSS_NOTES)
    expect(page.locator("table.tasks td", has_text=XSS_TITLE)).to_have_count(1)
    expect(page.locator(".threads .name")).to_have_text("x<b>")
    assert page.evaluate("window.__xss") is None
    assert page.locator("img").count() == 0 and page.locator("main script").count() == 0
    tl.close()


def test_reload_and_server_restart_recover_the_live_view(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    cli(server, "board", "add", "t", "Before reload")
    page.goto(f"{server.url}/#t")
    expect(page.locator(".card .title", has_text="Before reload")).to_be_visible()
    page.reload()
    expect(page.locator(".card .title", has_text="Before reload")).to_be_visible()
    cli(server, "board", "add", "t", "After reload")
    expect(page.locator(".card .title", has_text="After reload")).to_be_visible()
    server.kill()
    expect(page.locator("#live")).to_have_attribute("data-state", "reconnecting")
    # The view stays up while the server is away (no flicker to empty) ...
    expect(page.locator(".card")).to_have_count(2)
    cli(server, "board", "add", "t", "Written while the server was down")
    server.start()
    # ... and the reconnect resumes from the last event id, with no reload.
    expect(
        page.locator(".card .title", has_text="Written while the server was down")
    ).to_be_visible()
    cli(server, "board", "add", "t", "After restart")
    expect(page.locator(".card .title", has_text="After restart")).to_be_visible()
    expect(page.locator(".card")).to_have_count(4)


def _errors(page: object) -> list[str]:
    """Uncaught exceptions in the page, collected from now on."""
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return errors


def _streams(page: Any) -> list[dict[str, list[str]]]:
    """The query of every event stream the page opens, from now on."""
    from tests.test_panel_live import _requests

    return _requests(page, "/api/events")


def test_queue_resyncs_from_the_api_after_a_reconnect_past_pruned_events(
    server: Server, page: object
) -> None:
    """The stream resumes with snapshots once its cursor is pruned, and tasks have none: the
    task list loaded on reconnect must replace the panel's (a canceled task is not left Ready,
    a deleted one does not linger)."""
    import time

    from playwright.sync_api import Page, expect

    from taskloom.store.outbox import prune_events

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    tl.board("t").add("one")
    gone, _ = tl.queue.add("Deleted while away")
    stale, _ = tl.queue.add("Canceled while away")
    page.goto(f"{server.url}/#t")
    expect(page.locator(f'[data-task="{stale.id}"] .status')).to_have_attribute(
        "data-status", "ready"
    )
    expect(page.locator(f'[data-task="{gone.id}"]')).to_have_count(1)
    server.kill()
    expect(page.locator("#live")).to_have_attribute("data-state", "reconnecting")
    tl.queue.cancel(gone.id)
    time.sleep(0.01)
    assert tl.queue.prune(older_than_s=0.001) == 1
    tl.queue.cancel(stale.id, "no longer needed")
    for i in range(3):
        tl.board("t").add(f"card {i}")
    assert prune_events(tl.store, tl.now(), keep=1) > 0
    server.start()
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    expect(page.locator(".card")).to_have_count(4)
    expect(page.locator(f'[data-task="{stale.id}"] .status')).to_have_attribute(
        "data-status", "canceled"
    )
    expect(page.locator(f'[data-task="{gone.id}"]')).to_have_count(0)
    expect(page.locator("table.tasks tbody tr")).to_have_count(1)
    tl.close()


def test_goal_buttons_follow_the_goal_status(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = _goal_shown(server, page, budget=100, used=150)
    assert tl.goal("t").get()["goal"]["status"] == "budget_limited"
    goal = page.locator(".goal")
    expect(goal.locator(".status")).to_have_attribute("data-status", "budget_limited")
    # Pausing a budget-limited goal always fails: no Pause, no Resume; the budget form stays.
    expect(goal.get_by_role("button", name="Pause")).to_have_count(0)
    expect(goal.get_by_role("button", name="Resume")).to_have_count(0)
    expect(goal.get_by_role("button", name="Set budget")).to_be_visible()
    tl.goal("t").block("waiting for credentials")
    expect(goal.locator(".status")).to_have_attribute("data-status", "blocked")
    # A blocked goal can be resumed (and paused); Resume makes it active, then Pause shows.
    expect(goal.get_by_role("button", name="Pause")).to_have_count(1)
    goal.get_by_role("button", name="Resume").click()
    expect(goal.locator(".status")).to_have_attribute("data-status", "budget_limited")
    tl.goal("t").set_budget(1000)
    expect(goal.locator(".status")).to_have_attribute("data-status", "active")
    expect(goal.get_by_role("button", name="Resume")).to_have_count(0)
    goal.get_by_role("button", name="Pause").click()
    expect(goal.locator(".status")).to_have_attribute("data-status", "paused")
    expect(goal.get_by_role("button", name="Pause")).to_have_count(0)
    expect(goal.get_by_role("button", name="Resume")).to_have_count(1)
    tl.goal("t").complete("shipped")
    expect(goal.locator(".status")).to_have_attribute("data-status", "complete")
    expect(goal.locator("button", has_text="Resume")).to_have_count(0)
    expect(page.locator("#toast")).to_be_hidden()
    tl.close()


def test_no_threads_shows_the_hint(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    errors = _errors(page)
    streams = _streams(page)
    page.goto(f"{server.url}/")
    expect(page.locator("#threads-empty")).to_be_visible()
    expect(page.locator("#board")).to_contain_text("Pick a thread.")
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    # No thread to follow: the queue's events (and any thread's, to notice the first one).
    assert streams == [{"tasks": ["1"]}]
    cli(server, "board", "add", "t", "First step")
    expect(page.locator(".threads .name")).to_have_text("t")
    expect(page.locator("#threads-empty")).to_be_hidden()
    expect(page.locator(".card .title", has_text="First step")).to_be_visible()
    assert streams == [{"tasks": ["1"]}, {"thread": ["t"], "tasks": ["1"]}]
    assert errors == []


def test_a_malformed_hash_names_no_thread(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    errors = _errors(page)
    # Not a thread: the panel starts as with no hash, picking the first thread.
    open_first_step(server, page, "/#100%")
    page.evaluate("location.hash = '%E0%A4%A'")
    page.wait_for_timeout(300)
    cli(server, "board", "add", "t", "Still live")
    expect(page.locator(".card .title", has_text="Still live")).to_be_visible()
    assert errors == []


def test_bidi_controls_in_user_text_are_isolated_and_shown(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    spoof = "evil"  # a thread id cannot hold such characters (the store refuses them)
    tl.board(spoof).add(
        "\u202etitle", assigned_agent="\u202eagent", plan=["rm -rf /\u202e krow/emoh~\u202c"]
    )
    tl.queue.add("\u202etask")
    page.goto(f"{server.url}/")
    name = page.locator(".threads .name")
    expect(name).to_have_text("evil")
    expect(page.locator("#thread-title")).to_have_text("evil")
    expect(page.locator(".card .sub")).to_have_text("@\u27e8U+202E\u27e9agent")
    # Free text shows its override controls too: a plan step read as "rm -rf /~home/work".
    expect(page.locator(".card .title")).to_have_text("\u27e8U+202E\u27e9title")
    step = "rm -rf /\u27e8U+202E\u27e9 krow/emoh~\u27e8U+202C\u27e9"
    expect(page.locator(".card li")).to_have_text(step)
    user_text = [
        name,
        page.locator("#thread-title"),
        page.locator(".card .title"),
        page.locator(".card .sub [dir]"),
        page.locator("table.tasks .title"),
    ]
    for element in user_text:
        expect(element).to_have_attribute("dir", "auto")
        assert element.evaluate("e => getComputedStyle(e).unicodeBidi") == "isolate"
    tl.close()


def test_a_restored_older_database_replaces_the_view(
    tmp_path: Path, server: Server, page: object
) -> None:
    """After a restore the server's outbox is behind the panel's last event id: it opens with
    fresh snapshots, older than the ones shown, which must replace the view all the same."""
    import sqlite3

    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    db = tmp_path / "panel.db"
    backup = tmp_path / "backup.db"
    tl = taskloom.connect(server.db_url)
    tl.board("t").add("Kept in the backup")
    with sqlite3.connect(db) as src, sqlite3.connect(backup) as dst:
        src.backup(dst)
    page.goto(f"{server.url}/#t")
    expect(page.locator(".card")).to_have_count(1)
    for i in range(3):
        tl.board("t").add(f"Lost in the restore {i}")
    expect(page.locator(".card")).to_have_count(4)
    tl.close()
    server.kill()
    expect(page.locator("#live")).to_have_attribute("data-state", "reconnecting")
    with sqlite3.connect(backup) as src, sqlite3.connect(db) as dst:
        src.backup(dst)
    server.start()
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    expect(page.locator(".card")).to_have_count(1)
    expect(page.locator(".card .title")).to_have_text("Kept in the backup")
    cli(server, "board", "add", "t", "Written after the restore")
    expect(page.locator(".card .title", has_text="Written after the restore")).to_be_visible()
    expect(page.locator(".card")).to_have_count(2)


def test_queue_counts_and_status_filter_cover_tasks_beyond_the_loaded_ones(
    server: Server, page: object
) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    tl.queue.add_many([{"title": f"task {i}"} for i in range(600)])
    late, _ = tl.queue.add("The least urgent one")
    tl.queue.cancel(late.id)
    page.goto(f"{server.url}/")
    expect(page.locator("#queue-stats")).to_have_text("600 ready · 1 canceled")
    expect(page.locator("#queue .more")).to_have_text("Showing the 200 most urgent of 601 tasks.")
    page.get_by_label("Status filter").select_option("canceled")
    rows = page.locator("table.tasks tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("The least urgent one")
    expect(page.locator("#queue .more")).to_have_count(0)
    # Live changes keep the counts from the server, not from the tasks held.
    tl.queue.add("One more")
    expect(page.locator("#queue-stats")).to_have_text("601 ready · 1 canceled")
    tl.close()


def test_queue_counts_say_how_many_can_run_now_when_dependencies_hold_some_back(
    server: Server, page: object
) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    first, _ = tl.queue.add("Build")
    tl.queue.add("Deploy", depends_on=[first.id])
    page.goto(f"{server.url}/")
    expect(page.locator("#queue-stats")).to_have_text("1 can run now · 2 ready")
    claimed = tl.queue.claim("w1")
    assert claimed is not None and claimed.id == first.id
    tl.queue.done(claimed.id, claimed.lease_token)
    expect(page.locator("#queue-stats")).to_have_text("1 ready · 1 completed")
    tl.close()


def test_a_page_without_a_hash_connects_once_to_the_first_thread(
    server: Server, page: object
) -> None:
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    streams = _streams(page)
    open_first_step(server, page, "/")
    assert streams == [{"thread": ["t"], "tasks": ["1"]}]


def test_budget_field_takes_exact_whole_numbers_only(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    posts: list[str] = []
    page.on("request", lambda r: r.method == "POST" and posts.append(r.post_data or ""))
    tl = _goal_shown(server, page, budget=1000, used=900)
    usage = page.locator(".goal .usage")
    expect(usage).to_have_text("900 / 1,000 tokens")
    field = page.get_by_label("New token budget")
    field.fill("1e6")
    page.get_by_role("button", name="Set budget").click()
    expect(usage).to_have_text("900 / 1,000,000 tokens")
    assert posts == ['{"token_budget":1000000}']
    for bad in ("1.5", "9007199254740993", "0"):
        field.fill(bad)
        page.get_by_role("button", name="Set budget").click()
        expect(page.locator("#toast")).to_contain_text("Budget must be a whole number")
    assert len(posts) == 1 and tl.goal("t").get()["goal"]["token_budget"] == 1_000_000
    # A budget past 2^53 (the CLI takes them) is shown with its own digits, not rounded ones.
    tl.goal("t").set_budget(2**60 + 1)
    expect(usage).to_have_text("900 / 1,152,921,504,606,846,977 tokens")
    tl.close()


def test_a_long_plan_step_keeps_the_buttons_on_screen(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    url = "https://example.com/" + "a" * 300
    tl = taskloom.connect(server.db_url)
    tl.board("t").add(
        "Deploy", status="awaiting_approval", approval_mode="required", plan=["Open", url]
    )
    page.goto(f"{server.url}/#t")
    approve = page.get_by_role("button", name="Approve")
    expect(approve).to_be_visible()
    box = approve.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1280
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width
    tl.close()


def test_an_empty_queue_says_so_and_nothing_else(server: Server, page: object) -> None:
    """The note under the queue was passed to replaceChildren as null, shown as "null"."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    tl.board("t").add("card")
    page.goto(f"{server.url}/#t")
    expect(page.locator("#queue")).to_have_text("The queue is empty.")
    tl.close()


def _awaiting(tl: taskloom.Taskloom, thread: str, title: str, plan: list[str]) -> str:
    snap = tl.board(thread).add(title, plan=plan, approval_mode="required")
    tl.board(thread).update_status(snap["card"]["id"], "awaiting_approval")
    return str(snap["card"]["id"])


def test_focus_stays_on_its_card_when_another_card_has_the_same_title(
    server: Server, page: object
) -> None:
    """Focus was found again by the button's name alone: after a live update it moved to the
    Approve button of another card titled alike, where Enter approved the wrong plan."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    first = _awaiting(tl, "t", "deploy", ["plan A: harmless"])
    second = _awaiting(tl, "t", "deploy", ["plan B: drop the database"])
    page.goto(f"{server.url}/#t")
    page.locator(f'[data-card="{second}"]').get_by_role("button", name="Approve").focus()
    tl.board("t").add("unrelated")
    expect(page.locator(".card .title", has_text="unrelated")).to_be_visible()
    focused = "document.activeElement.closest('[data-card]')?.dataset.card"
    assert page.evaluate(focused) == second
    page.locator(f'[data-card="{first}"]').get_by_role("button", name="Approve").focus()
    page.keyboard.press("Enter")
    expect(page.locator(f'[data-card="{first}"] .status')).to_have_attribute("data-status", "ready")
    page.keyboard.press("Enter")  # the approved card's button is gone: Enter approves nothing
    assert page.evaluate(focused) != second
    statuses = {c["id"]: c["status"] for c in tl.board("t").list()["cards"]}
    assert statuses[first] == "ready" and statuses[second] == "awaiting_approval"
    tl.close()


def test_a_typed_budget_stays_with_its_thread(server: Server, page: object) -> None:
    """A budget typed on one thread's goal showed on the next thread's, and set it there."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = _goal_shown(server, page, budget=1000, used=1)
    tl.goal("u").set("Other goal", token_budget=50)
    page.get_by_label("New token budget").fill("777")
    page.goto(f"{server.url}/#u")
    expect(page.locator(".goal .objective")).to_have_text("Other goal")
    expect(page.get_by_label("New token budget")).to_have_value("")
    tl.close()


def test_kanban_shows_the_plan_a_person_approves(server: Server, page: object) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    card = _awaiting(tl, "t", "Deploy", ["back up", "migrate"])
    page.goto(f"{server.url}/#t")
    page.get_by_role("button", name="Kanban").click()
    kcard = page.locator(f'.kcard[data-card="{card}"]')
    expect(kcard.locator("ol li")).to_have_text(["back up", "migrate"])
    box, reject = kcard.bounding_box(), kcard.get_by_role("button", name="Reject").bounding_box()
    assert box and reject and reject["x"] + reject["width"] <= box["x"] + box["width"]
    tl.close()


def _mark_cards(page: Any) -> None:
    page.evaluate("document.querySelectorAll('[data-card]').forEach(el => { el._kept = 1; })")


def _kept_cards(page: Any) -> int:
    """How many card elements marked by :func:`_mark_cards` are still on the page."""
    return int(
        page.evaluate("[...document.querySelectorAll('[data-card]')].filter(e => e._kept).length")
    )


def test_a_live_update_rebuilds_only_the_cards_that_changed(server: Server, page: object) -> None:
    """Every update rebuilt the whole board: on 1,000 cards each froze the page ~0.3 s."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    ids = [tl.board("t").add(f"card {i}")["card"]["id"] for i in range(30)]
    for view in ("List", "Kanban"):
        page.goto(f"{server.url}/#t")
        page.get_by_role("button", name=view).click()
        shown = ".kanban [data-card]" if view == "Kanban" else "ul.cards [data-card]"
        expect(page.locator(shown)).to_have_count(30)  # drawn in this view, not the last
        _mark_cards(page)
        tl.board("t").update_status(ids[3], "in_progress")
        moved = f'[data-column="in_progress"] [data-card="{ids[3]}"]'
        if view == "List":
            moved = f'[data-card="{ids[3]}"] .status[data-status="in_progress"]'
        expect(page.locator(moved)).to_be_visible()
        assert _kept_cards(page) == 29, view
        tl.board("t").update_status(ids[3], "todo")
        back = f'[data-column="todo"] [data-card="{ids[3]}"]'
        if view == "List":
            back = f'[data-card="{ids[3]}"] .status[data-status="todo"]'
        expect(page.locator(back)).to_be_visible()  # before the next view is marked
    tl.close()


def test_a_wrong_token_stops_the_live_view_and_says_why(tmp_path: Path, page: object) -> None:
    """The panel said "reconnecting" for ever, retrying a refused stream every two seconds."""
    import time

    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    srv = Server(f"sqlite:///{tmp_path / 'tok.db'}", "--token=s3cret")
    srv.start()
    try:
        streams = _streams(page)
        page.goto(f"{srv.url}/?token=wrong")
        expect(page.locator("#live")).to_have_attribute("data-state", "stopped")
        expect(page.locator("#toast")).to_contain_text("wrong token")
        opened = len(streams)
        time.sleep(3)  # past the retry the panel used to make
        assert len(streams) == opened
        page.goto(f"{srv.url}/?token=s3cret")
        expect(page.locator("#live")).to_have_attribute("data-state", "live")
    finally:
        srv.kill()


def test_the_caret_in_a_half_typed_budget_survives_a_live_update(
    server: Server, page: object
) -> None:
    """The field was drawn anew with the caret at its start: "12", an update, "3" set 312."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = _goal_shown(server, page, budget=1000, used=1)
    goal_id = tl.goal("t").get()["goal"]["goal_id"]
    field = page.get_by_label("New token budget")
    field.click()
    page.keyboard.type("12")
    tl.goal("t").account_usage(goal_id, tokens=5)
    expect(page.locator(".goal .usage").first).to_have_text("6 / 1,000 tokens")
    page.keyboard.type("3")
    expect(page.get_by_label("New token budget")).to_have_value("123")
    page.keyboard.press("Enter")
    expect(page.locator(".goal .usage").first).to_have_text("6 / 123 tokens")
    tl.close()


def test_a_removal_keeps_the_other_cards_and_an_edit_keeps_the_focus(
    server: Server, page: object
) -> None:
    """Every card's order moved on a removal, so every card was rebuilt; and a button found
    again by its label (which names the title) lost the focus when the title was edited."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    ids = [tl.board("t").add(f"card {i}")["card"]["id"] for i in range(20)]
    page.goto(f"{server.url}/#t")
    expect(page.locator("[data-card]")).to_have_count(20)
    _mark_cards(page)
    tl.board("t").remove(ids[0])
    expect(page.locator("[data-card]")).to_have_count(19)
    assert _kept_cards(page) == 19
    page.get_by_role("button", name="Mark done: card 5").focus()
    tl.board("t").edit(ids[5], title="card 5 renamed")
    expect(page.locator(".card .title", has_text="card 5 renamed")).to_be_visible()
    focused = "document.activeElement.closest('[data-card]')?.dataset.card"
    assert page.evaluate(focused) == ids[5]
    tl.close()


def test_the_hash_names_a_thread_as_the_server_does(server: Server, page: object) -> None:
    """``#%20t`` showed an empty board marked live (the events, for "t", were dropped); a
    refused thread id was said twice, stopped the thread list, and its message stayed."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    cli(server, "board", "add", "t", "First step")
    page.goto(f"{server.url}/#%20t%20")
    expect(page.locator(".card .title", has_text="First step")).to_be_visible()
    cli(server, "board", "add", "t", "Second step")
    expect(page.locator(".card .title", has_text="Second step")).to_be_visible()
    page.goto(f"{server.url}/#{'x' * 300}")
    expect(page.locator("#live")).to_have_attribute("data-state", "stopped")
    expect(page.locator("#toast")).to_contain_text("The live view stopped")
    assert page.locator("#toast").inner_text().count("The live view stopped") == 1
    cli(server, "board", "add", "u", "Another thread")  # the list still follows new threads
    expect(page.locator(".threads .name", has_text="u")).to_be_visible(timeout=10_000)
    page.goto(f"{server.url}/#t")
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    expect(page.locator("#toast")).to_be_hidden()


def test_a_thread_without_a_board_shows_an_empty_one_not_loading(
    server: Server, page: object
) -> None:
    """A thread with only a goal, or none at all yet, said "Loading…" for ever: its stream
    opening has no board snapshot."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    tl.goal("g").set("Ship", token_budget=1000)
    page.goto(f"{server.url}/#g")
    expect(page.locator(".goal .status")).to_have_attribute("data-status", "active")
    expect(page.locator("#board")).to_contain_text("No cards on this board yet.")
    page.goto(f"{server.url}/#later")
    expect(page.locator("#thread-title")).to_have_text("later")
    expect(page.locator("#board")).to_contain_text("No cards on this board yet.")
    tl.board("later").add("now there is one")
    expect(page.locator(".card .title", has_text="now there is one")).to_be_visible()
    tl.close()


def test_a_status_filter_that_hides_every_task_does_not_call_the_queue_empty(
    server: Server, page: object
) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    tl.queue.add("Index the docs")
    claimed = tl.queue.claim("w", lease=300)
    assert claimed is not None
    tl.board("t").add("card")
    page.goto(f"{server.url}/#t")
    expect(page.locator("table.tasks tbody tr")).to_have_count(1)
    page.get_by_label("Status filter").select_option("ready")
    expect(page.locator("#queue")).to_contain_text("No task matches the filters.")
    tl.close()


def test_a_control_an_action_removes_leaves_focus_on_its_card_or_section(
    server: Server, page: object
) -> None:
    """After Enter on Pause (or Approve), focus fell to <body>: a keyboard user started over
    from the top. It stays in the goal (or on the card), on no other button a second Enter
    would press."""
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = _goal_shown(server, page, budget=1000, used=0)
    goal = page.locator(".goal")
    goal.get_by_role("button", name="Pause").focus()
    page.keyboard.press("Enter")
    expect(goal.locator(".status")).to_have_attribute("data-status", "paused")
    assert page.evaluate("document.activeElement.id") == "goal-panel"
    page.keyboard.press("Enter")
    assert tl.goal("t").get()["goal"]["status"] == "paused"
    card = _awaiting(tl, "t", "deploy", ["step"])
    page.locator(f'[data-card="{card}"]').get_by_role("button", name="Approve").focus()
    page.keyboard.press("Enter")
    expect(page.locator(f'[data-card="{card}"] .status')).to_have_attribute("data-status", "ready")
    assert page.evaluate("document.activeElement.dataset.card") == card
    tl.close()


def test_counts_are_written_in_english_whatever_the_browser_locale(server: Server) -> None:
    """Token counts were written in the browser's locale: a German one showed "1.000.000
    tokens", which reads as a decimal in the panel's English text."""
    from playwright.sync_api import expect, sync_playwright

    tl = taskloom.connect(server.db_url)
    goal_id = tl.goal("t").set("Ship", token_budget=1_000_000)["goal"]["goal_id"]
    tl.goal("t").account_usage(goal_id, tokens=12_345)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        page = browser.new_page(locale="de-DE")
        page.set_default_timeout(20_000)
        page.goto(f"{server.url}/#t")
        expect(page.locator(".goal .usage")).to_have_text("12,345 / 1,000,000 tokens")
        page.get_by_label("New token budget").fill("0")
        page.get_by_role("button", name="Set budget").click()
        expect(page.locator(".toast").last).to_contain_text("from 1 to 9,007,199,254,740,991")
        browser.close()
    tl.close()
