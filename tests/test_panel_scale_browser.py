"""The panel under load, in a real browser (chromium via Playwright): bursts of task changes
from another process, and big queues and boards. The tests count requests, rows and elements
(what the panel does), never how long anything takes."""

from __future__ import annotations

import time
from typing import Any

import pytest

import taskloom
from tests import test_panel_browser as panel
from tests.conftest import Server

server, page = panel.server, panel.page  # the browser tests' fixtures: a server, a page

pytestmark = pytest.mark.browser

# Every request the page sends to `path`, counted with how many were out at once; each answer
# is held back `delay` ms, as a busy server's would be.
SLOW_FETCH = """([path, delay]) => {
  const seen = { sent: 0, out: 0, most: 0 };
  window.__seen = seen;
  const fetch = window.fetch;
  window.fetch = async (...args) => {
    if (!String(args[0]).startsWith(path)) return fetch(...args);
    seen.sent += 1;
    seen.out += 1;
    seen.most = Math.max(seen.most, seen.out);
    try {
      const response = await fetch(...args);
      await new Promise((done) => setTimeout(done, delay));
      return response;
    } finally {
      seen.out -= 1;
    }
  };
}"""


def _live(page: Any, server: Server, where: str = "/") -> None:
    from playwright.sync_api import expect

    page.goto(f"{server.url}{where}")
    expect(page.locator("#live")).to_have_attribute("data-state", "live")


def test_a_burst_of_task_changes_keeps_one_count_request_out_at_a_time(
    server: Server, page: Any
) -> None:
    """During a burst of task changes the panel asked for the counts every 250 ms, whether or
    not the last answer had come: with a slow answer (what can run now is worked out over
    every ready task, a third of a second with 100,000 of them) the requests piled up on the
    server, each slowing the next, and the counts shown lagged seconds behind the burst's end."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.queue.add("First")
    page.add_init_script(f"({SLOW_FETCH})(['/api/tasks/stats', 700])")
    _live(page, server)
    expect(page.locator("#queue-stats")).to_have_text("1 ready")
    for i in range(40):
        tl.queue.add(f"burst {i}")
        time.sleep(0.05)  # changes arriving over two seconds, not all in one event batch
    expect(page.locator("#queue-stats")).to_have_text("41 ready")
    seen = page.evaluate("window.__seen")
    assert seen["most"] == 1, seen
    assert seen["sent"] <= 6, seen  # the first load, then one per answer at most
    tl.close()


def test_a_change_to_the_followed_board_rebuilds_only_its_row_of_the_thread_list(
    server: Server, page: Any
) -> None:
    """Every change to the followed board rebuilt the whole thread list: with 2,000 threads
    each card an agent moved froze the page for 0.14 s."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    for i in range(30):
        tl.board(f"other-{i:02d}").add("A card")
    card = tl.board("t").add("Mine")["card"]["id"]
    _live(page, server, "/#t")
    rows = page.locator("#threads li")
    expect(rows).to_have_count(31)
    page.evaluate("for (const li of document.querySelectorAll('#threads li')) li.__kept = true")
    tl.board("t").update_status(card, "in_progress")
    expect(page.locator("#threads a[aria-current=page] .meta")).to_have_text("1 in progress")
    kept = "[...document.querySelectorAll('#threads li')].filter((li) => li.__kept).length"
    assert page.evaluate(kept) == 30
    # Another thread's change, as the list's poll finds it, rebuilds that thread's row only.
    tl.board("other-07").add("Another card")
    other = page.locator("#threads li", has_text="other-07")
    expect(other.locator(".meta")).to_have_text("2 to do")
    assert page.evaluate(kept) == 29
    tl.close()


HELD = "import('/static/state.js').then((m) => m.state.tasks.size)"


