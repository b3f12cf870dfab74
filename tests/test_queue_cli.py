"""The queue from a shell: add, claim with a token, finish, hooks, doctor."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from taskloom.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tasks_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    code, out, _ = run(capsys, "tasks", "add", "Review PR 12", "--priority", "5", *db, "--json")
    assert code == 0 and json.loads(out)["lease_token"] is None
    code, out, _ = run(capsys, "tasks", "next", "--agent", "coder", *db, "--json")
    claimed = json.loads(out)
    assert code == 0 and claimed["lease_token"] and claimed["claimed_by"] == "coder"
    code, _, err = run(capsys, "tasks", "done", claimed["id"], "--token", "wrong", *db)
    assert code == 1 and "Error: lease on task" in err
    code, out, _ = run(
        capsys,
        "tasks",
        "done",
        claimed["id"],
        "--token",
        claimed["lease_token"],
        "--result",
        "merged",
        *db,
    )
    assert code == 0 and "[completed]" in out
    code, out, _ = run(capsys, "tasks", "next", "--agent", "coder", *db)
    assert code == 3 and "no task ready" in out
    code, out, _ = run(capsys, "tasks", "stats", *db)
    assert json.loads(out)["completed"] == 1
    code, _, err = run(capsys, "tasks", "add", "x", "--payload", '{"password": "hunter2"}', *db)
    assert code == 1 and "looks like a secret" in err and "hunter2" not in err


def test_hooks_and_doctor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    run(capsys, "tasks", "add", "Fix <the> bug", *db)
    code, out, _ = run(capsys, "hook", "prompt", "--agent", "claude-1", *db)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and "Fix &lt;the&gt; bug" in context
    code, out, _ = run(capsys, "hook", "prompt", "--agent", "claude-1", *db)
    assert code == 0 and out == ""  # unchanged since last time: nothing to add
    code, out, _ = run(capsys, "hook", "session-start", "--agent", "claude-1", *db)
    assert "1 task(s) ready" in out
    code, out, _ = run(capsys, "doctor", *db)
    assert code == 0 and json.loads(out)["stuck"] == []


def test_add_many_from_a_file_or_standard_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    plan = tmp_path / "plan.jsonl"
    plan.write_text(
        '{"title": "lint", "priority": 1}\n\n{"title": "test", "dedup_key": "t"}\n'
        '{"title": "test again", "dedup_key": "t"}\n'
    )
    code, out, _ = run(capsys, "tasks", "add-many", str(plan), *db)
    assert code == 0 and out.strip().endswith("2 added, 1 already queued")
    monkeypatch.setattr("sys.stdin", io.StringIO('[{"title": "docs"}, {"title": "lint"}]'))
    code, out, _ = run(capsys, "tasks", "add-many", "-", *db, "--json")
    assert code == 0 and [a["added"] for a in json.loads(out)] == [True, True]
    plan.write_text('{"title": "fine"}\n{"title": "bad", "priority": "high"}\n')
    code, _, err = run(capsys, "tasks", "add-many", str(plan), *db)
    assert code == 1 and "task 2: 'priority' must be a whole number" in err
    plan.write_text('{"title": "fine"}\nnot json\n')
    code, _, err = run(capsys, "tasks", "add-many", str(plan), *db)
    assert code == 1 and "line 2 is not JSON" in err
    code, _, err = run(capsys, "tasks", "add-many", str(tmp_path / "missing.jsonl"), *db)
    assert code == 1 and "cannot read" in err
    code, out, _ = run(capsys, "tasks", "stats", *db)
    assert json.loads(out)["ready"] == 4  # nothing from the rejected files
