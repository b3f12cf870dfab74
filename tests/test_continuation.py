"""Continuation under adversity: bad turn functions, late schedulers, rephrasing models and
users who speak while a scheduler runs. Both backends (``tl_fixed`` is parametrized)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import subprocess
import sys
import warnings
from typing import Any

import pytest

import taskloom
from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.domain.goals import MAX_EVIDENCE, MAX_REASON, Goal
from taskloom.goals.continuation import (
    StopReason,
    TurnFailed,
    TurnOutcome,
    acontinuation_tick,
    arun_goal_loop,
    continuation_tick,
    note_user_turn,
    run_goal_loop,
    user_turn,
)
from taskloom.goals.turns import TurnLease, claim_turn, end_turn
from taskloom.tools.registry import ToolContext
from tests.conftest import FakeClock, subprocess_env

CTX = ToolContext(thread_id="t")


def _goal(tl: Taskloom, thread_id: str = "t") -> dict[str, Any]:
    goal = tl.goal(thread_id).get()["goal"]
    assert goal is not None
    return goal


# --- a malformed turn result is that turn's failure, never the scheduler's ---


async def _async_turn(goal: Goal) -> TurnOutcome:
    return TurnOutcome()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (lambda g: TurnOutcome(tokens_used=1200.0), "tokens must be a whole number"),  # type: ignore[arg-type]
        (lambda g: None, "must return a TurnOutcome (got NoneType)"),
        (_async_turn, "needs acontinuation_tick"),
        (lambda g: TurnOutcome(elapsed_s=float("nan")), "seconds must be a number"),
    ],
)
def test_a_malformed_outcome_fails_its_turn_and_the_tick_goes_on(
    tl_fixed: Taskloom, clock: FakeClock, bad: Any, message: str
) -> None:
    tl_fixed.goal("old").set("the older goal, whose turn function is broken")
    clock.advance(1)
    tl_fixed.goal("new").set("the newer goal")
    clock.advance(120)

    def turn(goal: Goal) -> Any:
        return bad(goal) if goal.thread_id == "old" else TurnOutcome(tokens_used=7)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine never awaited would warn
        for attempt in range(3):
            items = continuation_tick(tl_fixed, turn, idle_s=60, max_failures=3)
            gc.collect()
            by_thread = {i.thread_id: i for i in items}
            assert sorted(by_thread) == ["new", "old"] and all(i.ran for i in items)
            assert message in (by_thread["old"].error or "")
            assert by_thread["old"].paused is (attempt == 2) and by_thread["new"].error is None
            clock.advance(120)
    assert _goal(tl_fixed, "old")["status"] == "paused"
    assert _goal(tl_fixed, "old")["tokens_used"] == 0
    assert _goal(tl_fixed, "new")["tokens_used"] == 21


def test_an_async_scheduler_tick_runs_async_turns(tl_fixed: Taskloom, clock: FakeClock) -> None:
    for name in ("a", "b"):
        tl_fixed.goal(name).set(f"goal {name}")
        clock.advance(1)
    clock.advance(120)
    ran: list[str] = []

    async def turn(goal: Goal) -> TurnOutcome:
        await asyncio.sleep(0)
        ran.append(goal.thread_id)
        if goal.thread_id == "b":
            raise RuntimeError("model endpoint down")
        return TurnOutcome(tokens_used=5)

    items = asyncio.run(acontinuation_tick(tl_fixed, turn, idle_s=60, max_failures=1))
    assert ran == ["a", "b"]
    assert [(i.thread_id, i.error, i.paused) for i in items] == [
        ("a", None, False),
        ("b", "model endpoint down", True),
    ]
    assert _goal(tl_fixed, "a")["tokens_used"] == 5


def test_a_plain_turn_function_in_the_async_scheduler_and_loop_is_charged(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """A plain function given where an async one is expected has run its turn by the time
    its result is awaited: awaiting failed, the turn counted as a failure and its tokens were
    never charged, a way past the budget. Its outcome is charged as it is."""
    tl_fixed.goal("t").set("ship it", token_budget=25)
    ran: list[str] = []

    def plain(goal: Goal) -> TurnOutcome:
        ran.append(goal.thread_id)
        return TurnOutcome(tokens_used=10, elapsed_s=1.5)

    clock.advance(120)
    (item,) = asyncio.run(acontinuation_tick(tl_fixed, plain, idle_s=60))  # type: ignore[arg-type]
    assert item.ran and item.error is None and item.outcome == TurnOutcome(10, 1.5)
    assert (_goal(tl_fixed)["tokens_used"], _goal(tl_fixed)["time_used_s"]) == (10, 1.5)
    result = asyncio.run(arun_goal_loop(tl_fixed, "t", plain))  # type: ignore[arg-type]
    assert result.reason == StopReason.BUDGET_LIMITED and result.turns == 2
    assert _goal(tl_fixed)["tokens_used"] == 30 and ran == ["t"] * 3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_per_tick": 0}, "max_per_tick must be a whole number of at least 1"),
        ({"max_failures": 0}, "max_failures must be"),
        ({"idle_s": -1}, "idle_s must be a non-negative number"),
        ({"lease_s": 0}, "lease_s must be a positive number"),
    ],
)
def test_tick_options_are_checked(tl: Taskloom, options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        continuation_tick(tl, lambda g: TurnOutcome(), **options)


@pytest.mark.parametrize("options", [{"max_no_progress": 0}, {"max_turns": 0}])
def test_loop_options_are_checked(tl: Taskloom, options: dict[str, Any]) -> None:
    tl.goal("t").set("x")
    with pytest.raises(InvalidInput, match="must be a whole number of at least 1"):
        run_goal_loop(tl, "t", lambda g: TurnOutcome(), **options)


def test_loop_refuses_a_bad_outcome_before_charging_it(tl: Taskloom) -> None:
    tl.goal("t").set("x", token_budget=100)
    with pytest.raises(InvalidInput, match="tokens must be a whole number"):
        run_goal_loop(tl, "t", lambda g: TurnOutcome(tokens_used=-5))
    assert _goal(tl)["tokens_used"] == 0
    # the lease went with the failed turn: the next loop runs
    assert run_goal_loop(tl, "t", lambda g: TurnOutcome(), max_turns=1).turns == 1


# --- a turn that failed after spending is charged what it spent ---


def _spends_then_fails(goal: Goal) -> TurnOutcome:
    try:
        raise ConnectionError("the model endpoint went away")
    except ConnectionError as exc:
        raise TurnFailed(tokens_used=300, elapsed_s=2.5) from exc


def test_the_loop_charges_a_failed_turn_then_raises(tl_fixed: Taskloom) -> None:
    tl_fixed.goal("t").set("x", token_budget=1000)
    with pytest.raises(TurnFailed, match="the model endpoint went away") as raised:
        run_goal_loop(tl_fixed, "t", _spends_then_fails)
    assert isinstance(raised.value.__cause__, ConnectionError)
    assert (_goal(tl_fixed)["tokens_used"], _goal(tl_fixed)["time_used_s"]) == (300, 2.5)
    assert run_goal_loop(tl_fixed, "t", lambda g: TurnOutcome(), max_turns=1).turns == 1


def test_the_async_loop_charges_a_failed_turn(tl_fixed: Taskloom) -> None:
    tl_fixed.goal("t").set("x", token_budget=1000)

    async def turn(goal: Goal) -> TurnOutcome:
        return _spends_then_fails(goal)

    with pytest.raises(TurnFailed):
        asyncio.run(arun_goal_loop(tl_fixed, "t", turn))
    assert _goal(tl_fixed)["tokens_used"] == 300


def test_a_failed_turn_that_spends_the_budget_stops_the_goal(tl_fixed: Taskloom) -> None:
    tl_fixed.goal("t").set("x", token_budget=200)
    with pytest.raises(TurnFailed):
        run_goal_loop(tl_fixed, "t", _spends_then_fails)
    assert _goal(tl_fixed)["status"] == "budget_limited"
    result = run_goal_loop(tl_fixed, "t", lambda g: TurnOutcome())
    assert (result.reason, result.turns) == (StopReason.BUDGET_LIMITED, 0)


def test_a_failed_turn_with_bad_usage_is_an_input_error_charging_nothing(
    tl_fixed: Taskloom,
) -> None:
    tl_fixed.goal("t").set("x", token_budget=1000)

    def turn(goal: Goal) -> TurnOutcome:
        raise TurnFailed(tokens_used=-3)

    with pytest.raises(InvalidInput, match="the TurnFailed a turn raised: tokens must be"):
        run_goal_loop(tl_fixed, "t", turn)
    assert _goal(tl_fixed)["tokens_used"] == 0


def test_the_tick_charges_a_failed_turn_and_counts_the_failure(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    tl_fixed.goal("t").set("x", token_budget=10_000)
    for attempt in range(2):
        clock.advance(120)
        items = continuation_tick(tl_fixed, _spends_then_fails, idle_s=60, max_failures=2)
        assert items[0].error == "the model endpoint went away"
        assert items[0].paused is (attempt == 1)
    goal = _goal(tl_fixed)
    assert (goal["tokens_used"], goal["status"]) == (600, "paused")
    assert "went away" in goal["reason"]


# --- the turn lease belongs to the turn that took it ---


def test_a_late_turn_leaves_alone_the_lease_another_scheduler_took(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    tl_fixed.goal("t").set("slow work")
    clock.advance(120)

    def slow_turn(goal: Goal) -> TurnOutcome:
        clock.advance(10)  # outlives its 5 s lease; a second scheduler takes the thread
        assert claim_turn(tl_fixed.runtime, "t", 600) is not None
        return TurnOutcome(tokens_used=1)

    items = continuation_tick(tl_fixed, slow_turn, idle_s=0, lease_s=5)
    assert [i.ran for i in items] == [True]
    clock.advance(120)
    # the second scheduler's turn is still in flight: a third one must not start
    assert [i.ran for i in continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=0)] == [
        False
    ]


def test_end_turn_releases_only_its_own_lease(tl_fixed: Taskloom, clock: FakeClock) -> None:
    tl_fixed.goal("t").set("x")
    first = claim_turn(tl_fixed.runtime, "t", 1)
    assert first is not None
    clock.advance(2)
    second = claim_turn(tl_fixed.runtime, "t", 60)
    assert second is not None
    assert end_turn(tl_fixed.runtime, first, 0) is False
    assert claim_turn(tl_fixed.runtime, "t", 60) is None
    assert end_turn(tl_fixed.runtime, second, 0) is True
    assert claim_turn(tl_fixed.runtime, "t", 60) is not None


def test_failures_in_a_row_belong_to_the_goal_not_the_thread(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    tl_fixed.goal("t").set("the old goal")

    def boom(goal: Goal) -> TurnOutcome:
        raise RuntimeError("down")

    for _ in range(2):
        clock.advance(120)
        continuation_tick(tl_fixed, boom, idle_s=60, max_failures=3)
    tl_fixed.goal("t").clear()
    tl_fixed.goal("t").set("a brand-new goal")
    clock.advance(120)
    items = continuation_tick(tl_fixed, boom, idle_s=60, max_failures=3)
    assert items[0].error == "down" and items[0].paused is False
    assert _goal(tl_fixed)["status"] == "active"


def test_a_failed_turns_credentials_stay_out_of_the_goal_and_its_tick_item(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """The paused goal's reason is in every snapshot, event and goal_get answer: a key or a
    password the provider's error quoted is redacted there and in the tick's item."""
    tl_fixed.goal("t").set("call the provider")
    key = "sk-proj-" + "a1B2c3D4e5" * 4

    def leaks(goal: Goal) -> TurnOutcome:
        raise RuntimeError(f"POST https://admin:hunter2@api.example.com/v1 failed (key {key})")

    clock.advance(120)
    (item,) = continuation_tick(tl_fixed, leaks, idle_s=60, max_failures=1)
    goal = _goal(tl_fixed)
    assert item.paused is True and goal["status"] == "paused"
    assert goal["reason"].startswith("continuation failed 1 time in a row: POST https://admin:")
    shown = tl_fixed.tools.dispatch("goal_get", {}, CTX).content
    for text in (goal["reason"], item.error or "", shown, str(tl_fixed.goal("t").get())):
        assert "hunter2" not in text and key not in text
        assert "[redacted]" in text


# --- rephrasing the objective is still the same goal ---


def _rephrasing(tl: Taskloom, *, progress: bool) -> Any:
    versions = itertools.count(1)

    def turn(goal: Goal) -> TurnOutcome:
        r = tl.tools.dispatch("goal_set", {"objective": f"Same work, v{next(versions)}"}, CTX)
        assert not r.is_error, r.content
        return TurnOutcome(tokens_used=1, made_progress=progress)

    return turn


def test_loop_stops_a_goal_rephrased_every_turn_without_progress(tl: Taskloom) -> None:
    tl.goal("t").set("Same work")
    result = run_goal_loop(tl, "t", _rephrasing(tl, progress=False), max_no_progress=2)
    assert result.reason is StopReason.NO_PROGRESS and result.turns == 2
    assert _goal(tl)["continuation_suppressed"] is True


def test_tick_suppresses_a_goal_rephrased_without_progress(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    tl_fixed.goal("t").set("Same work")
    turn = _rephrasing(tl_fixed, progress=False)
    ran = 0
    for _ in range(4):
        clock.advance(120)
        ran += sum(i.ran for i in continuation_tick(tl_fixed, turn, idle_s=60))
    assert ran == 1 and _goal(tl_fixed)["continuation_suppressed"] is True


# --- a user turn goes first ---


def test_a_user_turn_resets_the_idle_clock(tl_fixed: Taskloom, clock: FakeClock) -> None:
    tl_fixed.goal("t").set("x")
    clock.advance(120)
    note_user_turn(tl_fixed, "t")
    assert continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=60) == []
    clock.advance(61)
    assert [i.ran for i in continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=60)] == [
        True
    ]


def test_a_turns_suppression_yields_to_a_user_turn_that_commits_just_before_it(
    tl: Taskloom,
) -> None:
    """The idle check and the suppression were two transactions: a user who spoke between
    them was overruled. The suppression itself now checks the goal's user turns."""
    handle = tl.goal("t")
    ran = Goal.from_dict(handle.set("x")["goal"])
    note_user_turn(tl, "t")  # between the turn's idle check and its suppression
    snap = handle.suppress(True, goal_id=ran.lineage_id, user_turns=ran.user_turns)
    assert not snap["goal"]["continuation_suppressed"]
    seen = Goal.from_dict(snap["goal"])
    assert seen.user_turns == ran.user_turns + 1
    snap = handle.suppress(True, goal_id=seen.lineage_id, user_turns=seen.user_turns)
    assert snap["goal"]["continuation_suppressed"]


