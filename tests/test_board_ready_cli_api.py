"""Board dependencies for people: ``taskloom board ready [--explain]``, ``--after``,
``--not-after`` and ``remove --force`` in real processes, ``GET /api/threads/{t}/ready``, and an
approved card that reads as approved in ``board list``."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

import taskloom
from taskloom.client import Taskloom
from tests.test_cli import run
from tests.test_server import live_server

__all__ = ["live_server"]


def test_ready_and_edges_from_the_command_line(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    added = run("board", "add", "t", "Write the code", "--db", db, "--json")
    first = json.loads(added.stdout)["card"]["id"]
    second = json.loads(
        run("board", "add", "t", "Test it", "--after", first, "--db", db, "--json").stdout
    )["card"]["id"]
    ready = run("board", "ready", "t", "--db", db)
    assert (ready.returncode, ready.stdout) == (
        0,
        f"Ready to start (1):\n- Write the code  `({first})`\n",
    )
    explained = run("board", "ready", "t", "--explain", "--db", db)
    assert f"- Test it  `({second})`: waiting on 'Write the code' ({first}), todo" in (
        explained.stdout
    )
    as_json = json.loads(run("board", "ready", "t", "--explain", "--json", "--db", db).stdout)
    assert [c["id"] for c in as_json["not_ready"]] == [second]
    refused = run("board", "remove", "t", first, "--db", db)
    assert refused.returncode == 1 and "with --force, which drops the edge" in refused.stderr
    freed = run("board", "edit", "t", second, "--not-after", first, "--db", db, "--json")
    assert json.loads(freed.stdout)["card"]["blocked_by"] == []
    run("board", "edit", "t", second, "--after", first, "--db", db)
    forced = run("board", "remove", "t", first, "--force", "--db", db, "--json")
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["cards"][0]["blocked_by"] == []


def test_an_approved_card_reads_as_approved_in_board_list(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    waiting = run("board", "add", "t", "Deploy", "--needs-approval", "--db", db, "--json")
    card = json.loads(waiting.stdout)["card"]["id"]
    run("board", "add", "t", "Plain", "--db", db)
    listed = run("board", "list", "t", "--db", db).stdout
    assert f"- [?] Deploy  `({card})`\n  - approval: required\n- [ ] Plain" in listed
    assert run("board", "approve", "t", card, "--db", db).returncode == 0
    listed = run("board", "list", "t", "--db", db).stdout
    assert f"- [ ] Deploy  `({card})`\n  - approval: approved\n- [ ] Plain" in listed


def test_the_ready_view_over_http(tl: Taskloom, live_server: str) -> None:
    board = tl.board("org/repo#1")
    first = board.add("Write the code")["card"]["id"]
    second = board.add("Test it", blocked_by=[first])["card"]["id"]
    url = f"{live_server}/api/threads/org%2Frepo%231/ready"
    plain = httpx.get(url).json()
    assert [c["id"] for c in plain["ready"]] == [first] and "not_ready" not in plain
    explained = httpx.get(url, params={"explain": "1"}).json()
    assert explained["not_ready"][0]["id"] == second
    assert explained["not_ready"][0]["waiting_on"][0]["id"] == first
    bad = httpx.get(url, params={"explain": "yes"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_input"
    assert httpx.get(f"{live_server}/api/threads/org%2Frepo%231/board").json()["ready_count"] == 1
    with taskloom.connect(tl.url) as other:  # another process's change is read, not cached
        other.board("org/repo#1").update_status(first, "done")
    assert [c["id"] for c in httpx.get(url).json()["ready"]] == [second]
