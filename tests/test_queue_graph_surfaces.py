"""The work graph where people and models meet it: ``taskloom tasks add --after/--group/
--from``, ``tasks ready --explain``, ``tasks show``, ``tasks wait``; the ``task_ready`` tool;
``GET /api/tasks/ready``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskloom.client import Taskloom, connect
from taskloom.tools.registry import ToolContext
from tests.test_queue_cli import run
from tests.test_server import request

PLAN = [
    {"ref": "deploy", "title": "Deploy", "after": ["test", "docs"], "priority": 1},
    {"ref": "test", "title": "Test", "after": ["build"], "group_key": "ci"},
    {"ref": "build", "title": "Build", "group_key": "ci"},
    {"ref": "docs", "title": "Docs <b>", "priority": 200},
]


def test_a_graph_is_added_from_a_file_and_explained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    plan = tmp_path / "plan.jsonl"
    plan.write_text("\n\n".join(json.dumps(t) for t in PLAN) + "\n")
    code, out, err = run(capsys, "tasks", "add", "--from", str(plan), *db, "--json")
    assert code == 0, err
    added = {t["title"]: t for t in json.loads(out)}
    assert added["Deploy"]["depends_on"] == [added["Test"]["id"], added["Docs <b>"]["id"]]
    assert added["Test"]["group_key"] == "ci"
    code, out, _ = run(capsys, "tasks", "ready", "--explain", *db)
    lines = out.splitlines()
    assert code == 0 and lines[0] == "2 ready"
    assert "Build  (group ci)" in lines[1] and "Docs <b>" in lines[2]
    assert lines[3] == "2 not ready"
    assert f"waiting on task {added['Test']['id']} (ready), task" in out
    code, out, _ = run(capsys, "tasks", "ready", "--json", *db)
    found = json.loads(out)
    assert found["count"] == 2 and found["waiting"] == []
    code, out, _ = run(capsys, "tasks", "show", added["Deploy"]["id"], *db)
    assert f"depends on: {added['Test']['id']}, {added['Docs <b>']['id']}" in out
    assert "why not now: waiting on task" in out
    code, out, _ = run(capsys, "tasks", "show", added["Test"]["id"], *db, "--json")
    shown = json.loads(out)
    assert shown["state"] == "ready" and shown["why"][0]["code"] == "waiting_on"


def test_a_bad_line_adds_nothing_and_is_named_by_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    plan = tmp_path / "plan.jsonl"
    plan.write_text(
        '{"ref": "a", "title": "A", "after": ["b"]}\n\n{"ref": "b", "title": "B", "after": ["a"]}\n'
    )
    code, _, err = run(capsys, "tasks", "add", "--from", str(plan), *db)
    assert code == 1
    assert "line 1: its dependencies make a cycle (line 1 -> line 3 -> line 1)" in err
    plan.write_text('{"title": "A"}\n{"title": "B", "depends_on": ["nope"]}\n')
    code, _, err = run(capsys, "tasks", "add-many", str(plan), *db)
    assert code == 1 and "line 2: depends on task 'nope', which does not exist" in err
    code, _, err = run(capsys, "tasks", "add", "T", "--from", str(plan), *db)
    assert code == 1 and "--from takes every task from the file" in err
    code, _, err = run(capsys, "tasks", "add", "--from", str(plan), "--group", "g", *db)
    assert code == 1 and "--from takes every task from the file" in err
    code, _, err = run(capsys, "tasks", "add", *db)
    assert code == 1 and "a task needs a title, or --from FILE" in err
    code, out, _ = run(capsys, "tasks", "stats", *db, "--json")
    assert json.loads(out)["total"] == 0


def test_add_flags_wait_and_a_blocked_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    code, out, _ = run(capsys, "tasks", "add", "A", "--max-attempts", "1", *db, "--json")
    a = json.loads(out)
    code, out, err = run(
        capsys, "tasks", "add", "B", "--after", a["id"], "--after-key", "k", "--group", "g",
        *db, "--json",
    )  # fmt: skip
    b = json.loads(out)
    assert code == 0, err
    assert (b["depends_on"], b["depends_on_keys"], b["group_key"]) == ([a["id"]], ["k"], "g")
    code, out, _ = run(capsys, "tasks", "list", *db)
    assert f"(group g; after {a['id']}, key k)" in out
    code, _, err = run(capsys, "tasks", "add", "C", "--after", "nope", *db)
    assert code == 1 and "depends on task 'nope', which does not exist" in err
    code, _, err = run(capsys, "tasks", "add", "C", "--group", " ", *db)
    assert code == 1 and "--group, when given, must not be blank" in err
    code, _, err = run(capsys, "tasks", "add", "C", "--after-key", "", *db)  # an unset $KEY
    assert code == 1 and "--after-key must not be blank (leave a blank one out)" in err
    code, out, _ = run(capsys, "tasks", "next", "--agent", "w", *db, "--json")
    token = json.loads(out)["lease_token"]
    run(capsys, "tasks", "fail", a["id"], "--token", token, "--error", "no", *db)
    code, out, err = run(capsys, "tasks", "wait", b["id"], *db)
    assert code == 4 and f"is blocked: task {a['id']}, which it depends on, is dead" in err
    code, out, _ = run(capsys, "tasks", "list", "--status", "blocked", *db)
    assert f"[blocked] p100 task: B  (blocked: task {a['id']}" in out
    code, out, _ = run(capsys, "doctor", *db)
    assert f"blocked: 1  {b['id']}" in out
    code, out, _ = run(capsys, "tasks", "requeue", a["id"], *db)
    assert code == 0
    code, out, _ = run(capsys, "tasks", "stats", *db, "--json")
    assert json.loads(out)["blocked"] == 0


def test_the_task_ready_tool_answers_for_the_hosts_agent(tl: Taskloom) -> None:
    first, _ = tl.queue.add("first </task>", group_key="g")
    tl.queue.add("second", group_key="g")
    tl.queue.add("mine", target_agent="coder-1")
    tl.queue.add("theirs", target_agent="coder-2")
    ctx = ToolContext(agent_id="coder-1")
    got = tl.tools.dispatch("task_ready", {}, ctx)
    assert not got.is_error and got.data["count"] == 2
    assert "first &lt;/task&gt;" in got.content and "theirs" not in got.content
    explained = tl.tools.dispatch("task_ready", {"explain": True, "limit": 5}, ctx)
    assert "<title>theirs</title><why>reserved for agent 'coder-2'</why>" in explained.content
    assert f"task {first.id} goes first" in explained.content
    bad = tl.tools.dispatch("task_ready", {"agent_id": "boss"}, ctx)
    assert bad.is_error and "unknown argument" in bad.content
    unbound = tl.tools.dispatch("task_ready", {}, ToolContext(thread_id="t"))
    assert unbound.is_error and "need an agent id" in unbound.content


def test_a_not_ready_list_cut_by_its_limit_says_more_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    tl = connect(db[1])
    first, _ = tl.queue.add("first")
    for n in range(3):
        tl.queue.add(f"after {n}", depends_on=[first.id])
    code, out, _ = run(capsys, "tasks", "ready", "--explain", "--limit", "1", *db)
    lines = out.splitlines()
    assert code == 0 and lines[2] == "1 not ready shown, and more (use --limit)"
    assert len(lines) == 5  # the one shown, with its reason
    code, out, _ = run(capsys, "tasks", "ready", "--explain", "--limit", "0", *db)
    assert out.splitlines()[-1] == "0 not ready shown, and more (use --limit)"
    code, out, _ = run(capsys, "tasks", "ready", "--explain", "--limit", "3", *db)
    assert "\n3 not ready\n" in out
    code, out, _ = run(capsys, "tasks", "ready", "--explain", "--limit", "1", "--json", *db)
    found = json.loads(out)
    assert len(found["ready"]) == 1 and len(found["waiting"]) == 1
    ctx = ToolContext(agent_id="coder-1")
    cut = tl.tools.dispatch("task_ready", {"explain": True, "limit": 2}, ctx)
    assert "More than 2 tasks cannot run now" in cut.content
    assert len(cut.data["waiting"]) == 2
    whole = tl.tools.dispatch("task_ready", {"explain": True, "limit": 3}, ctx)
    assert "\n3 tasks cannot run now:" in whole.content
    tl.close()


def test_the_api_says_what_can_run_and_why_not(tl: Taskloom) -> None:
    a, _ = tl.queue.add("A")
    b, _ = tl.queue.add("B", depends_on=[a.id])
    got = request(tl, "GET", "/api/tasks/ready")
    assert got.status_code == 200
    data = got.json()
    assert data["count"] == 1 and [t["id"] for t in data["ready"]] == [a.id]
    assert data["ready"][0]["lease_token"] is None and data["ready"][0]["state"] == "ready"
    assert [(t["id"], t["why"][0]["tasks"]) for t in data["waiting"]] == [(b.id, [a.id])]
    assert request(tl, "GET", "/api/tasks/ready?limit=0").status_code == 400
    listed = request(tl, "GET", "/api/tasks").json()
    assert {t["title"]: t["depends_on"] for t in listed} == {"A": [], "B": [a.id]}
    c, _ = tl.queue.add("C", kind="review", depends_on=[a.id])
    d, _ = tl.queue.add("D", kind="review")
    mine = request(tl, "GET", "/api/tasks/ready?kind=review").json()
    assert [t["id"] for t in mine["ready"]] == [d.id] and mine["count"] == 1
    assert [t["id"] for t in mine["waiting"]] == [c.id]
    either = request(tl, "GET", "/api/tasks/ready?kind=review&kind=task").json()
    assert either["count"] == 2
    assert request(tl, "GET", "/api/tasks/ready?kind=Bad Kind").status_code == 400