def _turn_in_flight(tl: Taskloom, clock: FakeClock) -> TurnLease:
    """Thread ``t`` with a goal, and a continuation turn on it that is still running."""
    tl.goal("t").set("x")
    clock.advance(120)
    scheduler = claim_turn(tl.runtime, "t", 600)
    assert scheduler is not None
    return scheduler


def test_no_scheduler_turn_while_a_user_turn_runs(tl_fixed: Taskloom, clock: FakeClock) -> None:
    scheduler = _turn_in_flight(tl_fixed, clock)
    with user_turn(tl_fixed, "t"):
        clock.advance(120)
        assert end_turn(tl_fixed.runtime, scheduler, 0) is False  # the user's turn took over
        assert [i.ran for i in continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=0)] == [
            False
        ]
        assert run_goal_loop(tl_fixed, "t", lambda g: TurnOutcome()).reason is (
            StopReason.TURN_IN_FLIGHT
        )
    assert [i.ran for i in continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=0)] == [True]


def test_a_scheduler_skips_a_thread_whose_loop_turn_runs(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    tl_fixed.goal("t").set("x")
    seen: list[list[bool]] = []

    def work(goal: Goal) -> TurnOutcome:
        clock.advance(120)
        seen.append([i.ran for i in continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=0)])
        return TurnOutcome()

    assert run_goal_loop(tl_fixed, "t", work, max_turns=2).reason is StopReason.MAX_TURNS
    assert seen == [[False], [False]]


