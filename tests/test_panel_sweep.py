"""The web panel swept as a person steering agents uses it, in a real browser (chromium via
Playwright): history and deep links, messages about refused actions, narrow windows."""

from __future__ import annotations

from typing import Any

import pytest

import taskloom
from tests import test_panel_browser as panel
from tests.conftest import Server

server, page = panel.server, panel.page  # the browser tests' fixtures: a server, a page

pytestmark = pytest.mark.browser


def test_back_after_the_panel_picks_a_thread_goes_to_the_thread_shown_before(
    server: Server, page: Any
) -> None:
    """A page opened without a thread in its address picks the first one and named it in a new
    history entry: Back then returned to the same thread, so the first Back did nothing."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.board("beta").add("Beta card")
    tl.board("alpha").add("Alpha card")  # the most recent: listed first, picked
    tl.close()
    page.goto(f"{server.url}/")
    expect(page.locator(".card .title", has_text="Alpha card")).to_be_visible()
    assert page.url.endswith("/#alpha")
    assert page.evaluate("history.length") == 2  # the blank page, then the panel
    page.locator("#threads a", has_text="beta").click()
    expect(page.locator(".card .title", has_text="Beta card")).to_be_visible()
    page.go_back()
    expect(page.locator(".card .title", has_text="Alpha card")).to_be_visible()
    expect(page.locator("#thread-title")).to_have_text("alpha")
    page.go_forward()
    expect(page.locator(".card .title", has_text="Beta card")).to_be_visible()


def test_an_action_that_goes_through_on_a_retry_takes_its_failure_off_the_screen(
    server: Server, page: Any
) -> None:
    """An Approve clicked while the server was down said "Decision not applied to “Plan A”";
    clicked again once it was back, the plan was approved, and the message that it was not
    stayed on screen beside the approved card. Other failures stay."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.goal("t").set("Ship it", token_budget=1000)
    tl.board("t").add("Plan A", status="awaiting_approval", approval_mode="required")
    page.goto(f"{server.url}/#t")
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    approve = page.get_by_role("button", name="Approve the plan: Plan A")
    server.kill()
    approve.click()
    toast = page.locator("#toast")
    expect(toast).to_contain_text("Decision not applied to “Plan A”: the server did not answer")
    server.start()
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    page.get_by_label("New token budget").fill("0")  # a second failure, of another action
    page.get_by_role("button", name="Set budget").click()
    budget = "Budget must be a whole number from 1 to 9,007,199,254,740,991"
    expect(toast).to_contain_text(budget)
    approve.click()
    expect(page.locator(".card .status")).to_have_attribute("data-status", "ready")
    expect(toast).to_have_text(budget)
    assert tl.board("t").list()["cards"][0]["status"] == "ready"
    tl.close()


def test_news_of_an_action_does_not_hide_a_failure_still_on_screen(
    server: Server, page: Any
) -> None:
    """A Cancel the server refused said so, and a Pause clicked next, waiting for the
    database, put "Pause: waiting for the database…" in place of the refusal, which was then
    gone for good: the person never learned the task had not been canceled."""
    import sqlite3

    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.goal("t").set("Ship it", token_budget=1000)
    tl.board("t").add("First step")
    tl.queue.add("Rotate the keys")
    page.route(
        "**/api/tasks/*/cancel",
        lambda route: route.fulfill(status=409, json={"message": "the queue is busy"}),
    )
    page.goto(f"{server.url}/#t")
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    page.get_by_role("button", name="Cancel the task: Rotate the keys").click()
    toast = page.locator("#toast")
    refusal = "Cancel not applied to “Rotate the keys”: the queue is busy"
    expect(toast).to_have_text(refusal)
    holder = sqlite3.connect(server.db_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        page.get_by_role("button", name="Pause").click()
        expect(toast).to_contain_text("Pause: waiting for the database…")
        expect(toast).to_contain_text(refusal)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    expect(toast).to_contain_text("Pause: done")
    expect(toast).to_contain_text(refusal)
    assert toast.inner_text().split("\n") == [refusal, "Pause: done"]
    assert tl.goal("t").get()["goal"]["status"] == "paused"
    tl.close()


def test_a_card_gone_when_its_button_is_clicked_leaves_the_board(server: Server, page: Any) -> None:
    """A card the agent removed while the view was behind still offered Done and Approve:
    each click said "not found" and the card stayed on the board with its buttons, as if it
    were there to act on (only a card changed since, 409, made the board be read again)."""
    from playwright.sync_api import expect

    from tests.test_panel_user_browser import _frozen_after_opening

    tl = taskloom.connect(server.db_url)
    gone = tl.board("t").add("Gone card")["card"]["id"]
    plan = tl.board("t").add("Old plan", status="awaiting_approval", approval_mode="required")
    tl.board("t").add("Kept card")
    _frozen_after_opening(page, server, "t")
    page.goto(f"{server.url}/#t")
    expect(page.locator(".card")).to_have_count(3)
    tl.board("t").remove(gone)
    tl.board("t").remove(plan["card"]["id"])
    page.get_by_role("button", name="Mark done: Gone card").click()
    expect(page.locator("#toast")).to_contain_text("Status change not applied to “Gone card”")
    expect(page.locator(".card .title")).to_have_text(["Kept card"])
    expect(page.get_by_role("button", name="Approve the plan: Old plan")).to_have_count(0)
    tl.close()
