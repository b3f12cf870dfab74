"""The stash log is bounded: lines older than ``STASH_LOG_AGE`` go, in bounded batches.

Every stash, eviction, expiry and per-turn placement adds a ``stash_log`` line, and nothing
deleted them, so a long-running deployment's log grew for ever. Now the retention pass every
writer runs (and ``taskloom serve``'s) deletes the old ones, a batch per short transaction.
Both backends.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import timedelta

import pytest

import taskloom
from taskloom.cli import main
from taskloom.client import Taskloom
from taskloom.guard.budget import TurnResult
from taskloom.server.app import create_app
from taskloom.store import retention, stash
from taskloom.store.retention import STASH_LOG_AGE, prune_stash_log, stash_log_lines
from tests.conftest import FakeClock
from tests.test_guard_budget import CONFIG, output

DAY = 86400.0


def turn() -> list[TurnResult]:
    return [
        TurnResult("call_a", "grep", output(1, 1_800)),
        TurnResult("call_b", "ls", output(2, 400)),
        TurnResult("call_c", "cat", output(3, 1_500)),
    ]


def lines(tl: Taskloom, thread: str) -> list[str]:
    """The thread's stash log, oldest first, as ``action result_id``."""
    with tl.store.read() as tx:
        rows = stash.history(tx, thread, limit=10_000)
    return [f"{r['action']} {r['result_id']}" for r in reversed(rows)]


def place_many(tl: Taskloom, thread: str, count: int) -> None:
    """``count`` placements of one thread, written in one transaction at the clock's time."""
    with tl.store.write() as tx:
        decided = {f"call_{i}": "shown" for i in range(count)}
        stash.place(tx, thread, decided, tl.now())


@pytest.fixture
def no_timed_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer applies retention after its first commit and when the count says, never
    because a second passed: what each test sees does not depend on how fast it runs."""
    monkeypatch.setattr(retention, "EVERY_S", 1e9)


def test_the_age_is_thirty_days() -> None:
    assert timedelta(days=30) == STASH_LOG_AGE


@pytest.mark.usefixtures("no_timed_pass")
def test_old_lines_go_and_recent_lines_and_placements_stay(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    tl_fixed.guard("old", CONFIG).wrap_turn(turn())
    old = lines(tl_fixed, "old")
    assert [line.split()[0] for line in old].count("placed") == 3
    clock.advance(2 * DAY)
    recent = [w.text for w in tl_fixed.guard("recent", CONFIG).wrap_turn(turn())]
    before_recent = lines(tl_fixed, "recent")
    clock.advance(29 * DAY)  # "old" is 31 days old, "recent" 29
    assert prune_stash_log(tl_fixed.store, tl_fixed.now()) == len(old)
    assert lines(tl_fixed, "old") == []
    assert lines(tl_fixed, "recent") == before_recent
    assert prune_stash_log(tl_fixed.store, tl_fixed.now()) == 0
    # The recent placements still hold: the turn re-wrapped gives the same bytes and
    # records nothing new.
    assert [w.text for w in tl_fixed.guard("recent", CONFIG).wrap_turn(turn())] == recent
    assert [x for x in lines(tl_fixed, "recent") if x.startswith("placed")] == [
        x for x in before_recent if x.startswith("placed")
    ]


@pytest.mark.usefixtures("no_timed_pass")
def test_a_line_is_judged_by_its_own_time_not_its_place_in_the_log(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """A writer whose clock runs ahead wrote a line before the old ones: it stays, and the
    old ones behind it still go."""
    start = clock.now
    clock.now = start + timedelta(days=40)
    place_many(tl_fixed, "ahead", 1)
    clock.now = start
    place_many(tl_fixed, "old", 4)
    clock.now = start + timedelta(days=31)
    assert prune_stash_log(tl_fixed.store, tl_fixed.now()) == 4
    assert lines(tl_fixed, "ahead") == ["placed call_0"]
    assert lines(tl_fixed, "old") == []


@pytest.mark.usefixtures("no_timed_pass")
def test_every_writer_prunes_the_old_lines_a_batch_per_transaction(
    db_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No server needed: any process that writes deletes the old lines, at most a batch per
    application, each in its own transaction, and again after its next commit while it
    found a whole batch due."""
    monkeypatch.setattr(retention, "BATCH", 10)
    with taskloom.connect(db_url, clock=clock) as first:
        place_many(first, "old", 25)
        clock.advance(31 * DAY)
        place_many(first, "recent", 3)
    with taskloom.connect(db_url, clock=clock) as second:  # another process, as it were
        left = []
        for title in ("a", "b", "c", "d"):
            second.board("t").add(title)
            left.append(len(lines(second, "old")))
        assert left == [15, 5, 0, 0]
        assert len(lines(second, "recent")) == 3
        assert stash_log_lines(second.store) == 3


def test_one_call_deletes_at_most_a_batch(tl_fixed: Taskloom, clock: FakeClock) -> None:
    place_many(tl_fixed, "old", 7)
    clock.advance(31 * DAY)
    assert [prune_stash_log(tl_fixed.store, tl_fixed.now(), batch=3) for _ in range(4)] == [
        3,
        3,
        1,
        0,
    ]
    with pytest.raises(ValueError, match="batch"):
        prune_stash_log(tl_fixed.store, tl_fixed.now(), batch=0)


@pytest.mark.usefixtures("no_timed_pass")
def test_a_server_prunes_the_old_lines(tl_fixed: Taskloom, clock: FakeClock) -> None:
    tl_fixed.board("t").add("first")  # this writer's first commit: its pass is done
    place_many(tl_fixed, "old", 5)
    clock.advance(31 * DAY)
    place_many(tl_fixed, "recent", 2)
    assert stash_log_lines(tl_fixed.store) == 7
    app = create_app(tl_fixed, prune_every_s=0.05, mcp=False)

    async def go() -> None:
        async with app.router.lifespan_context(app):
            deadline = time.monotonic() + 20
            while stash_log_lines(tl_fixed.store) > 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)

    asyncio.run(go())
    assert lines(tl_fixed, "old") == []
    assert lines(tl_fixed, "recent") == ["placed call_0", "placed call_1"]


def test_retention_show_counts_the_stash_log_lines(
    tl: Taskloom, capsys: pytest.CaptureFixture[str]
) -> None:
    place_many(tl, "t", 1_234)
    assert main(["retention", "show", "--db", tl.url]) == 0
    out = capsys.readouterr().out
    assert "stash log lines kept: 1,234 (none older than 30 days)\n" in out
    assert main(["retention", "show", "--json", "--db", tl.url]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["stash_log_lines"] == 1_234
    assert report["stash_log_days"] == 30