def test_async_loop_holds_the_turn_lease(tl_fixed: Taskloom, clock: FakeClock) -> None:
    tl_fixed.goal("t").set("x")
    seen: list[list[bool]] = []

    async def work(goal: Goal) -> TurnOutcome:
        clock.advance(120)
        ticked = await asyncio.to_thread(
            continuation_tick, tl_fixed, lambda g: TurnOutcome(), idle_s=0
        )
        seen.append([i.ran for i in ticked])
        return TurnOutcome()

    result = asyncio.run(arun_goal_loop(tl_fixed, "t", work, max_turns=1))
    assert result.reason is StopReason.MAX_TURNS and seen == [[False]]


# --- host controls and bounds ---


@pytest.mark.parametrize("hold", ["pause", "block", "complete", "suppress"])
def test_host_set_with_the_same_objective_restarts_the_goal(tl: Taskloom, hold: str) -> None:
    goal = tl.goal("t")
    goal.set("Ship 1.0", token_budget=1000)
    {
        "pause": lambda: goal.pause("wait"),
        "block": lambda: goal.block("need keys"),
        "complete": lambda: goal.complete("done"),
        "suppress": lambda: goal.suppress(True),
    }[hold]()
    snap = goal.set("Ship 1.0")["goal"]
    assert snap["status"] == "active" and snap["continuation_suppressed"] is False
    assert snap["reason"] is None and snap["evidence"] is None
    model = tl.tools.dispatch("goal_set", {"objective": "Ship 1.0"}, CTX)
    assert model.data["goal"]["status"] == "active"


