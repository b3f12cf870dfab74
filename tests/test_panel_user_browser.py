"""The web panel as a demanding user meets it, in a real browser (chromium via Playwright):
a browser that refuses site data, and actions raced from two windows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import taskloom
from tests import test_panel_browser as panel
from tests.conftest import Server
from tests.test_panel_browser import CHROMIUM

server, page = panel.server, panel.page  # the browser tests' fixtures: a server, a page

pytestmark = pytest.mark.browser


def test_a_browser_blocking_site_data_still_shows_the_panel(
    server: Server,
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


def test_a_queue_action_raced_by_another_window_names_its_task_and_shows_it_as_it_is(
    server: Server,
    page: Any,
) -> None:
    """Two windows on one queue: the one whose view was behind clicked Cancel on a task the
    other had canceled, and Requeue on one the other had requeued. The refusals said "Cancel
    not applied: task '01a2…' is already canceled" and "Action not applied: …", naming no
    task a person could recognise, and the rows still offered the refused buttons."""
    from playwright.sync_api import expect

    from tests.test_panel_steering import _frozen

    tl = taskloom.connect(server.db_url)
    doomed, _ = tl.queue.add("Rotate the keys")
    broken, _ = tl.queue.add("Fetch the mirror", max_attempts=1, priority=1)
    held = tl.queue.claim("worker-1", lease=60)
    assert held is not None and held.id == broken.id
    tl.queue.fail(broken.id, held.lease_token or "", "mirror down")
    _frozen(page)
    page.goto(f"{server.url}/")
    cancel = page.get_by_role("button", name="Cancel the task: Rotate the keys")
    requeue = page.get_by_role("button", name="Requeue the task: Fetch the mirror")
    expect(cancel).to_be_visible()
    expect(requeue).to_be_visible()
    # The other window acts first.
    tl.queue.cancel(doomed.id, "not needed")
    tl.queue.requeue(broken.id)
    cancel.click()
    toast = page.locator("#toast")
    expect(toast).to_contain_text("Cancel not applied to “Rotate the keys”: ")
    row = page.locator(f'[data-task="{doomed.id}"]')
    expect(row.locator(".status")).to_have_attribute("data-status", "canceled")
    expect(cancel).to_have_count(0)
    requeue.click()
    expect(toast).to_contain_text("Requeue not applied to “Fetch the mirror”: ")
    row = page.locator(f'[data-task="{broken.id}"]')
    expect(row.locator(".status")).to_have_attribute("data-status", "ready")
    expect(requeue).to_have_count(0)
    assert tl.queue.get(doomed.id).status.value == "canceled"
    assert tl.queue.get(broken.id).status.value == "ready"
    tl.close()


def _frozen_after_opening(page: Any, server: Server, thread: str) -> None:
    """The page's event stream sends the opening it would send now, then nothing, and
    reconnects only after an hour: the view stays as first read."""
    import httpx

    lines: list[str] = []
    url = f"{server.url}/api/events?thread={thread}&tasks=1"
    with httpx.stream("GET", url, timeout=10) as response:
        for line in response.iter_lines():
            lines.append(line)
            if len(lines) > 1 and lines[-2] == "event: opened":
                break  # its data line: the opening is whole
    opening = "\n".join(lines) + "\n"
    page.route(
        "**/api/events**",
        lambda route: route.fulfill(
            status=200,
            headers={"Content-Type": "text/event-stream"},
            body="retry: 3600000\n\n" + opening + "\n",
        ),
    )


def test_a_goal_paused_from_another_window_is_shown_paused_after_a_refused_pause(
    server: Server,
    page: Any,
) -> None:
    """A window whose view was behind offered Pause on a goal another window had paused: the
    click was refused ("only an active or blocked goal can be paused") and the goal still
    read Active, with Pause and no Resume, until some later event came."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.goal("t").set("Ship the release", token_budget=1000)
    _frozen_after_opening(page, server, "t")
    page.goto(f"{server.url}/#t")
    goal = page.locator("#goal-panel")
    pause = goal.get_by_role("button", name="Pause", exact=True)
    expect(pause).to_be_visible()
    tl.goal("t").pause("from the other window")
    pause.click()
    expect(page.locator("#toast")).to_contain_text("Pause not applied: ")
    expect(goal.locator(".status").first).to_have_attribute("data-status", "paused")
    expect(goal.get_by_role("button", name="Resume", exact=True)).to_be_visible()
    expect(pause).to_have_count(0)
    tl.close()


