"""How the panel fits the screen, in a real browser (chromium via Playwright): at a phone's width
(400 px) and a desktop's (1280 px), in the light and the dark theme; long titles, the theme
toggle, and the thread list's counts kept live by the board's events."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

import taskloom
from tests import test_panel_browser as panel
from tests.conftest import Server

server, page = panel.server, panel.page  # the browser tests' fixtures: a server, a page

pytestmark = pytest.mark.browser

PHONE, DESKTOP = 400, 1280
LONG_TITLE = " ".join(
    f"step {i} of the migration, checked against the staging copy" for i in range(12)
)
TASK_TITLE = LONG_TITLE[:200].rstrip()  # a task's title takes up to 200 bytes
AGENT = "agent-" + "x" * 30

LUMINANCE = """(selector) => {
  const [r, g, b] = getComputedStyle(document.querySelector(selector)).backgroundColor
    .match(/\\d+/g).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}"""
"""The relative brightness (0 black, 1 white) of an element's computed background."""

OVERFLOW = "[document.scrollingElement.scrollWidth, window.innerWidth]"


def _fill(server: Server) -> taskloom.Taskloom:
    """Thread ``t`` with a card in every column (Rejected too, so seven), one with a long title;
    a second thread; a claimed task with a long agent id and a ready one with a long title."""
    tl = taskloom.connect(server.db_url)
    board = tl.board("t")
    for status in ("todo", "ready", "in_progress", "blocked", "done"):
        board.add(f"A card {status}", status=status)
    board.add("A plan", status="awaiting_approval", approval_mode="required")
    rejected = board.add("A rejected plan", status="awaiting_approval", approval_mode="required")
    board.decide_plan(rejected["card"]["id"], approve=False)
    board.add(LONG_TITLE)
    tl.board("other").add("Elsewhere")
    tl.queue.add("Index the docs", kind="index")
    tl.queue.claim(AGENT, lease=600, kinds=["index"])
    tl.queue.add(TASK_TITLE, kind="migration")
    return tl


def _open(server: Server, page: Any, width: int, scheme: str) -> None:
    from playwright.sync_api import expect

    page.set_viewport_size({"width": width, "height": 800})
    page.emulate_media(color_scheme=scheme)
    page.goto(f"{server.url}/#t")
    expect(page.locator("#live")).to_have_attribute("data-state", "live")
    expect(page.locator("table.tasks tbody tr")).to_have_count(2)


