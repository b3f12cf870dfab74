"""A person steering from the panel, in a real browser (chromium via Playwright): actions
from a view that is behind the database, and a panel the server refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import taskloom
from tests import test_panel_browser as panel
from tests.conftest import Server

server, page = panel.server, panel.page  # the browser tests' fixtures: a server, a page

pytestmark = pytest.mark.browser


def _frozen(page: Any) -> None:
    """The page's event stream sends nothing and reconnects only after an hour: the view
    stays as first read (a stream a proxy cut, a tab whose updates have not arrived yet)."""
    page.route(
        "**/api/events**",
        lambda route: route.fulfill(
            status=200, headers={"Content-Type": "text/event-stream"}, body="retry: 3600000\n\n"
        ),
    )


def test_done_from_a_view_behind_the_database_is_refused_not_applied(
    server: Server, page: Any
) -> None:
    """Done sent no `seen`: a window still showing a card as to do moved it to done after
    another window had rejected its plan, undoing that decision in silence."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    card = tl.board("t").add("Drop the old tables")["card"]["id"]
    _frozen(page)
    page.goto(f"{server.url}/#t")
    done = page.get_by_role("button", name="Mark done: Drop the old tables")
    expect(done).to_be_visible()
    # Meanwhile the agent submits a plan for it and another window rejects that plan.
    tl.board("t").update_status(card, "awaiting_approval")
    tl.board("t").decide_plan(card, approve=False)
    done.click()
    toast = page.locator("#toast")
    expect(toast).to_contain_text("Status change not applied")
    expect(toast).to_contain_text("changed since it was shown (now rejected")
    assert tl.board("t").get().get(card).status.value == "rejected"
    # The refusal shows the card as it is now, though the stream is still behind.
    status = page.locator(f'[data-card="{card}"] .status')
    expect(status).to_have_attribute("data-status", "rejected")
    tl.close()


def test_a_refused_panel_says_why_in_place_of_the_board_and_queue(
    tmp_path: Path, page: Any
) -> None:
    """Without its token the panel said why only in a toast that went after 8 s, leaving
    "Loading…" for ever and "The queue is empty." over a queue it had never read."""
    from playwright.sync_api import expect

    srv = Server(f"sqlite:///{tmp_path / 'tok.db'}", "--token=s3cret")
    tl = taskloom.connect(srv.db_url)
    tl.board("t").add("First step")
    tl.queue.add("Rebuild the index")
    srv.start()
    try:
        for address, why in (("/", "needs its token"), ("/?token=wrong#t", "wrong token")):
            page.goto(f"{srv.url}{address}")
            expect(page.locator("#live")).to_have_attribute("data-state", "stopped")
            for section in ("#board", "#queue"):
                expect(page.locator(section)).to_contain_text("Not shown: ")
                expect(page.locator(section)).to_contain_text(why)
            expect(page.locator("#queue")).not_to_contain_text("empty")
            expect(page.locator("#board")).not_to_contain_text("Loading")
    finally:
        srv.kill()
        tl.close()


def click_done_while_away(page: Any) -> None:
    """Mark the first card done with the server away: the toast says so, and only that."""
    from playwright.sync_api import expect

    page.get_by_role("button", name="Mark done: First step").click()
    expect(page.locator("#toast")).to_have_text(
        "Status change not applied to “First step”: the server did not answer:"
        " try again once the panel is live"
    )


def test_an_action_while_the_server_is_away_says_so(server: Server, page: Any) -> None:
    """A click while the server was down said "Status change not applied: Failed to fetch",
    the browser's words, which name neither the server nor what to do."""
    from playwright.sync_api import expect

    panel.open_first_step(server, page, "/#t")
    server.kill()
    expect(page.locator("#live")).to_have_attribute("data-state", "reconnecting")
    click_done_while_away(page)
    server.start()
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    page.get_by_role("button", name="Mark done: First step").click()
    expect(page.locator('.card .status[data-status="done"]')).to_be_visible()


def test_a_queue_list_read_while_the_server_is_away_raises_no_error(
    server: Server, page: Any
) -> None:
    """A queue list read that found the server gone (a reconnect's read, a filter changed)
    put "the server did not answer" on screen, above the next action's own failure."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    try:
        tl.queue.add("Ready task")
    finally:
        tl.close()
    panel.open_first_step(server, page, "/#t")
    server.kill()
    expect(page.locator("#live")).to_have_attribute("data-state", "reconnecting")
    page.get_by_label("Status filter").select_option("ready")
    click_done_while_away(page)
    server.start()
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    expect(page.locator("#queue")).to_contain_text("Ready task")


def test_a_cancel_that_blocks_other_tasks_can_be_undone_from_the_panel(
    server: Server, page: Any
) -> None:
    """A canceled task that others depend on left them blocked, and the panel offered no way
    back, though the API requeues such a task: only the command line could."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    schema, _ = tl.queue.add("Migrate the schema")
    backfill, _ = tl.queue.add("Backfill the rows", depends_on=[schema.id])
    alone, _ = tl.queue.add("Rotate the logs")
    tl.queue.cancel(alone.id)
    page.goto(f"{server.url}/")
    page.get_by_role("button", name="Cancel the task: Migrate the schema").click()
    blocked = page.locator(f'[data-task="{backfill.id}"] .status')
    expect(blocked).to_have_attribute("data-status", "blocked")
    # Nothing waits on the other canceled task: it offers nothing.
    expect(page.locator(f'[data-task="{alone.id}"] button')).to_have_count(0)
    page.get_by_role("button", name="Requeue the task: Migrate the schema").click()
    expect(blocked).to_have_attribute("data-status", "ready")
    assert tl.queue.get(schema.id).status.value == "ready"
    tl.close()


def test_the_keyboard_skips_a_long_thread_list_to_the_board(server: Server, page: Any) -> None:
    """With many threads a keyboard user tabbed through every one of them before the first
    Approve button; the page's first stop now skips to the goal and board."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    for n in range(40):
        tl.board(f"thread-{n:02d}").add(f"Step {n}")
    tl.board("t").add("Deploy", status="awaiting_approval", approval_mode="required")
    page.goto(f"{server.url}/#t")
    approve = page.get_by_role("button", name="Approve the plan: Deploy")
    expect(approve).to_be_visible()
    page.keyboard.press("Tab")
    skip = page.get_by_role("button", name="Skip to the goal and board")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    for name in ("List", "Kanban"):  # the board's view buttons, then its cards
        page.keyboard.press("Tab")
        expect(page.get_by_role("button", name=name, exact=True)).to_be_focused()
    page.keyboard.press("Tab")
    expect(approve).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".card .status")).to_have_attribute("data-status", "ready")
    tl.close()