def test_host_set_with_the_same_objective_keeps_an_exhausted_budget(tl: Taskloom) -> None:
    goal = tl.goal("t")
    goal.set("Ship", token_budget=10)
    goal.account_usage(_goal(tl)["goal_id"], 10)
    assert goal.set("Ship")["goal"]["status"] == "budget_limited"


def test_reason_and_evidence_are_bounded(tl: Taskloom) -> None:
    tl.goal("t").set("x")
    huge = tl.tools.dispatch("goal_block", {"reason": "R" * 5_000_000}, CTX)
    assert huge.is_error and len(huge.content) < 2000
    with pytest.raises(InvalidInput, match=f"reason is longer than {MAX_REASON}"):
        tl.goal("t").block("R" * (MAX_REASON + 1))
    with pytest.raises(InvalidInput, match=f"reason is longer than {MAX_REASON}"):
        tl.goal("t").pause("R" * (MAX_REASON + 1))
    with pytest.raises(InvalidInput, match=f"evidence is longer than {MAX_EVIDENCE}"):
        tl.goal("t").complete("E" * (MAX_EVIDENCE + 1))
    assert _goal(tl)["status"] == "active"
    assert tl.goal("t").block("R" * MAX_REASON)["goal"]["status"] == "blocked"


def test_prompt_blocks_tell_the_time_budget(tl: Taskloom) -> None:
    goal = tl.goal("t")
    snap = goal.set("Ship", time_budget_s=3600)
    assert "<budget>3,600 s of 3,600 s of time remain</budget>" in snap["context"]
    snap = goal.account_usage(snap["goal"]["goal_id"], 50, 3600)
    assert snap["goal"]["status"] == "budget_limited"
    assert "budget is used up (3,600 s of 3,600 s used)" in snap["context"]
    both = tl.goal("u").set("Ship", token_budget=100, time_budget_s=60)["context"]
    assert "<budget>100 of 100 tokens remain; 60 s of 60 s of time remain</budget>" in both


