"""A person steering from the panel, in a real browser (chromium via Playwright): actions
from a view that is behind the database, and a panel the server refuses."""

from __future__ import annotations

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
