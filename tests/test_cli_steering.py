"""Steering from the CLI: a budget is not removed by leaving its number out, a complete goal
is not "resumed", a card past approval cannot be made to need it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _goal(db: str) -> dict[str, object]:
    with taskloom.connect(db) as tl:
        goal = tl.goal("t").get()["goal"]
    assert goal is not None
    return goal


def test_goal_budget_needs_a_number_and_removing_it_needs_remove(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'g.db'}"
    assert run(capsys, "goal", "set", "t", "Ship", "--budget", "1000", "--db", db)[0] == 0
    code, _, err = run(capsys, "goal", "budget", "t", "--db", db)
    assert code == 1 and err == (
        "Error: give the new token budget (or --remove to remove it),"
        " or --time SECONDS (or --remove-time)\n"
    )
    assert _goal(db)["token_budget"] == 1000  # the safety limit is still there
    code, _, err = run(capsys, "goal", "budget", "t", "5", "--remove", "--db", db)
    assert code == 1 and err.startswith("Error: give a new token budget or --remove, not both")
    assert run(capsys, "goal", "budget", "t", "2000", "--db", db)[0] == 0
    assert _goal(db)["token_budget"] == 2000
    assert run(capsys, "goal", "budget", "t", "--remove", "--db", db)[0] == 0
    assert _goal(db)["token_budget"] is None


def test_resuming_a_complete_goal_is_an_error_and_a_users_turn_on_it_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'g.db'}"
    assert run(capsys, "goal", "set", "t", "Ship", "--db", db)[0] == 0
    assert run(capsys, "goal", "complete", "t", "--db", db)[0] == 0
    code, _, err = run(capsys, "goal", "resume", "t", "--db", db)
    assert code == 1 and err == (
        "Error: a complete goal cannot be resumed; set a new objective with `taskloom goal set`\n"
    )
    with taskloom.connect(db) as tl:
        assert tl.goal("t").user_turn()["goal"]["status"] == "complete"
    assert run(capsys, "goal", "pause", "t", "--db", db)[0] == 1  # as pause always said
    assert _goal(db)["status"] == "complete"


@pytest.mark.parametrize(
    "status", ["in_progress", "started", "done", "blocked", "ready", "todo", "pending"]
)
def test_a_card_that_needs_approval_cannot_start_past_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], status: str
) -> None:
    db = f"sqlite:///{tmp_path / 'b.db'}"
    args = ("board", "add", "t", "Deploy", "--needs-approval", "--status", status, "--db", db)
    code, _, err = run(capsys, *args)
    assert code == 1 and err.startswith("Error: --needs-approval makes the card wait")
    assert err.count("\n") == 1 and not (tmp_path / "b.db").exists()


@pytest.mark.parametrize(
    ("given", "expected"),
    [([], "awaiting_approval"), (["--status", "awaiting_approval"], "awaiting_approval")],
)
def test_a_card_that_needs_approval_waits_for_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: list[str], expected: str
) -> None:
    db = f"sqlite:///{tmp_path / 'b.db'}"
    args = ("board", "add", "t", "Deploy", "--needs-approval", *given, "--db", db, "--json")
    code, out, _ = run(capsys, *args)
    card = json.loads(out)["card"]
    assert code == 0 and (card["status"], card["approval_mode"]) == (expected, "required")
