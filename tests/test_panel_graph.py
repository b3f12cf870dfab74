"""The board's work graph in the web panel, in a real browser: a card's "after" chips, its
waiting state (apart from a blocker note), the ready count, and board changes applied live in
version order, with the board read again when one is missed."""

from __future__ import annotations

from typing import Any

import pytest

import taskloom
from tests.conftest import Server
from tests.test_panel_browser import cli, page, server

__all__ = ["page", "server"]

pytestmark = pytest.mark.browser

DROP_ONE_CHANGE = """
// Loses the stream's first board change after window.__dropNext is set, as a stream that
// resumed past it would: the panel must notice the gap and read the board again. The page's
// element says when one was lost (data-dropped), where a locator can wait for it: the panel's
// CSP forbids the eval that a wait_for_function expression needs.
const listen = EventSource.prototype.addEventListener;
EventSource.prototype.addEventListener = function (type, handler, ...rest) {
  if (type !== "todo_change") return listen.call(this, type, handler, ...rest);
  return listen.call(this, type, (message) => {
    if (window.__dropNext) {
      window.__dropNext = false;
      document.documentElement.dataset.dropped = "yes";
      return;
    }
    handler(message);
  }, ...rest);
};
"""


def test_after_chips_a_waiting_state_and_the_ready_count(server: Server, page: Any) -> None:
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    board = tl.board("t")
    code = board.add("Write the code")["card"]["id"]
    test = board.add("Test it", blocked_by=[code])["card"]["id"]
    stuck = board.add("Fix CI", status="blocked", blocker="runner down")["card"]["id"]
    page.goto(f"{server.url}/#t")
    waiting = page.locator(f'[data-card="{test}"]')
    expect(waiting).to_have_class("card todo waiting")
    expect(waiting.locator(".waiting-note")).to_have_text("Waiting on 1")
    chip = waiting.locator(f'.after .chip[data-after="{code}"]')
    expect(chip).to_have_text("Write the code")
    expect(chip).to_have_class("chip unmet")
    # A blocked card says why, and is not waiting on any card.
    blocked = page.locator(f'[data-card="{stuck}"]')
    expect(blocked).to_contain_text("Blocked: runner down")
    expect(blocked).not_to_have_class("card blocked waiting")
    assert blocked.locator(".waiting-note").count() == 0
    expect(page.locator("#board-summary")).to_have_text("0/3 done · 1 ready to start · v3")
    # Live: finishing what it comes after ends the wait, in either view.
    cli(server, "board", "status", "t", code, "done")
    expect(chip).to_have_class("chip met")
    expect(waiting).to_have_class("card todo")
    expect(page.locator("#board-summary")).to_have_text("1/3 done · 1 ready to start · v4")
    page.get_by_role("button", name="Kanban").click()
    kcard = page.locator(f'.kcard[data-card="{test}"]')
    expect(kcard.locator(".after .chip")).to_have_class("chip met")
    expect(kcard).to_have_class("kcard")
    tl.close()


def test_changes_apply_in_order_and_a_missed_one_reads_the_board_again(
    server: Server, page: Any
) -> None:
    from playwright.sync_api import expect

    page.add_init_script(DROP_ONE_CHANGE)
    tl = taskloom.connect(server.db_url)
    board = tl.board("t")
    ids = [board.add(f"Card {i}")["card"]["id"] for i in range(5)]
    page.goto(f"{server.url}/#t")
    expect(page.locator(".card")).to_have_count(5)
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    # Removed, added and changed cards arrive as changes, each applied to the board before it.
    board.remove(ids[1])
    board.add("Card 5", blocked_by=[ids[0]])
    board.update_status(ids[2], "done")
    titles = page.locator(".card .title")
    expect(titles).to_have_text(["Card 0", "Card 2", "Card 3", "Card 4", "Card 5"])
    expect(page.locator(f'[data-card="{ids[2]}"] .status')).to_have_attribute("data-status", "done")
    expect(page.locator("#board-summary")).to_have_text("1/5 done · 3 ready to start · v8")
    # One change lost on the way: the next one does not follow the board shown, so the panel
    # reads the board whole and shows every change, the lost one included.
    page.evaluate("window.__dropNext = true")
    board.update_status(ids[3], "done")
    expect(page.locator("html")).to_have_attribute("data-dropped", "yes")
    expect(page.locator(f'[data-card="{ids[3]}"] .status')).to_have_attribute("data-status", "todo")
    board.remove(ids[4])
    expect(titles).to_have_text(["Card 0", "Card 2", "Card 3", "Card 5"])
    expect(page.locator(f'[data-card="{ids[3]}"] .status')).to_have_attribute("data-status", "done")
    expect(page.locator("#board-summary")).to_have_text("2/4 done · 1 ready to start · v10")
    tl.close()