def _open_board(server: Server, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{server.url}/#t")
    expect(page.locator("#live")).to_have_attribute("data-state", "live")


def _inside(page: Any, locator: Any) -> None:
    """``locator`` is shown, wholly within the window's width."""
    from playwright.sync_api import expect

    expect(locator).to_be_visible()
    box = locator.bounding_box()
    width = page.evaluate("window.innerWidth")
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (box, width)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_the_panel_fits_the_window_in_either_theme(
    server: Server, page: Any, width: int, scheme: str
) -> None:
    """At 400 px the queue scrolled sideways inside its panel, hiding Agent, Prio, Tries and
    Cancel; at 1280 px the kanban's Done column sat past the panel's right edge."""
    from playwright.sync_api import expect

    tl = _fill(server)
    _open(server, page, width, scheme)
    dark = scheme == "dark"
    for selector in ("html", ".panel"):
        brightness = page.evaluate(LUMINANCE, selector)
        assert (brightness < 0.2) if dark else (brightness > 0.9), (selector, brightness)
    assert page.locator("html").get_attribute("data-theme") == scheme

    scroll = page.evaluate(OVERFLOW)
    assert scroll[0] <= scroll[1], scroll
    queue = page.evaluate(
        "(el => [el.scrollWidth, el.clientWidth])(document.getElementById('queue'))"
    )
    assert queue[0] <= queue[1], queue
    row = page.locator("table.tasks tbody tr", has_text="Index the docs")
    for cell in (".c-agent", ".c-prio", ".c-tries"):
        _inside(page, row.locator(cell))
    _inside(page, row.get_by_role("button", name="Cancel"))
    expect(row.locator(".c-agent")).to_have_text(AGENT)
    expect(row.locator(".c-tries")).to_contain_text("1/3")
    # On a phone the rows are cards whose facts carry their own labels; the header row goes.
    expect(page.locator("table.tasks thead")).to_be_visible(visible=width == DESKTOP)

    page.get_by_role("button", name="Kanban").click()
    expect(page.locator(".kanban .col")).to_have_count(7)
    _inside(page, page.locator('[data-column="done"]'))
    kanban = page.evaluate(
        "(el => [el.scrollWidth, el.clientWidth])(document.querySelector('.kanban'))"
    )
    assert kanban[0] <= kanban[1], kanban
    scroll = page.evaluate(OVERFLOW)
    assert scroll[0] <= scroll[1], scroll
    tl.close()


def test_numbers_line_up_under_their_headers(server: Server, page: Any) -> None:
    """Prio and Tries were right-aligned under left-aligned headers, in proportional digits."""
    tl = _fill(server)
    _open(server, page, DESKTOP, "light")
    for column in ("Prio", "Tries"):
        header = page.locator("table.tasks th", has_text=column)
        index = int(header.evaluate("th => th.cellIndex"))
        cells = page.locator(f"table.tasks tbody td:nth-child({index + 1})")
        right = header.bounding_box()
        assert right is not None
        for i in range(cells.count()):
            box = cells.nth(i).bounding_box()
            assert (
                box is not None and abs(box["x"] + box["width"] - right["x"] - right["width"]) < 1
            )
            style = cells.nth(i).evaluate(
                "td => [getComputedStyle(td).textAlign, getComputedStyle(td).fontVariantNumeric]"
            )
            assert style == ["right", "tabular-nums"], (column, style)
        assert header.evaluate("th => getComputedStyle(th).textAlign") == "right"
    tl.close()


def test_the_thread_list_folds_on_a_phone(server: Server, page: Any) -> None:
    """On a phone the list of threads came first, above the board, and grew with every thread."""
    from playwright.sync_api import expect

    tl = _fill(server)
    _open(server, page, PHONE, "light")
    toggle = page.locator("#threads-toggle")
    links = page.locator("#threads a")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle).to_contain_text("2")
    expect(links.first).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(links).to_have_count(2)
    expect(links.first).to_be_visible()
    page.locator("#threads a", has_text="other").click()
    expect(page.locator(".card .title", has_text="Elsewhere")).to_be_visible()
    expect(links.first).to_be_hidden()  # picking a thread folds the list again
    expect(toggle).to_have_attribute("aria-expanded", "false")
    # On a desktop the list is always shown, and the button is not.
    page.set_viewport_size({"width": DESKTOP, "height": 800})
    expect(links.first).to_be_visible()
    expect(toggle).to_be_hidden()
    tl.close()


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_a_long_title_is_clamped_and_opens_on_demand(server: Server, page: Any, width: int) -> None:
    """A long title filled a card (or a queue row) with a wall of text; cut short, all of it
    stays in its title attribute, and a click, Enter or the keyboard focus opens it."""
    from playwright.sync_api import expect

    tl = _fill(server)
    _open(server, page, width, "light")
    for where, text in ((".card", LONG_TITLE), ("table.tasks tbody tr", TASK_TITLE)):
        title = page.locator(f"{where} .title", has_text="step 0 of the migration")
        expect(title).to_have_attribute("title", text)
        expect(title).to_have_attribute("tabindex", "0")  # on the keyboard's path
        expect(title).to_have_attribute("role", "button")  # said to open and close
        expect(title).to_have_attribute("aria-expanded", "false")
        lines = title.evaluate(
            "el => [el.clientHeight / parseFloat(getComputedStyle(el).lineHeight),"
            " el.scrollHeight > el.clientHeight]"
        )
        assert round(lines[0]) in (2, 3) and lines[1], (where, lines)
        clamped = title.evaluate("el => el.clientHeight")

        title.focus()  # focus alone shows it whole
        assert title.evaluate("el => el.clientHeight") > clamped
        title.blur()
        assert title.evaluate("el => el.clientHeight") == clamped

        title.focus()
        page.keyboard.press("Enter")  # Enter keeps it open once the focus moves on
        title.blur()
        expect(title).to_have_class("u title cut open")
        expect(title).to_have_attribute("aria-expanded", "true")
        assert title.evaluate("el => el.scrollHeight <= el.clientHeight")
        title.click()  # a click closes it again
        title.blur()
        expect(title).not_to_have_class("u title cut open")
        expect(title).to_have_attribute("aria-expanded", "false")
        assert title.evaluate("el => el.clientHeight") == clamped
    # A title the clamp does not cut is no stop on the keyboard's path.
    short = page.locator(".card .title", has_text="A card todo")
    expect(short).not_to_have_attribute("tabindex", "0")
    expect(short).not_to_have_attribute("role", "button")
    tl.close()


def test_the_theme_toggle_is_remembered_over_the_system_s_choice(server: Server, page: Any) -> None:
    from playwright.sync_api import expect

    tl = _fill(server)
    _open(server, page, DESKTOP, "light")
    toggle = page.get_by_role("button", name="Dark theme")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    assert page.evaluate(LUMINANCE, "html") > 0.9
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    assert page.evaluate(LUMINANCE, "html") < 0.2
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(toggle).to_have_attribute("aria-pressed", "true")
    assert page.evaluate(LUMINANCE, ".panel") < 0.2
    # The person's choice holds whichever way the system turns...
    page.emulate_media(color_scheme="dark")
    page.get_by_role("button", name="Dark theme").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    assert page.evaluate(LUMINANCE, "html") > 0.9
    # ...and without one, the system's applies, and follows it.
    page.evaluate("localStorage.removeItem('taskloom.theme')")
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.emulate_media(color_scheme="light")
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    tl.close()


def test_the_thread_list_counts_follow_the_board_events(server: Server, page: Any) -> None:
    """The counts beside a thread came only from the list, polled every 3 s, so they lagged
    the board shown next to them. Here the poll answers what it answered first, for ever:
    only the board's events can move the counts, and an old list cannot move them back."""
    from playwright.sync_api import Route, expect

    tl = taskloom.connect(server.db_url)
    card = tl.board("t").add("First")["card"]["id"]
    first: list[bytes] = []

    def stale(route: Route) -> None:
        if not first:
            first.append(route.fetch().body())
        route.fulfill(status=200, content_type="application/json", body=first[0])

    page.route(lambda url: urlsplit(url).path == "/api/threads", stale)
    _open_board(server, page)
    meta = page.locator(".threads a[aria-current=page] .meta")
    expect(meta).to_have_text("1 to do")

    tl.board("t").add("Second")  # a change through the library...
    expect(meta).to_have_text("2 to do")
    response = httpx.post(  # ...and one through the HTTP API
        f"{server.url}/api/threads/t/cards/{card}/status", json={"status": "done"}
    )
    assert response.status_code == 200, response.text
    expect(meta).to_have_text("1 done · 1 to do")
    with page.expect_response(lambda r: urlsplit(r.url).path == "/api/threads"):
        pass  # the next poll answers the first list, older than the board shown
    expect(meta).to_have_text("1 done · 1 to do")
    tl.close()