# --- cancellation, and turns that clear their goal ---


def _slow_claims(monkeypatch: pytest.MonkeyPatch) -> None:
    """A database slow to answer: each claim commits, then takes a while to come back."""
    import time

    import taskloom.goals.continuation as continuation

    real = continuation.claim_turn

    def slow(*args: Any, **kwargs: Any) -> Any:
        lease = real(*args, **kwargs)
        time.sleep(0.3)
        return lease

    monkeypatch.setattr(continuation, "claim_turn", slow)


@pytest.mark.parametrize("which", ["tick", "loop"])
def test_cancelling_an_async_scheduler_mid_claim_releases_the_lease(
    tl_fixed: Taskloom, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, which: str
) -> None:
    """The claim committed on its worker thread after the coroutine was cancelled, and its
    lease held the thread for lease_s (900 s)."""
    tl_fixed.goal("t").set("x")
    clock.advance(120)
    _slow_claims(monkeypatch)

    async def turn(goal: Goal) -> TurnOutcome:
        return TurnOutcome()

    async def cancel_midway() -> None:
        if which == "tick":
            task = asyncio.ensure_future(acontinuation_tick(tl_fixed, turn, idle_s=0))
        else:
            task = asyncio.ensure_future(arun_goal_loop(tl_fixed, "t", turn))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())
    monkeypatch.undo()
    assert claim_turn(tl_fixed.runtime, "t", 60) is not None


@pytest.mark.parametrize("tick", [continuation_tick, acontinuation_tick])
def test_a_turn_that_clears_its_goal_without_progress_ends_cleanly(
    tl_fixed: Taskloom, clock: FakeClock, tick: Any
) -> None:
    for name in ("a", "b"):
        tl_fixed.goal(name).set(f"goal {name}")
        clock.advance(1)
    clock.advance(120)

    def clear(goal: Goal) -> TurnOutcome:
        tl_fixed.goal(goal.thread_id).clear()
        return TurnOutcome(made_progress=False)

    async def aclear(goal: Goal) -> TurnOutcome:
        return clear(goal)

    if tick is continuation_tick:
        items = tick(tl_fixed, clear, idle_s=60)
    else:
        items = asyncio.run(tick(tl_fixed, aclear, idle_s=60))
    assert [(i.thread_id, i.ran, i.error) for i in items] == [("a", True, None), ("b", True, None)]


