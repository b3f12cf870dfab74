"""``taskloom goal`` and time budgets: the CLI shows, sets and removes a goal's time budget,
and ``goal resume`` refuses a budget-limited goal instead of reporting success."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import taskloom
from taskloom.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'g.db'}"


def _snap(db: str, thread: str = "T") -> dict[str, Any]:
    with taskloom.connect(db) as tl:
        return tl.goal(thread).get()


def _goal(db: str, thread: str = "T") -> dict[str, Any]:
    goal = _snap(db, thread)["goal"]
    assert goal is not None
    return goal


def _over_time(db: str, thread: str = "T") -> None:
    """QA's repro: 5 of 1000 tokens, 20 s against a 10 s time budget."""
    with taskloom.connect(db) as tl:
        goal = tl.goal(thread)
        gid = goal.set("obj", token_budget=1000)["goal"]["goal_id"]
        goal.set_budget(time_budget_s=10)
        goal.account_usage(gid, tokens=5, seconds=20)
    assert _goal(db, thread)["status"] == "budget_limited"


def _over_tokens(db: str, thread: str = "T") -> None:
    with taskloom.connect(db) as tl:
        goal = tl.goal(thread)
        gid = goal.set("obj", token_budget=10)["goal"]["goal_id"]
        goal.account_usage(gid, tokens=15, seconds=2.5)
    assert _goal(db, thread)["status"] == "budget_limited"


def _one_error_line(code: int, err: str) -> str:
    assert code == 1 and err.startswith("Error: ") and err.count("\n") == 1, err
    return err


# --- the header shows the time budget -----------------------------------------------------


def test_the_header_shows_time_used_against_the_time_budget(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _over_time(db)
    code, out, _ = run(capsys, "goal", "show", "T", "--db", db)
    assert code == 0 and out.splitlines()[0] == "Goal (budget_limited; 5/1000 tokens, 20/10 s)"
    code, out, _ = run(capsys, "goal", "budget", "T", "--remove", "--db", db)
    assert code == 0 and out.splitlines()[0] == "Goal (budget_limited; 5 tokens, 20/10 s)"
    code, out, _ = run(capsys, "goal", "set", "T", "obj", "--db", db)
    assert code == 0 and out.splitlines()[0] == "Goal (budget_limited; 5 tokens, 20/10 s)"
    assert "<objective>obj</objective>" in out  # the body is the one `goal_get` shows


@pytest.mark.parametrize(
    ("budgets", "header"),
    [
        ({}, "Goal (active; 0 tokens, no budget)"),
        ({"token_budget": 100}, "Goal (active; 0/100 tokens)"),
        ({"time_budget_s": 90.5}, "Goal (active; 0 tokens, 0/90.5 s)"),
    ],
)
def test_the_header_says_no_budget_only_when_there_is_none(
    db: str, capsys: pytest.CaptureFixture[str], budgets: dict[str, Any], header: str
) -> None:
    with taskloom.connect(db) as tl:
        tl.goal("T").set("obj", **budgets)
    code, out, _ = run(capsys, "goal", "show", "T", "--db", db)
    assert code == 0 and out.splitlines()[0] == header


# --- goal budget: --time and --remove-time --------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "header", "time_budget"),
    [
        (["--time", "60"], "Goal (active; 5/1000 tokens, 20/60 s)", 60),
        (["--remove-time"], "Goal (active; 5/1000 tokens)", None),
    ],
    ids=["raise", "remove"],
)
def test_budget_time_changes_only_the_time_budget_and_lifts_budget_limited(
    db: str,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    header: str,
    time_budget: int | None,
) -> None:
    _over_time(db)
    code, out, _ = run(capsys, "goal", "budget", "T", *flags, "--db", db)
    assert code == 0 and out.splitlines()[0] == header
    goal = _goal(db)
    assert (goal["status"], goal["time_budget_s"], goal["token_budget"]) == (
        "active",
        time_budget,
        1000,
    )


