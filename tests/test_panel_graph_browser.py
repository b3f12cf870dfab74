"""The work graph in the web panel, in a real browser: a task's group, what it runs after and
why it cannot run now, blocked tasks, lapsed leases, and the count of what can run now."""

from __future__ import annotations

import time

import pytest

import taskloom
from tests.conftest import Server
from tests.test_panel_browser import page, server  # noqa: F401  (the fixtures)

pytestmark = pytest.mark.browser


def test_the_queue_shows_the_graph_and_lapsed_leases(server: Server, page: object) -> None:  # noqa: F811
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    tl = taskloom.connect(server.db_url)
    first, _ = tl.queue.add("Migrate the schema", group_key="repo", priority=1)
    after, _ = tl.queue.add("Backfill <rows>", group_key="repo", depends_on=[first.id])
    broken, _ = tl.queue.add("Fetch the mirror", max_attempts=1, priority=0)
    blocked, _ = tl.queue.add("Index the mirror", depends_on=[broken.id])
    held = tl.queue.claim("worker-1", lease=60)
    assert held is not None and held.id == broken.id
    tl.queue.fail(broken.id, held.lease_token or "", "mirror down")
    lapsed = tl.queue.claim("worker-2", lease=1, bind_process=False)
    assert lapsed is not None and lapsed.id == first.id
    time.sleep(1.2)
    page.goto(f"{server.url}/")

    row = page.locator(f'[data-task="{after.id}"]')
    expect(row.locator(".graph .group")).to_have_text("group repo")
    expect(row.locator(".graph .after")).to_have_text("after Migrate the schema")
    expect(row.locator(".graph .why").first).to_contain_text(f"waiting on task {first.id}")
    expect(row.locator(".title")).to_have_text("Backfill <rows>")  # text, not markup

    row = page.locator(f'[data-task="{blocked.id}"]')
    expect(row.locator(".status")).to_have_attribute("data-status", "blocked")
    expect(row.locator(".graph .why")).to_have_text(
        f"blocked: task {broken.id}, which it depends on, is dead"
    )
    expect(row.get_by_role("button", name="Cancel")).to_be_visible()

    row = page.locator(f'[data-task="{first.id}"]')
    expect(row.locator(".status")).to_have_attribute("data-status", "lease_expired")
    expect(row.locator(".status")).to_have_text("Lease expired")
    expect(page.locator("#queue-stats")).to_contain_text("1 can run now")
    expect(page.locator("#queue-stats")).to_contain_text("1 lease expired")

    rows = page.locator("table.tasks tbody tr")
    page.get_by_label("Status filter").select_option("blocked")
    expect(rows).to_have_count(1)
    page.get_by_label("Status filter").select_option("ready")
    expect(rows).to_have_count(2)  # the lapsed lease is listed with what is claimable
    page.get_by_label("Status filter").select_option("in_progress")
    expect(page.locator("table.tasks")).to_have_count(0)
    tl.close()