def test_a_turn_lease_held_by_a_process_that_died_frees_the_thread(db_url: str) -> None:
    """A process killed mid-turn kept the thread from every scheduler and loop for lease_s
    (900 s by default)."""
    died = _in_another_process(
        db_url,
        "from taskloom.goals.turns import claim_turn\n"
        "assert claim_turn(tl.runtime, 't', 900) is not None\n"
        "os._exit(0)  # dies mid-turn: no end_turn\n",
    )
    assert died.returncode == 0
    with taskloom.connect(db_url) as tl:
        result = run_goal_loop(tl, "t", lambda g: TurnOutcome(), max_turns=1)
        assert result.reason is StopReason.MAX_TURNS and result.turns == 1


def _in_another_process(db_url: str, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a new Python process with ``tl`` connected to ``db_url`` (thread ``t``
    given a goal first)."""
    with taskloom.connect(db_url) as tl:
        tl.goal("t").set("x")
    script = "import os, sys, taskloom\ntl = taskloom.connect(sys.argv[1])\n" + code
    return subprocess.run(
        [sys.executable, "-c", script, db_url],
        env=subprocess_env(),
        timeout=60,
        check=False,
        capture_output=True,
        text=True,
    )


def test_a_goal_the_turn_ended_stops_the_loop_for_that_reason(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """A turn that completes the goal (or runs it out of budget) without touching the board
    ends the loop as ``complete`` (``budget_limited``), not ``no_progress``, and leaves no
    suppression behind: a host raising the budget must see the goal run again."""
    tl_fixed.goal("t").set("answer the question")
    turns = itertools.count(1)

    def completes(goal: Goal) -> TurnOutcome:
        if next(turns) == 2:
            tl_fixed.tools.dispatch("goal_complete", {"evidence": "answered"}, CTX)
        return TurnOutcome(10, 1.0, made_progress=False)

    result = run_goal_loop(tl_fixed, "t", completes)
    assert (result.reason, result.turns) == (StopReason.COMPLETE, 2)
    assert _goal(tl_fixed)["continuation_suppressed"] is False
    tl_fixed.goal("b").set("spend", token_budget=100)
    result = run_goal_loop(tl_fixed, "b", lambda g: TurnOutcome(500, 1.0, made_progress=False))
    assert (result.reason, result.turns) == (StopReason.BUDGET_LIMITED, 1)
    items = continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=0)
    tl_fixed.goal("b").set_budget(10_000)
    clock.advance(1)
    items = continuation_tick(
        tl_fixed, lambda g: TurnOutcome(500, 1.0, made_progress=False), idle_s=0
    )
    assert [(i.thread_id, i.ran) for i in items] == [("b", True)]
    assert _goal(tl_fixed, "b")["continuation_suppressed"] is True  # still active: suppressed
    tl_fixed.goal("c").set("one last step", token_budget=100)
    clock.advance(1)
    continuation_tick(tl_fixed, lambda g: TurnOutcome(500, 1.0, made_progress=False), idle_s=0)
    assert _goal(tl_fixed, "c")["status"] == "budget_limited"
    assert _goal(tl_fixed, "c")["continuation_suppressed"] is False


def test_a_turn_a_user_turn_went_before_still_holds_the_thread_after_it(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    scheduler = _turn_in_flight(tl_fixed, clock)
    with user_turn(tl_fixed, "t"):
        clock.advance(1)
    clock.advance(120)  # the user's turn is over; the continuation turn still runs
    assert [i.ran for i in continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=0)] == [
        False
    ]
    assert end_turn(tl_fixed.runtime, scheduler, 0) is True  # it holds the thread again, and ends
    assert [i.ran for i in continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=0)] == [True]
    with user_turn(tl_fixed, "t"):  # one that ends during the user's turn frees it after
        late = claim_turn(tl_fixed.runtime, "t", 600)
        assert late is None
    scheduler = claim_turn(tl_fixed.runtime, "t", 600)
    assert scheduler is not None
    with user_turn(tl_fixed, "t"):
        assert end_turn(tl_fixed.runtime, scheduler, 0) is False
    clock.advance(1)
    assert [i.ran for i in continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=0)] == [True]
    scheduler = claim_turn(tl_fixed.runtime, "t", 60)  # and one whose lease ran out meanwhile
    assert scheduler is not None
    with user_turn(tl_fixed, "t"):
        clock.advance(61)
    assert [i.ran for i in continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=0)] == [True]


def test_a_user_turn_on_a_thread_without_a_goal_still_holds_it(tl_fixed: Taskloom) -> None:
    """The model may set a goal during the user's turn: no scheduler starts a turn on the
    thread before the user's turn ends."""
    with user_turn(tl_fixed, "t"):
        tl_fixed.tools.dispatch("goal_set", {"objective": "refactor the module"}, CTX)
        items = continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=0)
        assert [(i.thread_id, i.ran) for i in items] == [("t", False)]
    items = continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=0)
    assert [(i.thread_id, i.ran) for i in items] == [("t", True)]


