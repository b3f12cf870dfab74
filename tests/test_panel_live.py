"""The panel's live view across tabs and restarts, in a real browser (chromium via Playwright):
hidden tabs give up their connection, and a server restarted on another history (a restored
backup, another database file) replaces what the panel shows."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import taskloom
from tests import test_panel_browser as panel
from tests.conftest import Server
from tests.test_panel_browser import cli, open_first_step

server, page = panel.server, panel.page  # the browser tests' fixtures: a server, a page

pytestmark = pytest.mark.browser

VISIBILITY = """(hidden) => {
  Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
  Object.defineProperty(document, "visibilityState", {
    configurable: true, get: () => (hidden ? "hidden" : "visible") });
  document.dispatchEvent(new Event("visibilitychange"));
}"""
"""Makes the page hidden (``True``) or visible, as switching tabs does."""


def _requests(page: Any, path: str) -> list[dict[str, list[str]]]:
    """The query of every request the page makes to ``path``, from now on."""
    seen: list[dict[str, list[str]]] = []

    def record(request: Any) -> None:
        url = urlsplit(request.url)
        if url.path == path:
            seen.append(parse_qs(url.query))

    page.on("request", record)
    return seen


def test_hidden_tabs_leave_the_browser_connections_for_the_visible_one(
    server: Server, page: Any
) -> None:
    """Each tab held a stream, and chromium opens six connections to a server: with six tabs
    open, a seventh stayed "Loading…" and an Approve in any of them never went out."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    card = tl.board("t").add("Deploy", status="awaiting_approval", approval_mode="required")
    context = page.context.browser.new_context()  # one browser's tabs share its connections
    context.set_default_timeout(20_000)
    hidden = []
    for _ in range(6):
        tab = context.new_page()
        tab.goto(f"{server.url}/#t")
        expect(tab.locator("#live")).to_have_attribute("data-state", "live")
        tab.evaluate(VISIBILITY, True)
        hidden.append(tab)
    visible = context.new_page()
    visible.goto(f"{server.url}/#t")
    visible.get_by_role("button", name="Approve the plan: Deploy").click()
    status = visible.locator(f'[data-card="{card["card"]["id"]}"] .status')
    expect(status).to_have_attribute("data-status", "ready")
    assert tl.board("t").list()["cards"][0]["status"] == "ready"
    expect(hidden[0].locator("#live")).to_have_attribute("data-state", "paused")
    hidden[0].evaluate(VISIBILITY, False)  # shown again: live, and up to date
    expect(hidden[0].locator(".card .status")).to_have_attribute("data-status", "ready")
    expect(hidden[0].locator("#live")).to_have_attribute("data-state", "live")
    context.close()
    tl.close()


def test_a_hidden_tab_polls_nothing_and_resumes_where_it_was(server: Server, page: Any) -> None:
    """A hidden tab kept its stream and asked for the thread list every 3 s. Shown again, it
    resumes after the last event it had (no opening) and shows what changed meanwhile."""
    from playwright.sync_api import expect

    page.clock.install()
    open_first_step(server, page, "/#t")
    cli(server, "board", "add", "t", "Seen live")  # an event with an id: the tab's cursor
    expect(page.locator(".card .title", has_text="Seen live")).to_be_visible()
    listed = _requests(page, "/api/threads")
    streams = _requests(page, "/api/events")
    page.evaluate(VISIBILITY, True)
    expect(page.locator("#live")).to_have_attribute("data-state", "paused")
    page.clock.run_for(10_000)  # three polls' worth
    cli(server, "board", "add", "t", "Written while hidden")
    assert listed == [] and streams == []
    page.evaluate(VISIBILITY, False)
    expect(page.locator(".card .title", has_text="Written while hidden")).to_be_visible()
    expect(page.locator(".card")).to_have_count(3)
    (resumed,) = streams
    with taskloom.connect(server.db_url) as tl, tl.store.read() as tx:
        assert int(resumed["after"][0].split("-")[0]) == tx.event_head() - 1


def _backup(source: Path, target: Path) -> None:
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def test_a_restored_database_whose_ids_went_past_the_panel_s_replaces_the_view(
    tmp_path: Path, server: Server, page: Any
) -> None:
    """Restored from a backup at event 5 while the panel had seen event 10, then 9 other
    events: the reconnect resumed after 10 (the outbox had an event 10, another one), and
    the panel showed the cards the restore removed, marked live."""
    from playwright.sync_api import expect

    db, backup = tmp_path / "panel.db", tmp_path / "backup.db"
    tl = taskloom.connect(server.db_url)
    for i in range(5):
        tl.board("t").add(f"Kept {i}")
    _backup(db, backup)
    page.goto(f"{server.url}/#t")
    expect(page.locator(".card")).to_have_count(5)
    for i in range(5):
        tl.board("t").add(f"Lost {i}")
    expect(page.locator(".card")).to_have_count(10)
    tl.close()
    server.kill()
    expect(page.locator("#live")).to_have_attribute("data-state", "reconnecting")
    _backup(backup, db)
    with taskloom.connect(server.db_url) as restored:
        for i in range(9):
            restored.board("u").add(f"Other {i}")
        with restored.store.read() as tx:
            assert tx.event_head() == 14
    server.start()
    expect(page.locator(".card .title", has_text="Lost")).to_have_count(0)
    expect(page.locator(".card")).to_have_count(5)
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    expect(page.locator(".threads .name")).to_have_count(2)
    cli(server, "board", "add", "t", "Written after the restore")
    expect(page.locator(".card")).to_have_count(6)


def test_a_server_restarted_on_another_database_drops_what_that_one_lacks(
    tmp_path: Path, server: Server, page: Any
) -> None:
    """Another database whose outbox was past the panel's cursor: the panel resumed into
    its events and kept the first database's board and goal, which it does not have."""
    from playwright.sync_api import expect

    with taskloom.connect(server.db_url) as tl:
        tl.board("t").add("Only in the first database")
        tl.goal("t").set("The first database's goal")
    page.goto(f"{server.url}/#t")
    expect(page.locator(".goal .objective")).to_have_text("The first database's goal")
    cli(server, "board", "add", "t", "Seen live")
    expect(page.locator(".card")).to_have_count(2)
    other = tmp_path / "other.db"
    with taskloom.connect(f"sqlite:///{other}") as tl:
        for i in range(6):
            tl.board("u").add(f"Other {i}")
    server.kill()
    expect(page.locator("#live")).to_have_attribute("data-state", "reconnecting")
    server.db_url = f"sqlite:///{other}"
    server.start()
    expect(page.locator("#board")).to_contain_text("No cards on this board yet.")
    expect(page.locator(".goal")).to_have_count(0)
    expect(page.locator(".threads .name")).to_have_text(["u"])
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