def test_picking_a_thread_by_keyboard_on_a_phone_moves_focus_to_its_board(
    server: Server, page: Any
) -> None:
    """On a phone, a thread picked with Enter folded the list away with the focused link in
    it: the focus fell to <body>, where a screen reader announces nothing."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.board("first").add("Here")
    tl.board("other").add("Elsewhere")
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{server.url}/#first")
    toggle = page.locator("#threads-toggle")
    toggle.focus()
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    page.locator("#threads a", has_text="other").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".card .title", has_text="Elsewhere")).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#main")).to_be_focused()
    page.keyboard.press("Tab")  # on into the board, not back at the top of the page
    expect(page.get_by_role("button", name="List")).to_be_focused()
    tl.close()


def test_a_long_goal_objective_is_cut_and_keeps_the_goal_controls_on_screen(
    server: Server, page: Any
) -> None:
    """An objective may hold 4,000 characters: on a phone it filled five screens, and the
    goal's Pause and budget field came only after all of it, out of reach for a person who
    came to pause the goal. It is now cut like a long title, and opens on demand."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    objective = "Migrate every service to the new cluster " * 95  # about 3,900 characters
    tl.goal("t").set(objective, token_budget=1000)
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{server.url}/#t")
    pause = page.locator("#goal-panel").get_by_role("button", name="Pause", exact=True)
    expect(pause).to_be_in_viewport()
    shown = page.locator("#goal-panel .objective")
    expect(shown).to_have_attribute("title", objective.strip())
    expect(shown).to_have_attribute("aria-expanded", "false")
    cut_height = shown.bounding_box()["height"]
    shown.focus()
    page.keyboard.press("Enter")
    expect(shown).to_have_attribute("aria-expanded", "true")
    page.locator("#goal-panel input").focus()  # away from it: it stays open, whole
    tl.goal("t").set_budget(token_budget=2000)  # a live update redraws the goal
    expect(page.locator("#goal-panel")).to_contain_text("2,000 tokens")
    expect(shown).to_have_attribute("aria-expanded", "true")
    assert shown.bounding_box()["height"] > 10 * cut_height
    tl.close()


def test_a_budget_typed_in_hex_binary_or_octal_is_refused_not_read_as_another_number(
    server: Server, page: Any
) -> None:
    """The budget field read what it was given with JavaScript's Number(): "0b11" set a
    budget of 3 tokens, stopping the goal at once, and "0x10" one of 16, with no message."""
    from playwright.sync_api import expect

    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.post_data or "") if r.method == "POST" else None)
    tl = taskloom.connect(server.db_url)
    tl.goal("t").set("Ship the release", token_budget=1000)
    page.goto(f"{server.url}/#t")
    usage = page.locator(".goal .usage")
    expect(usage).to_have_text("0 / 1,000 tokens")
    field = page.get_by_label("New token budget")
    for bad in ("0b11", "0x10", "0o7"):
        field.fill(bad)
        page.get_by_role("button", name="Set budget").click()
        expect(page.locator("#toast")).to_contain_text("Budget must be a whole number")
    assert posts == []
    field.fill("2.5e3")  # decimal notation, a whole number: taken
    page.get_by_role("button", name="Set budget").click()
    expect(usage).to_have_text("0 / 2,500 tokens")
    assert posts == ['{"token_budget":2500}']
    assert tl.goal("t").get()["goal"]["token_budget"] == 2500
    tl.close()


def test_the_same_failure_twice_is_one_toast_whose_time_starts_over(
    server: Server,
    page: Any,
) -> None:
    """A Cancel refused twice for the same reason showed the same line twice in the toast,
    and the toast went away eight seconds after the first refusal, not the last."""
    import time

    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.queue.add("Rotate the keys")
    tl.close()
    refused = {"message": "the queue is busy"}
    page.route(
        "**/api/tasks/*/cancel",
        lambda route: route.fulfill(status=409, json=refused),
    )
    page.goto(f"{server.url}/")
    cancel = page.get_by_role("button", name="Cancel the task: Rotate the keys")
    toast = page.locator("#toast")
    line = "Cancel not applied to “Rotate the keys”: the queue is busy"
    cancel.click()
    expect(toast).to_have_text(line)
    first = time.monotonic()
    expect(cancel).not_to_have_attribute("aria-disabled", "true")  # the answer came
    time.sleep(5)
    cancel.click()
    expect(cancel).not_to_have_attribute("aria-disabled", "true")
    assert toast.inner_text() == line  # one line, not two
    time.sleep(max(0.0, first + 9.5 - time.monotonic()))  # past the first one's 8 s
    expect(toast).to_be_visible()
    assert toast.inner_text() == line
    expect(toast).to_be_hidden(timeout=10_000)


def test_queue_counts_are_written_with_thousands_separators(server: Server, page: Any) -> None:
    """A queue of a million tasks read "2500 can run now · 12345 ready · 1000000 completed"
    and "Showing the 3 most urgent of 1012345 tasks.": counts are written 12,345."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    for title in ("One", "Two", "Three"):
        tl.queue.add(title)
    tl.close()
    stats = {"ready": 12_345, "in_progress": 0, "completed": 1_000_000, "total": 1_012_345}
    page.route("**/api/tasks/stats", lambda route: route.fulfill(json=stats))
    ready = {"count": 2_500, "ready": [], "waiting": []}
    page.route("**/api/tasks/ready", lambda route: route.fulfill(json=ready))
    page.goto(f"{server.url}/")
    expect(page.locator("#queue-stats")).to_have_text(
        "2,500 can run now · 12,345 ready · 1,000,000 completed"
    )
    expect(page.locator("#queue .more")).to_have_text(
        "Showing the 3 most urgent of 1,012,345 tasks."
    )
    page.locator("#queue-text").fill("o")  # a search over part of the queue says so too
    expect(page.locator("#queue .more")).to_have_text(
        "Only the 3 most urgent of 1,012,345 tasks are searched."
    )