def test_turns_that_kill_their_process_pause_the_goal_after_max_failures(db_url: str) -> None:
    """A turn that takes its process down never reports a failure; each one that never
    ended counts as one when the thread is next taken, and at ``max_failures`` the goal is
    paused with the reason instead of being run again for ever."""
    code = (
        "from taskloom.goals.continuation import continuation_tick\n"
        "items = continuation_tick(tl, lambda g: os._exit(137), idle_s=0, max_failures=3)\n"
        "print([(i.ran, i.paused) for i in items])\n"
    )
    outputs = []
    for _ in range(4):
        run = _in_another_process(db_url, code)
        outputs.append((run.returncode, run.stdout.strip()))
    assert outputs == [(137, "")] * 3 + [(0, "[(False, True)]")], outputs
    with taskloom.connect(db_url) as tl:
        goal = tl.goal("t").get()["goal"]
        assert goal["status"] == "paused" and "never ended" in goal["reason"]
        assert continuation_tick(tl, lambda g: TurnOutcome(), idle_s=0) == []
        tl.goal("t").resume()  # the host resumes: the count starts again
        assert [i.ran for i in continuation_tick(tl, lambda g: TurnOutcome(), idle_s=0)] == [True]


def test_a_goal_set_by_a_failing_turn_is_not_paused_for_its_failures(
    tl_fixed: Taskloom,
) -> None:
    handle = tl_fixed.goal("t")
    handle.set("old")

    def replace_and_fail(goal: Goal) -> TurnOutcome:
        handle.clear()
        handle.set("brand new host goal")
        raise RuntimeError("x")

    (item,) = continuation_tick(tl_fixed, replace_and_fail, idle_s=0, max_failures=1)
    assert item.ran and item.error == "x" and not item.paused
    assert _goal(tl_fixed)["status"] == "active"
    handle.set("rephrased by the model", host=False)

    def fail(goal: Goal) -> TurnOutcome:
        raise RuntimeError("y")

    (item,) = continuation_tick(tl_fixed, fail, idle_s=0, max_failures=1)
    assert item.paused and _goal(tl_fixed)["status"] == "paused"


def test_the_async_helpers_take_the_async_client(db_url: str) -> None:
    async def main() -> tuple[list[bool], StopReason]:
        atl = await taskloom.connect_async(db_url)
        try:
            await atl.goal("t").set("x")

            async def turn(goal: Goal) -> TurnOutcome:
                return TurnOutcome(1, 0.1)

            items = await acontinuation_tick(atl, turn, idle_s=0)
            loop = await arun_goal_loop(atl, "t", turn, max_turns=2)
            return [i.ran for i in items], loop.reason
        finally:
            await atl.close()

    assert asyncio.run(main()) == ([True], StopReason.MAX_TURNS)
    with pytest.raises(InvalidInput, match="connect_async"):
        asyncio.run(acontinuation_tick("not a client", lambda g: None))  # type: ignore[arg-type]