def test_the_queue_reads_its_list_again_once_workers_finish_the_tasks_it_held(
    server: Server, page: Any
) -> None:
    """With the queue filtered to ready tasks, workers finishing the 500 tasks the panel had
    listed left it saying "No task matches the filters." while thousands were ready: the list
    was read only when the filter changed or the stream reconnected."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.queue.add_many([{"title": f"task {i:03d}"} for i in range(600)])
    _live(page, server)
    page.get_by_label("Status filter").select_option("ready")
    rows = page.locator("table.tasks tbody tr")
    expect(rows).to_have_count(200)
    for _ in range(350):
        task = tl.queue.claim("w1")
        assert task is not None
        tl.queue.done(task.id, task.lease_token)
    expect(page.locator("#queue-stats")).to_have_text("250 ready · 350 completed")
    expect(page.locator("#queue .more")).to_have_text(
        "Showing the 200 most urgent of 250 ready tasks."
    )
    expect(rows).to_have_count(200)
    expect(rows.first).to_contain_text("task 350")
    expect(page.locator("table.tasks tbody tr", has_text="task 520")).to_have_count(1)
    tl.close()


def test_the_tasks_held_stay_bounded_as_the_stream_names_more(server: Server, page: Any) -> None:
    """Every task the stream named stayed held, shown or not: a panel left open while workers
    went through a big queue held, filtered and sorted on every change every task it had
    heard of, without end."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.queue.add_many([{"title": f"task {i:03d}"} for i in range(600)])
    _live(page, server)
    page.get_by_label("Status filter").select_option("ready")
    rows = page.locator("table.tasks tbody tr")
    expect(rows).to_have_count(200)
    assert page.evaluate(HELD) == 500
    tl.queue.add_many([{"title": f"later {i}", "priority": 5} for i in range(1000)])
    for _ in range(700):  # 700 tasks leave the status shown: 500 of them the ones held
        task = tl.queue.claim("w1")
        assert task is not None
        tl.queue.done(task.id, task.lease_token)
    expect(page.locator("#queue-stats")).to_have_text("900 ready · 700 completed")
    expect(rows).to_have_count(200)
    for _ in range(100):  # the tasks held are kept in bounds shortly after the changes
        held = page.evaluate(HELD)
        if held <= 1000:
            break
        page.wait_for_timeout(100)
    assert held <= 1000
    tl.close()


ROWS = "document.querySelectorAll('table.tasks tbody tr')"
KEPT_ROWS = f"[...{ROWS}].filter((tr) => tr.__kept).length"


def test_a_task_change_rebuilds_only_the_rows_it_changes(server: Server, page: Any) -> None:
    """Every task change rebuilt all 200 rows of the queue: during a burst of 100 changes a
    second from another process the page spent most of its time rebuilding and laying out
    rows that had not changed."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tasks = [tl.queue.add(f"task {i:02d}")[0] for i in range(30)]
    _live(page, server)
    rows = page.locator("table.tasks tbody tr")
    expect(rows).to_have_count(30)
    page.evaluate(f"for (const tr of {ROWS}) tr.__kept = true")
    tl.queue.add("The least urgent", priority=500)
    expect(rows).to_have_count(31)
    assert page.evaluate(KEPT_ROWS) == 30
    tl.queue.cancel(tasks[4].id)
    expect(rows.nth(4).locator(".status")).to_have_attribute("data-status", "canceled")
    assert page.evaluate(KEPT_ROWS) == 29
    # The focus on a kept row's button stays on that very button.
    button = page.get_by_role("button", name="Cancel the task: task 07")
    button.focus()
    tl.queue.add("Another", priority=500)
    expect(rows).to_have_count(32)
    expect(button).to_be_focused()
    tl.close()


def test_a_right_to_left_plan_step_keeps_its_number_inside_its_card(
    server: Server, page: Any
) -> None:
    """A plan step or criterion in Hebrew or Arabic is right to left, and its number went to
    its right, past the list's edge, which had room on the left only: in a kanban card the
    number sat on the card's border, outside it."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.board("t").add(
        "תוכנית",
        status="awaiting_approval",
        approval_mode="required",
        plan=["צעד ראשון של התוכנית", "צעד שני"],
        acceptance_criteria=["הבדיקות עוברות"],
    )
    _live(page, server, "/#t")
    page.get_by_role("button", name="Kanban").click()
    card = page.locator(".kcard")
    expect(card.locator("ol li")).to_have_count(2)
    box = card.bounding_box()
    strip = {"x": box["x"] + box["width"], "y": box["y"], "width": 14, "height": box["height"]}
    shown = page.screenshot(clip=strip)
    page.evaluate(
        "for (const li of document.querySelectorAll('.kcard li')) li.style.listStyle = 'none'"
    )
    assert page.screenshot(clip=strip) == shown  # no number drawn outside the card
    tl.close()


def test_opening_a_thread_reads_its_board_from_the_stream_only(server: Server, page: Any) -> None:
    """Every page opened and every thread picked read the board twice: from the stream's
    opening, then again from /api/threads/{t}/board, asked for as soon as the stream was open,
    before the opening had come. For a 1,000-card board that is 1.6 MB more each time."""
    from playwright.sync_api import expect

    tl = taskloom.connect(server.db_url)
    tl.board("t").add("A card")
    tl.board("u").add("Another card")
    tl.goal("g").set("A goal and no board")
    reads: list[str] = []
    page.on("request", lambda r: reads.append(r.url) if r.url.endswith("/board") else None)
    _live(page, server, "/#t")
    expect(page.locator("[data-card] .title")).to_have_text("A card")
    page.locator("#threads a", has_text="u").click()
    expect(page.locator("[data-card] .title")).to_have_text("Another card")
    assert reads == []
    # A thread with no board is read once its opening has ended without one.
    page.locator("#threads a", has_text="g").click()
    expect(page.locator("#board .empty")).to_have_text("No cards on this board yet.")
    assert [url.rsplit("/", 2)[1] for url in reads] == ["g"]
    tl.close()
