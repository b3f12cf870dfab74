"""``taskloom demo``: a small plan on a `demo` thread, to see the board and the panel."""

from __future__ import annotations

from taskloom.cli.common import DbOption, open_db, print_text

DEMO_THREAD = "demo"


def demo(db: DbOption = None) -> None:
    """Fill a `demo` thread with a small plan (once) and print its board.

    Example: taskloom demo
    """
    tl = open_db(db)
    handle = tl.board(DEMO_THREAD)
    snap = handle.list()
    if not snap["cards"]:
        handle.add("Read the issue", status="done")
        handle.add("Write the failing test", status="in_progress", active_form="Writing the test")
        handle.add("Make it pass", plan=["smallest change", "refactor"])
        snap = handle.add(
            "Open the pull request", approval_mode="required", status="awaiting_approval"
        )
    from taskloom.tools.board import render_board

    print_text(f"thread '{DEMO_THREAD}' in {tl.url}\n" + render_board(snap))
