"""What the panel shows, in a real browser (chromium via Playwright): on a phone-sized screen,
with a token as typed, and all a person approves with a plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

import taskloom
from tests import test_panel_browser as panel
from tests.conftest import Server
from tests.test_panel_browser import XSS_NOTES, XSS_TITLE

server, page = panel.server, panel.page  # the browser tests' fixtures: a server, a page

pytestmark = pytest.mark.browser

LONG_THREAD = "github.com/acme-corp/payments-service/pull/12345"


def test_a_phone_sized_window_does_not_scroll_sideways(server: Server, page: Any) -> None:
    """At 390 px the queue's filters (in one row) and a long thread id (in a one-column grid
    as wide as its longest word) made the page wider than the window."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.board(LONG_THREAD).add("Review " + LONG_THREAD, status="awaiting_approval", plan=["merge"])
    tl.goal(LONG_THREAD).set("Land " + LONG_THREAD, token_budget=1000)
    tl.queue.add("Rebuild " + LONG_THREAD, target_agent="agent-" + "x" * 40)
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{server.url}/#{quote(LONG_THREAD, safe='')}")
    expect(page.get_by_role("button", name="Approve")).to_be_visible()
    expect(page.locator("table.tasks tbody tr")).to_have_count(1)
    for view in ("List", "Kanban"):
        page.get_by_role("button", name=view).click()
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], (view, width)
    tl.close()


def test_a_token_with_plus_signs_opens_the_panel_as_typed(tmp_path: Path, page: Any) -> None:
    """``?token=Ab+cD/eF==`` (a base64 token, as the docs say to open it) was read with its
    "+" as a space and refused; a wrong token was reported as a missing one."""
    from playwright.sync_api import expect

    token = "Ab+cD/eF=="
    srv = Server(f"sqlite:///{tmp_path / 'tok.db'}", f"--token={token}")
    srv.start()
    try:
        with taskloom.connect(srv.db_url) as tl:
            tl.board("t").add("Behind the token")
        page.goto(f"{srv.url}/?token={token}#t")
        expect(page.locator(".card .title")).to_have_text("Behind the token")
        expect(page.locator("#live")).to_have_attribute("data-state", "live")
        page.goto(f"{srv.url}/?token={quote(token, safe='')}#t")  # escaped, as printed
        expect(page.locator(".card .title")).to_have_text("Behind the token")
        page.goto(f"{srv.url}/#t")
        expect(page.locator("#toast")).to_contain_text("needs its token")
        page.goto(f"{srv.url}/?token=Ab+cD#t")
        expect(page.locator("#toast")).to_contain_text("wrong token")
    finally:
        srv.kill()


def test_a_card_shows_the_tools_its_approval_grants_and_keeps_line_breaks(
    server: Server, page: Any
) -> None:
    """The card omitted allowed_tools (what approving grants), acceptance criteria and
    evidence, and notes and objectives lost their line breaks."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    card = tl.board("t").add(
        "Deploy",
        status="awaiting_approval",
        approval_mode="required",
        plan=["build", "push"],
        notes="Checked:\n- tests pass\n- lint clean",
        allowed_tools=["shell", "deploy_prod", XSS_TITLE],
        acceptance_criteria=["site answers 200", XSS_NOTES],
        evidence=["ci run 42"],
    )["card"]["id"]
    tl.goal("t").set("Ship the release\nthen write the notes", token_budget=100)
    page.goto(f"{server.url}/#t")
    for view in ("List", "Kanban"):
        page.get_by_role("button", name=view).click()
        shown = page.locator(f'[data-card="{card}"]')
        expect(shown.locator(".tools code")).to_have_text(["shell", "deploy_prod", XSS_TITLE])
        criteria = shown.locator(".terms", has_text="Acceptance criteria")
        expect(criteria.locator("li")).to_have_text(["site answers 200", XSS_NOTES])
        expect(shown.locator(".terms", has_text="Evidence").locator("li")).to_have_text(
            ["ci run 42"]
        )
        notes = shown.locator(".sub", has_text="Checked:")
        assert notes.inner_text() == "Checked:\n- tests pass\n- lint clean", view
    objective = page.locator(".goal .objective").inner_text()
    assert objective == "Ship the release\nthen write the notes"
    assert page.evaluate("window.__xss") is None and page.locator("main img").count() == 0
    tl.close()
