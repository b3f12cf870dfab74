"""The ``--json`` output a script reads: the same key for the same thing in every command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskloom.cli import main


def as_json(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> Any:
    assert main([*args, "--json"]) == code, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_every_task_object_has_id_status_and_state(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tasks add``, ``add-many``, ``wait`` and ``requeue`` printed a task without the
    ``state`` that ``list``, ``show``, ``next`` and ``done`` print (lease_expired apart from
    in_progress): ``jq .state`` read null from some commands and a status from others."""
    db = ["--db", sqlite_url]
    plan = tmp_path / "plan.jsonl"
    plan.write_text('{"title": "second", "max_attempts": 1}\n')
    added = as_json(capsys, "tasks", "add", "first", *db)
    many = as_json(capsys, "tasks", "add-many", str(plan), *db)
    claimed = as_json(capsys, "tasks", "next", "--agent", "w1", *db)
    done = as_json(capsys, "tasks", "done", claimed["id"], "--token", claimed["lease_token"], *db)
    waited = as_json(capsys, "tasks", "wait", claimed["id"], *db)
    second = as_json(capsys, "tasks", "next", "--agent", "w1", *db)
    token = second["lease_token"]
    as_json(capsys, "tasks", "fail", second["id"], "--token", token, "--error", "no", *db)
    requeued = as_json(capsys, "tasks", "requeue", "--all-dead", *db)
    listed = as_json(capsys, "tasks", "list", *db)
    shown = as_json(capsys, "tasks", "show", added["id"], *db)
    ready = as_json(capsys, "tasks", "ready", *db)["ready"]
    objects = [added, *many, claimed, done, waited, *requeued, *listed, shown, *ready]
    for task in objects:
        assert {"id", "title", "status", "state", "created_at"} <= set(task), task
    assert added["state"] == "ready" and waited["state"] == "completed"
    assert added["id"] == claimed["id"] == waited["id"]


def test_a_work_line_names_its_task_id_as_every_task_object_does(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tasks work --json`` named it ``task_id`` only: ``jq -r .id`` read null."""
    added = as_json(capsys, "tasks", "add", "echo", "--db", sqlite_url)
    args = ["tasks", "work", "--agent", "w1", "--until-empty", "--db", sqlite_url, "--json"]
    assert main([*args, "--", "cat"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["id"] == line["task_id"] == added["id"]
    assert line["outcome"] == "completed"
