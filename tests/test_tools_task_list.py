"""The task list tools (TaskCreate, TaskUpdate, TaskGet, TaskList) over the thread's board, on
every backend: their shapes, short stable ids, dependencies, and one list shared by every agent
bound to the thread."""

from __future__ import annotations

import json
from typing import Any

from taskloom.client import Taskloom
from taskloom.domain.events import TODO_CHANGE
from taskloom.tools import ToolContext, ToolResult

CTX = ToolContext(thread_id="t", agent_id="agent-a")


def call(tl: Taskloom, name: str, args: dict[str, Any], ctx: ToolContext = CTX) -> ToolResult:
    return tl.tools.dispatch(name, args, ctx)


def ok(tl: Taskloom, name: str, args: dict[str, Any], ctx: ToolContext = CTX) -> Any:
    result = call(tl, name, args, ctx)
    assert not result.is_error, result.content
    assert json.loads(result.content) == result.data  # the model reads what the host gets
    return result.data


def create(tl: Taskloom, subject: str, **more: Any) -> str:
    task = ok(tl, "TaskCreate", {"subject": subject, "description": f"do {subject}", **more})
    assert task == {"task": {"id": task["task"]["id"], "subject": subject}}
    return str(task["task"]["id"])


def test_tasks_get_short_ids_in_order_never_reused(tl: Taskloom) -> None:
    assert [create(tl, s) for s in ("Plan", "Build", "Ship")] == ["1", "2", "3"]
    ok(tl, "TaskUpdate", {"taskId": "3", "status": "deleted"})
    assert create(tl, "Announce") == "4"
    assert ok(tl, "TaskList", {}) == {
        "tasks": [
            {"id": "1", "subject": "Plan", "status": "pending", "blockedBy": []},
            {"id": "2", "subject": "Build", "status": "pending", "blockedBy": []},
            {"id": "4", "subject": "Announce", "status": "pending", "blockedBy": []},
        ]
    }
    # the same board and events as the todo tool
    cards = tl.board("t").list()["cards"]
    assert [(c["number"], c["title"], c["objective"]) for c in cards] == [
        (1, "Plan", "do Plan"),
        (2, "Build", "do Build"),
        (4, "Announce", "do Announce"),
    ]
    with tl.store.read() as tx:
        assert {e.type for e in tx.events_after(0, thread_id="t")} == {TODO_CHANGE}


def test_a_task_starts_once_the_tasks_it_is_blocked_by_are_completed(tl: Taskloom) -> None:
    plan, build, ship = (create(tl, s) for s in ("Plan", "Build", "Ship"))
    ok(tl, "TaskUpdate", {"taskId": build, "addBlockedBy": [plan]})
    ok(tl, "TaskUpdate", {"taskId": build, "addBlocks": [ship]})
    listed = {t["id"]: t["blockedBy"] for t in ok(tl, "TaskList", {})["tasks"]}
    assert listed == {plan: [], build: [plan], ship: [build]}
    refused = call(tl, "TaskUpdate", {"taskId": build, "status": "in_progress"})
    assert refused.is_error and "cannot start yet: it comes after 'Plan'" in refused.content
    done = ok(tl, "TaskUpdate", {"taskId": plan, "status": "completed"})
    assert done == {
        "success": True,
        "taskId": plan,
        "updatedFields": ["status"],
        "statusChange": {"from": "pending", "to": "completed"},
    }
    ok(tl, "TaskUpdate", {"taskId": build, "status": "in_progress"})
    listed = {t["id"]: t["blockedBy"] for t in ok(tl, "TaskList", {})["tasks"]}
    assert listed == {plan: [], build: [], ship: [build]}  # only unfinished ones block
    cycle = call(tl, "TaskUpdate", {"taskId": plan, "addBlockedBy": [ship]})
    assert cycle.is_error and "that would make a cycle" in cycle.content


def test_task_get_shows_a_task_whole(tl: Taskloom) -> None:
    plan, build = create(tl, "Plan"), create(tl, "Build", activeForm="Building")
    ok(tl, "TaskUpdate", {"taskId": build, "addBlockedBy": [plan], "owner": "agent-b"})
    ok(tl, "TaskUpdate", {"taskId": build, "metadata": {"pr": 12, "team": "core"}})
    ok(tl, "TaskUpdate", {"taskId": build, "metadata": {"team": None, "files": ["a.py"]}})
    assert ok(tl, "TaskGet", {"taskId": build}) == {
        "task": {
            "id": build,
            "subject": "Build",
            "description": "do Build",
            "status": "pending",
            "blocks": [],
            "blockedBy": [plan],
            "activeForm": "Building",
            "owner": "agent-b",
            "metadata": {"pr": 12, "files": ["a.py"]},
        }
    }
    assert ok(tl, "TaskGet", {"taskId": plan})["task"]["blocks"] == [build]
    missing = call(tl, "TaskGet", {"taskId": "99"})
    assert missing.is_error and "task '99' not found" in missing.content


def test_deleting_a_task_frees_the_tasks_that_waited_on_it(tl: Taskloom) -> None:
    plan, build = create(tl, "Plan"), create(tl, "Build")
    ok(tl, "TaskUpdate", {"taskId": build, "addBlockedBy": [plan]})
    ok(tl, "TaskUpdate", {"taskId": plan, "status": "deleted"})
    assert ok(tl, "TaskList", {})["tasks"] == [
        {"id": build, "subject": "Build", "status": "pending", "blockedBy": []}
    ]


def test_agents_bound_to_one_thread_share_one_list(tl: Taskloom) -> None:
    other_agent = ToolContext(thread_id="t", agent_id="agent-b")
    other_thread = ToolContext(thread_id="elsewhere", agent_id="agent-a")
    task = create(tl, "Shared")
    ok(tl, "TaskUpdate", {"taskId": task, "status": "in_progress", "owner": "agent-b"}, other_agent)
    assert ok(tl, "TaskList", {})["tasks"] == [
        {
            "id": task,
            "subject": "Shared",
            "status": "in_progress",
            "owner": "agent-b",
            "blockedBy": [],
        }
    ]
    assert ok(tl, "TaskList", {}, other_thread) == {"tasks": []}
    assert call(tl, "TaskList", {}, ToolContext()).is_error  # no thread bound, no list


def test_a_plan_waiting_for_a_person_stays_theirs(tl: Taskloom) -> None:
    card = tl.board("t").add("Deploy", approval_mode="required")["card"]
    listed = ok(tl, "TaskList", {})["tasks"]
    assert listed == [
        {
            "id": "1",
            "subject": "Deploy",
            "status": "pending",
            "blockedBy": [],
            "note": "awaiting a person's approval: a person starts it",
        }
    ]
    refused = call(tl, "TaskUpdate", {"taskId": "1", "status": "in_progress"})
    assert refused.is_error and "waiting for a person to approve its plan" in refused.content
    assert ok(tl, "TaskUpdate", {"taskId": card["id"], "status": "pending"})["success"]
    assert tl.board("t").list()["cards"][0]["status"] == "awaiting_approval"
