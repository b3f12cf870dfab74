"""Regenerate the panel screenshots in docs/img/: at 1280 px, the board as a list and as kanban,
the goal and the queue (light), the list and kanban in dark; at 400 px, the page light and dark.

    .venv/bin/python scripts/screenshots.py

Fills a fresh SQLite file with a realistic thread, serves it, and photographs the panel with
Debian's chromium through Playwright.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import Browser, sync_playwright

import taskloom

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"


def fill(db: str) -> None:
    tl = taskloom.connect(db)
    board = tl.board("fix-login-bug")
    board.add("Reproduce the failing login", status="done")
    board.add("Find where the session cookie is dropped", status="done")
    test = board.add(
        "Write a regression test",
        status="in_progress",
        active_form="Writing the regression test",
        plan=["log in with an expired cookie", "assert a redirect, not a 500"],
    )["card"]["id"]
    patch = board.add(
        "Patch the cookie refresh",
        notes="keep the change inside auth/session.py",
        blocked_by=[test],
    )["card"]["id"]
    board.add(
        "Deploy the fix to production",
        status="awaiting_approval",
        approval_mode="required",
        blocked_by=[patch],
    )
    board.add("Update the changelog", status="blocked", blocker="waiting for the release number")
    board.add(
        "Audit every place the session cookie is read or written (auth, billing, the admin"
        " console and the mobile API gateway) and list which ones still assume a fixed expiry"
        " instead of the sliding window the new refresh introduces",
        notes="a long title: clamped to three lines, all of it on click or focus",
    )
    goal = tl.goal("fix-login-bug").set("Users stay logged in across deploys", token_budget=200_000)
    tl.goal("fix-login-bug").account_usage(goal["goal"]["goal_id"], tokens=138_400)
    tl.board("docs-refresh").add("Rewrite the quick start", status="in_progress")
    for title, kind in [
        ("Index the new docs pages", "index"),
        ("Re-embed changed files", "embed"),
        ("Run the nightly eval suite", "eval"),
        ("Summarise yesterday's incidents", "report"),
        (
            "Re-run the flaky checkout integration tests against the staging database with"
            " tracing on, and attach the slowest spans to the incident ticket",
            "eval",
        ),
    ]:
        tl.queue.add(title, kind=kind)
    migrate, _ = tl.queue.add("Migrate the sessions table", kind="db", group_key="database")
    tl.queue.add(
        "Backfill session expiry", kind="db", group_key="database", depends_on=[migrate.id]
    )
    tl.queue.claim("agent-alpha", lease=600, kinds=["index"])
    tl.queue.claim("agent-beta", lease=600, kinds=["embed"])
    tl.close()


def shoot(browser: Browser, url: str, dark: bool) -> None:
    """The shots of one theme, picked by the system's preference as for a person; each page has
    its own storage, so each opens on the list view."""
    tail = "-dark" if dark else ""
    scheme = "dark" if dark else "light"
    page = browser.new_page(viewport={"width": 1280, "height": 1000}, color_scheme=scheme)
    page.goto(f"{url}/#fix-login-bug")
    page.wait_for_selector("table.tasks")
    page.screenshot(path=OUT / f"panel-list{tail}.png", full_page=True)
    page.get_by_role("button", name="Kanban").click()
    page.wait_for_selector(".kanban")
    page.screenshot(path=OUT / f"panel-kanban{tail}.png", full_page=True)
    if not dark:
        page.locator("#goal-panel").screenshot(path=OUT / "panel-goal.png")
        page.locator("section[aria-label=Queue]").screenshot(path=OUT / "panel-queue.png")
    page.close()
    phone = browser.new_page(viewport={"width": 400, "height": 800}, color_scheme=scheme)
    phone.goto(f"{url}/#fix-login-bug")
    phone.wait_for_selector("table.tasks")
    phone.screenshot(path=OUT / f"panel-phone{tail}.png", full_page=True)
    phone.close()


def main(argv: list[str] | None = None) -> None:
    """Arguments are parsed before anything runs: ``--help`` and a mistyped flag leave the
    committed images as they are."""
    parser = argparse.ArgumentParser(
        description=f"Regenerate the panel screenshots in {OUT.relative_to(ROOT)}/ (overwrites"
        " them). Needs Debian's chromium and Playwright."
    )
    parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, socket.socket() as sock:
        db = f"sqlite:///{Path(tmp) / 'shots.db'}"
        fill(db)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        cmd = [sys.executable, "-m", "taskloom", "serve", f"--port={port}", f"--db={db}"]
        proc = subprocess.Popen(cmd, env=env)
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(100):
                try:
                    httpx.get(url, timeout=1)
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"]
                )
                for dark in (False, True):
                    shoot(browser, url, dark)
                browser.close()
        finally:
            proc.kill()
    print(f"wrote {', '.join(sorted(p.name for p in OUT.glob('panel-*.png')))} to {OUT}")


if __name__ == "__main__":
    main()
