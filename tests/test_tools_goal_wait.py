"""``goal_wait`` over dispatch, on every backend: a supervisor waits while another agent (here
another connection to the database) drives the thread's goal to its end."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

import taskloom
from taskloom.client import Taskloom
from taskloom.domain.goals import Goal
from taskloom.goals.continuation import TurnOutcome, note_user_turn, run_goal_loop
from taskloom.tools.registry import ToolContext, ToolResult

BOSS = ToolContext(thread_id="release", agent_id="boss")


def wait(tl: Taskloom, wait_s: float, ctx: ToolContext = BOSS) -> ToolResult:
    return tl.tools.dispatch("goal_wait", {"wait_s": wait_s}, ctx)


def _out_of_budget(tl: Taskloom) -> None:
    goal = tl.goal("release")
    goal.set_budget(100)
    goal.account_usage(goal.get()["goal"]["goal_id"], tokens=150)


ENDS: dict[str, Callable[[Taskloom], object]] = {
    "complete": lambda tl: tl.goal("release").complete("tagged v2.0.0"),
    "blocked": lambda tl: tl.goal("release").block("needs the signing key"),
    "paused": lambda tl: tl.goal("release").pause(),
    "budget_limited": _out_of_budget,
    "cleared": lambda tl: tl.goal("release").clear(),
}


@pytest.mark.parametrize("end", list(ENDS))
def test_a_goal_that_has_ended_answers_at_once(tl: Taskloom, end: str) -> None:
    """Waiting up to the longest wait on a goal that is no longer active answers at once,
    with the goal as ``goal_get`` shows it."""
    tl.goal("release").set("Ship v2.0")
    ENDS[end](tl)
    result = wait(tl, 300)
    shown = tl.tools.dispatch("goal_get", {}, BOSS)
    assert not result.is_error and result.data["ended"] is True
    assert result.content.startswith("The goal has ended: ")
    assert result.content.endswith(shown.content)  # goal_get's answer, after the first line
    if end == "cleared":
        assert result.data["goal"] is None and "this thread has no goal" in result.content
    else:
        assert result.data["goal"]["status"] == end
        assert result.content.startswith(f"The goal has ended: it is {end}.\n")


def _wait_while(db_url: str, act: Callable[[Taskloom], None]) -> tuple[ToolResult, bool]:
    """A supervisor waits on the goal of thread ``release``; once it has looked and found it
    active, ``act`` runs on the worker's own connection. The wait's answer, and whether the
    wait was still running a minute after ``act``."""
    looked = threading.Event()

    def still_wanted() -> bool:  # asked after each look that found the goal active
        looked.set()
        return False

    answers: list[ToolResult] = []
    with taskloom.connect(db_url) as supervisor, taskloom.connect(db_url) as worker:
        supervisor.goal("release").set("Ship v2.0")
        ctx = ToolContext(thread_id="release", agent_id="boss", cancelled=still_wanted)
        waiter = threading.Thread(target=lambda: answers.append(wait(supervisor, 120, ctx)))
        waiter.start()
        assert looked.wait(60), "the wait never looked at the goal"
        act(worker)
        waiter.join(60)
        running = waiter.is_alive()
    [result] = answers
    return result, running


def test_the_wait_ends_when_another_connection_completes_the_goal(db_url: str) -> None:
    """The supervisor looks, finds the goal active and waits; the worker's connection
    completes it; the wait ends with the completed goal and its evidence."""
    result, _ = _wait_while(
        db_url, lambda worker: worker.goal("release").complete("all 40 checks green", host=False)
    )
    assert not result.is_error and result.data["ended"] is True
    assert result.data["goal"]["status"] == "complete"
    assert result.content.startswith("The goal has ended: it is complete.\n")
    assert "<evidence>all 40 checks green</evidence>" in result.content


def test_the_wait_runs_out_cleanly(tl: Taskloom) -> None:
    """An active goal at the end of ``wait_s`` is an answer, not an error: the goal as it
    is, and what to call to wait on."""
    tl.goal("release").set("Ship v2.0")
    result = wait(tl, 0.2)
    assert not result.is_error and result.data["ended"] is False
    assert result.content.startswith(
        "The goal is still active after 0.2 s: call goal_wait again to wait on.\n"
    )
    assert result.data["goal"]["status"] == "active"
    assert wait(tl, 0).data["ended"] is False  # no wait at all: one look


def test_a_caller_that_gives_up_stops_the_wait(tl: Taskloom) -> None:
    """``ToolContext.cancelled`` (an MCP task cancelled) ends the longest wait at its next
    look, the goal still active."""
    tl.goal("release").set("Ship v2.0")
    asked: list[bool] = []

    def cancelled() -> bool:
        asked.append(True)
        return len(asked) >= 2

    result = wait(tl, 300, ToolContext(thread_id="release", cancelled=cancelled))
    assert result.data["ended"] is False and len(asked) == 2


def test_the_wait_is_bounded_and_needs_a_thread(tl: Taskloom) -> None:
    too_long = wait(tl, 301)
    no_thread = wait(tl, 1, ToolContext(agent_id="boss"))
    assert too_long.is_error and "wait_s" in too_long.content
    assert no_thread.is_error
    spec = tl.tools.registry.get("goal_wait")
    assert spec is not None and spec.slow is not None and spec.outcome is None
    assert "goal_wait" in tl.tools.names(profile="planner")
    assert "goal_wait" not in tl.tools.names()  # not in the default profile


def _no_progress(goal: Goal) -> TurnOutcome:
    return TurnOutcome(tokens_used=10, made_progress=False)


def test_a_goal_whose_continuation_is_suppressed_answers_at_once(tl: Taskloom) -> None:
    """The loop made no progress twice and suppressed the goal's continuation: it stays
    active, but nothing runs it until a user turn, so the supervisor's longest wait answers at
    its first look and says why, instead of waiting out its 300 s on a goal that cannot
    move. A user turn lifts the suppression, and the wait waits again."""
    tl.goal("release").set("Ship v2.0")
    stopped = run_goal_loop(tl, "release", _no_progress, max_no_progress=2)
    assert stopped.reason == "no_progress"
    asked: list[bool] = []

    def cancelled() -> bool:  # asked only after a look that found the goal still moving
        asked.append(True)
        return True

    result = wait(tl, 300, ToolContext(thread_id="release", cancelled=cancelled))
    assert not asked, "the wait went on after finding the goal suppressed"
    assert not result.is_error and result.data["ended"] is True
    assert result.data["goal"]["status"] == "active"
    assert result.data["goal"]["continuation_suppressed"] is True
    assert result.content.startswith(
        "The goal has stopped: it is active, but its auto-continuation is suppressed"
    )
    assert "until a user turn or goal_resume lifts that" in result.content.splitlines()[0]
    assert result.content.endswith(tl.tools.dispatch("goal_get", {}, BOSS).content)
    note_user_turn(tl, "release")
    assert wait(tl, 0).data["ended"] is False


def test_the_wait_ends_when_another_connections_loop_suppresses_the_goal(db_url: str) -> None:
    """The supervisor is waiting when the worker's loop makes no progress and suppresses
    the goal: the wait ends with it, the goal still active."""

    def suppress(worker: Taskloom) -> None:
        assert run_goal_loop(worker, "release", _no_progress).reason == "no_progress"

    result, running = _wait_while(db_url, suppress)
    assert not running, "the wait went on after the goal was suppressed"
    assert result.data["ended"] is True
    assert result.content.startswith("The goal has stopped: ")
