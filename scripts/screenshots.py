"""Regenerate the panel screenshots in docs/img/ (list, kanban, goal, queue).

    .venv/bin/python scripts/screenshots.py

Fills a fresh SQLite file with a realistic thread, serves it, and photographs the panel with
Debian's chromium through Playwright.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

import taskloom

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"


def fill(db: str) -> None:
    tl = taskloom.connect(db)
    board = tl.board("fix-login-bug")
    board.add("Reproduce the failing login", status="done")
    board.add("Find where the session cookie is dropped", status="done")
    board.add(
        "Write a regression test",
        status="in_progress",
        active_form="Writing the regression test",
        plan=["log in with an expired cookie", "assert a redirect, not a 500"],
    )
    board.add("Patch the cookie refresh", notes="keep the change inside auth/session.py")
    board.add("Deploy the fix to production", status="awaiting_approval", approval_mode="required")
    board.add("Update the changelog", status="blocked", blocker="waiting for the release number")
    goal = tl.goal("fix-login-bug").set("Users stay logged in across deploys", token_budget=200_000)
    tl.goal("fix-login-bug").account_usage(goal["goal"]["goal_id"], tokens=138_400)
    tl.board("docs-refresh").add("Rewrite the quick start", status="in_progress")
    for title, kind in [
        ("Index the new docs pages", "index"),
        ("Re-embed changed files", "embed"),
        ("Run the nightly eval suite", "eval"),
        ("Summarise yesterday's incidents", "report"),
    ]:
        tl.queue.add(title, kind=kind)
    tl.queue.claim("agent-alpha", lease=600, kinds=["index"])
    tl.queue.claim("agent-beta", lease=600, kinds=["embed"])
    tl.close()


def main() -> None:
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
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                page.goto(f"{url}/#fix-login-bug")
                page.wait_for_selector("table.tasks")
                page.screenshot(path=OUT / "panel-list.png", full_page=True)
                page.get_by_role("button", name="Kanban").click()
                page.wait_for_selector(".kanban")
                page.screenshot(path=OUT / "panel-kanban.png", full_page=True)
                page.locator("#goal-panel").screenshot(path=OUT / "panel-goal.png")
                page.locator("section[aria-label=Queue]").screenshot(path=OUT / "panel-queue.png")
                browser.close()
        finally:
            proc.kill()
    print(f"wrote {', '.join(sorted(p.name for p in OUT.glob('panel-*.png')))} to {OUT}")


if __name__ == "__main__":
    main()
