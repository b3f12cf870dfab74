"""The panel split into ES modules, in a real browser (chromium via Playwright): it loads
without a script error, and the token from its address reaches every request it makes."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import taskloom
from tests import test_panel_browser as panel
from tests.conftest import Server

page = panel.page  # the browser tests' page fixture

pytestmark = pytest.mark.browser

TOKEN = "Ab+cD/eF=="  # typed as is: the panel reads "+" as itself, not as a space


@pytest.fixture
def server(tmp_path: Path) -> Any:
    panel._need_browser()
    srv = Server(f"sqlite:///{tmp_path / 'tok.db'}", f"--token={TOKEN}")
    srv.start()
    yield srv
    srv.kill()


def test_every_request_of_the_panel_carries_the_token_of_its_address(
    server: Server, page: Any
) -> None:
    """With the page's script in many modules, each request the panel makes (threads, board,
    tasks, stats, the stream, an action) still carries the token given in ``/?token=``, and a
    person's action goes through."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    card = tl.board("t").add("Deploy", status="awaiting_approval", approval_mode="required")
    tl.queue.add("Rotate the keys")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sent: list[tuple[str, str | None]] = []
    page.on("request", lambda r: sent.append((r.url, r.headers.get("authorization"))))
    page.goto(f"{server.url}/?token={TOKEN}#t")
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    expect(page.locator("[data-task] .title", has_text="Rotate the keys")).to_be_visible()
    page.get_by_role("button", name="Approve the plan: Deploy", exact=True).click()
    row = page.locator(f'[data-card="{card["card"]["id"]}"]')
    expect(row.locator(".status")).to_have_attribute("data-status", "ready")
    assert tl.board("t").list()["cards"][0]["status"] == "ready"
    tl.close()
    api = [(url, auth) for url, auth in sent if urlsplit(url).path.startswith("/api/")]
    paths = {urlsplit(url).path for url, _ in api}
    assert {"/api/threads", "/api/tasks", "/api/tasks/stats", "/api/events"} <= paths
    assert any(path.endswith("/decision") for path in paths)
    for url, auth in api:
        query = parse_qs(urlsplit(url).query)
        assert auth == f"Bearer {TOKEN}" or query.get("token") == [TOKEN], url
    assert errors == []