def test_scheduler_inputs_out_of_range_are_refused(tl_fixed: Taskloom) -> None:
    tl_fixed.goal("t").set("x")
    for idle in (1e12, 1e300):
        with pytest.raises(InvalidInput, match="idle_s must be a non-negative number"):
            continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=idle)
    (item,) = continuation_tick(
        tl_fixed,
        lambda g: TurnOutcome(1, 0.0, made_progress="no"),  # type: ignore[arg-type]
        idle_s=0,
    )
    assert item.error is not None and "made_progress is true or false" in item.error
    assert _goal(tl_fixed)["continuation_suppressed"] is False
    with pytest.raises(InvalidInput, match="true or false"):
        tl_fixed.goal("t").suppress("no")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="got '5'"):
        tl_fixed.goal("t").set_budget("5")  # type: ignore[arg-type]


def test_the_entry_points_take_a_client_or_its_runtime_and_refuse_anything_else(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    tl_fixed.goal("t").set("x")
    clock.advance(120)
    items = continuation_tick(tl_fixed.runtime, lambda g: TurnOutcome(), idle_s=60)
    assert [(i.thread_id, i.ran) for i in items] == [("t", True)]
    assert asyncio.run(arun_goal_loop(tl_fixed.aio, "t", _async_turn, max_turns=1)).turns == 1
    for wrong in (None, "sqlite:///x.db", tl_fixed.store):
        with pytest.raises(InvalidInput, match=r"a client from taskloom\.connect"):
            run_goal_loop(wrong, "t", lambda g: TurnOutcome())  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match=r"a client from taskloom\.connect"):
            asyncio.run(acontinuation_tick(wrong, _async_turn))  # type: ignore[arg-type]


async def _async_turn(goal: Goal) -> TurnOutcome:
    return TurnOutcome()


@pytest.mark.parametrize("loop", ["sync", "async"])
def test_a_loop_turn_that_succeeds_ends_the_failures_in_a_row(db_url: str, loop: str) -> None:
    """A scheduler turn that killed its process, then a loop turn that went well, then
    another killed turn: the loop's turn kept the count it found, so with max_failures=2
    the goal was paused as if the two crashes had come in a row."""
    crash = (
        "from taskloom.goals.continuation import continuation_tick\n"
        "items = continuation_tick(tl, lambda g: os._exit(137), idle_s=0, max_failures=2)\n"
        "print([(i.ran, i.paused) for i in items])\n"
    )
    assert _in_another_process(db_url, crash).returncode == 137
    with taskloom.connect(db_url) as tl:
        if loop == "sync":
            result = run_goal_loop(tl, "t", lambda g: TurnOutcome(), max_turns=1)
        else:
            result = asyncio.run(arun_goal_loop(tl, "t", _async_turn, max_turns=1))
        assert result.reason is StopReason.MAX_TURNS and result.turns == 1
    assert _in_another_process(db_url, crash).returncode == 137
    with taskloom.connect(db_url) as tl:
        items = continuation_tick(tl, lambda g: TurnOutcome(), idle_s=0, max_failures=2)
        assert [(i.ran, i.paused) for i in items] == [(True, False)]
        assert _goal(tl)["status"] == "active"


@pytest.mark.parametrize("user_leaves", ["during the turn", "after the turn", "noted only"])
@pytest.mark.parametrize("runner", ["tick", "loop"])
def test_a_user_who_speaks_during_an_idle_turn_is_not_overruled_by_it(
    tl_fixed: Taskloom, clock: FakeClock, user_leaves: str, runner: str
) -> None:
    """A scheduler turn without progress, ending after a user spoke on the thread, suppressed
    the goal: the user's message lifted nothing, and no scheduler continued it afterwards."""
    tl_fixed.goal("t").set("x")
    clock.advance(120)
    stack = contextlib.ExitStack()

    def turn(goal: Goal) -> TurnOutcome:
        if user_leaves == "during the turn":
            with user_turn(tl_fixed, "t"):
                pass
        elif user_leaves == "noted only":  # a host that records the message, holding nothing
            note_user_turn(tl_fixed, "t")
        else:
            stack.enter_context(user_turn(tl_fixed, "t"))
        return TurnOutcome(made_progress=False)

    with stack:
        if runner == "tick":
            assert [i.ran for i in continuation_tick(tl_fixed, turn, idle_s=60)] == [True]
        else:
            result = run_goal_loop(tl_fixed, "t", turn, max_turns=1, max_no_progress=1)
            assert result.reason is StopReason.MAX_TURNS
    assert not _goal(tl_fixed)["continuation_suppressed"]
    clock.advance(120)
    assert [i.ran for i in continuation_tick(tl_fixed, lambda g: TurnOutcome(), idle_s=60)] == [
        True
    ]