def test_budget_changes_both_budgets_at_once(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    _over_time(db)
    args = ("goal", "budget", "T", "2000", "--time", "30", "--db", db, "--json")
    code, out, _ = run(capsys, *args)
    goal = json.loads(out)["goal"]
    assert code == 0 and (goal["token_budget"], goal["time_budget_s"]) == (2000, 30)
    assert goal["status"] == "active" and goal["time_used_s"] == 20
    code, out, _ = run(capsys, "goal", "budget", "T", "--remove", "--remove-time", "--db", db)
    assert code == 0 and out.splitlines()[0] == "Goal (active; 5 tokens, no budget)"


def test_a_token_budget_alone_keeps_the_time_budget(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _over_time(db)
    code, out, _ = run(capsys, "goal", "budget", "T", "5000", "--db", db)
    assert code == 0 and out.splitlines()[0] == "Goal (budget_limited; 5/5000 tokens, 20/10 s)"
    assert _goal(db)["time_budget_s"] == 10


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (),
            "Error: give the new token budget (or --remove to remove it),"
            " or --time SECONDS (or --remove-time)\n",
        ),
        (("--time", "60", "--remove-time"), "Error: give --time or --remove-time, not both\n"),
        (("5", "--remove"), "Error: give a new token budget or --remove, not both\n"),
        (
            ("0",),  # the argument, not the library's name for it (token_budget)
            "Error: the token budget must be a positive integer up to 9223372036854775807"
            " (got 0)\n",
        ),
        (
            ("--time", "0"),
            "Error: --time must be a positive number of seconds up to 1e+09 (got 0.0)\n",
        ),
        (
            ("--time", "nan"),
            "Error: --time must be a positive number of seconds up to 1e+09 (got nan)\n",
        ),
        (
            ("--time", "-5"),
            "Error: --time must be a positive number of seconds up to 1e+09 (got -5.0)\n",
        ),
    ],
)
def test_budget_refuses_nothing_to_do_conflicts_and_bad_times(
    db: str, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    _over_time(db)
    before = _snap(db)
    code, out, err = run(capsys, "goal", "budget", "T", *args, "--db", db)
    assert _one_error_line(code, err) == message and out == ""
    assert _snap(db) == before  # nothing changed, not even the version


def test_budget_help_shows_the_time_options_and_an_example(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "goal", "budget", "--help")
    assert code == 0 and "--time" in out and "--remove-time" in out
    assert "Example: taskloom goal budget my-thread 500000 --time 3600" in out


# --- goal set --time ---------------------------------------------------------------------------


def test_set_takes_a_time_budget(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("goal", "set", "T", "Ship", "--budget", "100", "--time", "3600", "--db", db)
    code, out, _ = run(capsys, *args)
    assert code == 0 and out.splitlines()[0] == "Goal (active; 0/100 tokens, 0/3600 s)"
    assert _goal(db)["time_budget_s"] == 3600
    code, _, err = run(capsys, "goal", "set", "T", "Ship", "--time", "0", "--db", db)
    assert _one_error_line(code, err).startswith("Error: --time must be a positive number")
    assert _goal(db)["time_budget_s"] == 3600


# --- goal resume on a budget-limited goal -------------------------------------------------


def test_resume_refuses_a_goal_over_its_time_budget_and_says_what_lifts_it(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _over_time(db)
    before = _snap(db)
    code, out, err = run(capsys, "goal", "resume", "T", "--db", db)
    assert _one_error_line(code, err) == (
        "Error: the goal is out of budget (5/1000 tokens, 20/10 s), which resume does not"
        " lift; raise it with `taskloom goal budget T --time SECONDS` or remove it with"
        " --remove-time\n"
    )
    assert out == "" and _snap(db) == before
    assert run(capsys, "goal", "budget", "T", "--time", "60", "--db", db)[0] == 0
    assert _goal(db)["status"] == "active"  # what the error said lifts it does


def test_resume_refuses_a_goal_over_its_token_budget(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _over_tokens(db, "my thread")
    code, _, err = run(capsys, "goal", "resume", "my thread", "--db", db, "--json")
    assert _one_error_line(code, err) == (
        "Error: the goal is out of budget (15/10 tokens), which resume does not lift; raise it"
        " with `taskloom goal budget 'my thread' N` or remove it with --remove\n"
    )
    assert _goal(db, "my thread")["status"] == "budget_limited"


def test_resume_names_both_budgets_when_both_are_used_up(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with taskloom.connect(db) as tl:
        gid = tl.goal("T").set("obj", token_budget=10, time_budget_s=1)["goal"]["goal_id"]
        tl.goal("T").account_usage(gid, tokens=10, seconds=1)
    code, _, err = run(capsys, "goal", "resume", "T", "--db", db)
    assert _one_error_line(code, err).endswith(
        "`taskloom goal budget T N --time SECONDS` or remove it with --remove --remove-time\n"
    )


def test_resume_still_resumes_paused_and_blocked_goals_and_lifts_suppression(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with taskloom.connect(db) as tl:
        tl.goal("T").set("obj", token_budget=100)
    assert run(capsys, "goal", "pause", "T", "--db", db)[0] == 0
    assert run(capsys, "goal", "resume", "T", "--db", db)[0] == 0
    assert _goal(db)["status"] == "active"
    with taskloom.connect(db) as tl:
        tl.goal("T").block("needs a key")
        tl.goal("T").suppress()
    code, out, _ = run(capsys, "goal", "resume", "T", "--db", db)
    assert code == 0 and out.splitlines()[0] == "Goal (active; 0/100 tokens)"
    with taskloom.connect(db) as tl:
        tl.goal("T").suppress()
    assert run(capsys, "goal", "resume", "T", "--db", db)[0] == 0
    assert _goal(db)["continuation_suppressed"] is False


def test_pause_takes_a_reason_as_the_http_api_does(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with taskloom.connect(db) as tl:
        tl.goal("T").set("obj")
    assert run(capsys, "goal", "pause", "T", "--reason", "on hold till Monday", "--db", db)[0] == 0
    assert _goal(db)["status"] == "paused" and _goal(db)["reason"] == "on hold till Monday"
    assert run(capsys, "goal", "resume", "T", "--db", db)[0] == 0
    with taskloom.connect(db) as tl:
        tl.goal("T").block("needs the prod password")
    assert run(capsys, "goal", "pause", "T", "--db", db)[0] == 0
    assert _goal(db)["reason"] == "needs the prod password"


def test_resuming_a_paused_goal_over_budget_lifts_the_pause_and_shows_the_limit(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with taskloom.connect(db) as tl:
        gid = tl.goal("T").set("obj", time_budget_s=10)["goal"]["goal_id"]
        tl.goal("T").pause()
        tl.goal("T").account_usage(gid, seconds=12)
    code, out, _ = run(capsys, "goal", "resume", "T", "--db", db)
    assert code == 0 and out.splitlines()[0] == "Goal (budget_limited; 0 tokens, 12/10 s)"


def test_resume_still_refuses_a_complete_goal_and_a_thread_without_one(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with taskloom.connect(db) as tl:
        tl.goal("T").set("obj")
    assert run(capsys, "goal", "complete", "T", "--evidence", "done", "--db", db)[0] == 0
    code, _, err = run(capsys, "goal", "resume", "T", "--db", db)
    assert _one_error_line(code, err) == (
        "Error: a complete goal cannot be resumed; set a new objective with `taskloom goal set`\n"
    )
    code, _, err = run(capsys, "goal", "resume", "other", "--db", db)
    assert _one_error_line(code, err) == "Error: this thread has no goal: set one first\n"
