"""The web panel as a demanding user meets it, in a real browser (chromium via Playwright):
a browser that refuses site data, and actions raced from two windows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import taskloom
from tests.conftest import Server
from tests.test_panel_browser import CHROMIUM, server  # noqa: F401  (the fixture)

pytestmark = pytest.mark.browser


def test_a_browser_blocking_site_data_still_shows_the_panel(
    server: Server,  # noqa: F811
    tmp_path: Path,
) -> None:
    """With chromium set to block cookies and site data, reading localStorage throws: the
    panel's script stopped on its first line and the page stayed blank, "connecting" for
    ever, and the theme button did nothing."""
    from playwright.sync_api import expect, sync_playwright

    tl = taskloom.connect(server.db_url)
    tl.board("t").add("Visible without storage")
    tl.close()
    profile = tmp_path / "profile"
    (profile / "Default").mkdir(parents=True)
    prefs = {"profile": {"default_content_setting_values": {"cookies": 2}}}  # block all
    (profile / "Default" / "Preferences").write_text(json.dumps(prefs))
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        pg = context.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        pg.goto(f"{server.url}/#t")
        probe = "() => { try { localStorage; return 'allowed'; } catch { return 'refused'; } }"
        assert pg.evaluate(probe) == "refused"  # the browser does block it
        expect(pg.locator(".card .title", has_text="Visible without storage")).to_be_visible()
        expect(pg.locator("#live")).to_have_attribute("data-state", "live")
        # The theme and the board's view still switch, for as long as the page is open.
        before = pg.locator("html").get_attribute("data-theme")
        assert before in ("light", "dark")
        pg.locator("#theme").click()
        expect(pg.locator("html")).not_to_have_attribute("data-theme", before)
        pg.get_by_role("button", name="Kanban").click()
        expect(pg.locator('[data-column="todo"] .kcard')).to_have_count(1)
        assert errors == []
        context.close()
