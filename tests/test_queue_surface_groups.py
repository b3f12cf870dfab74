"""The hooks (the prompt block, :meth:`Queue.surface`; the session-start count,
:meth:`Queue.ready_count`) name what a claim takes: after a group holder's lease lapsed,
the claim's sweep returns the holder first and the claim takes the group's most urgent
task, one per group."""

from __future__ import annotations

import json
import time

import pytest

import taskloom
from taskloom.cli import main
from taskloom.client import Taskloom
from tests.conftest import FakeClock
from tests.test_queue_graph import lapsed_low_holder


def _titles(block: str) -> list[str]:
    return [
        line.split(">", 1)[1].split("<", 1)[0] for line in block.splitlines() if "<task " in line
    ]


def test_the_hooks_show_the_more_urgent_task_of_a_group_whose_holders_lease_lapsed(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    _, high = lapsed_low_holder(q, clock)
    q.add("alone", priority=3)
    assert q.ready_count("v") == 2
    block = q.surface("v")
    assert block is not None and 'ready="2"' in block
    assert _titles(block) == ["high", "alone"]
    got = q.claim("v", lease=10)
    assert got is not None and got.id == high.id


def test_the_hooks_count_one_task_per_group(tl_fixed: Taskloom) -> None:
    """Two ready tasks of one group: a claim takes one; the other waits its turn."""
    q = tl_fixed.queue
    q.add("first", group_key="g", priority=1)
    q.add("second", group_key="g", priority=2)
    assert q.ready_count("v") == 1
    block = q.surface("v")
    assert block is not None and 'ready="1"' in block and _titles(block) == ["first"]
    assert q.ready_count("v") == len(q.claim_batch("v", 10))


def test_the_hook_commands_agree_with_the_claim_after_a_lapsed_holder(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with taskloom.connect(db_url) as tl:
        q = tl.queue
        q.add("low", group_key="g", priority=5)
        assert q.claim("w", lease=0.2) is not None
        q.add("high", group_key="g", priority=1)
    time.sleep(0.3)
    db = ("--db", db_url)
    assert main(["hook", "session-start", "--agent", "v", *db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ready"] == 1
    assert main(["hook", "prompt", "--agent", "v", *db]) == 0
    block = json.loads(capsys.readouterr().out)["hookSpecificOutput"]["additionalContext"]
    assert 'ready="1"' in block and _titles(block) == ["high"]


def test_the_block_shows_the_first_task_of_each_group_past_a_long_run_of_one_group(
    tl: Taskloom,
) -> None:
    q = tl.queue
    q.add_many({"title": f"g{i}", "priority": 1, "group_key": "g"} for i in range(60))
    q.add_many({"title": f"free{i}", "priority": 2} for i in range(6))
    block = q.surface("v")
    assert block is not None and 'ready="7"' in block
    assert _titles(block) == ["g0", "free0", "free1", "free2", "free3"]


def test_the_block_comes_back_when_what_it_shows_changes_not_for_a_change_past_it(
    tl: Taskloom,
) -> None:
    q = tl.queue
    q.add_many({"title": f"t{i}", "priority": i + 1} for i in range(8))
    assert q.surface("v") is not None
    last = q.list(status="ready", limit=10)[-1]
    q.cancel(last.id)
    q.add("t8 instead", priority=50)  # past the five shown, and as many ready as before
    assert q.surface("v") is None
    q.add("t9", priority=60)  # one more ready: the count the block shows changes
    block = q.surface("v")
    assert block is not None and 'ready="9"' in block
    assert q.surface("v") is None
    q.add("urgent", priority=0)  # a new first task
    block = q.surface("v")
    assert block is not None and _titles(block)[0] == "urgent"


def test_ready_counts_every_task_and_lists_the_first_past_a_long_run_of_one_group(
    tl: Taskloom,
) -> None:
    q = tl.queue
    q.add_many({"title": f"g{i}", "priority": 1, "group_key": "g"} for i in range(60))
    q.add_many({"title": f"free{i}", "priority": 2, "kind": "lint"} for i in range(6))
    q.add("other kind", priority=2, kind="build")
    found = q.ready(limit=3)
    assert found.count == 8
    assert [t.title for t in found.ready] == ["g0", "free0", "free1"]
    lint = q.ready(kinds="lint", limit=10)
    assert lint.count == 6 and [t.title for t in lint.ready][-1] == "free5"
    assert q.ready(limit=0).count == 8 and q.ready(limit=0).ready == []
