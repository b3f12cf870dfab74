"""An id that names nothing comes back cut in the error that says so: a 404 of the HTTP API
(over real HTTP on loopback), a tool's and the command line's "not found"."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest

from taskloom.cli import main
from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.tools.spec import ToolContext
from tests.test_server import live_server

__all__ = ["live_server"]

LONG = '"<x>' + "a" * 4996
"""A 5,000-character id, with a quote and angle brackets the JSON answer escapes as before."""
CUT = LONG[:60] + "…"


def test_a_5000_character_id_in_a_url_comes_back_cut_in_the_404(
    tl: Taskloom, live_server: str
) -> None:
    """A client asked for a task by a 5,000-character id and got the whole id back in the
    404's message, and the same for a card: the message now repeats its first 60
    characters and "…"."""
    tl.board("t").add("Deploy")
    path = quote(LONG, safe="")
    for method, route, body, said in (
        ("GET", f"/api/tasks/{path}", None, f"task '{CUT}' not found"),
        ("POST", f"/api/tasks/{path}/cancel", None, f"task '{CUT}' not found"),
        ("POST", f"/api/tasks/{path}/requeue", None, f"task '{CUT}' not found"),
        (
            "POST",
            f"/api/threads/t/cards/{path}/decision",
            {"approve": True},
            f"todo id '{CUT}' not found",
        ),
        (
            "POST",
            f"/api/threads/t/cards/{path}/status",
            {"status": "done"},
            f"todo id '{CUT}' not found",
        ),
    ):
        r = httpx.request(method, live_server + route, json=body, timeout=10)
        assert r.status_code == 404, route
        assert r.json() == {"error": "not_found", "message": said}, route
        assert len(r.content) < 200 and '\\"<x>' in r.text, route  # JSON escapes as before
    action = httpx.post(f"{live_server}/api/threads/t/goal/{path}", timeout=10)
    assert action.status_code == 400 and f"unknown goal action '{CUT}'" in action.json()["message"]
    assert len(action.content) < 250


def test_a_5000_character_id_is_cut_in_a_not_found_of_the_cli_and_the_tools(
    tl: Taskloom, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``taskloom tasks show`` and ``board status`` printed a 5,000-character id whole in
    their one-line error, and a model's tool call got it whole back as its error."""
    tl.board("t").add("Deploy")
    capsys.readouterr()
    assert main(["tasks", "show", LONG, "--db", db_url]) == 1
    assert capsys.readouterr().err == f"Error: task '{CUT}' not found\n"
    assert main(["board", "status", "t", LONG, "done", "--db", db_url]) == 1
    assert capsys.readouterr().err.startswith(f"Error: todo id '{CUT}' not found")
    ctx = ToolContext(thread_id="t", agent_id="boss")
    for tool, args in (
        ("TaskGet", {"taskId": LONG}),
        ("task_wait", {"task_id": LONG, "wait_s": 0}),
    ):
        result = tl.tools.dispatch(tool, args, ctx)
        assert result.is_error and CUT in result.content and LONG[:61] not in result.content
    with pytest.raises(InvalidInput) as unknown:
        tl.queue.add("After it", depends_on=[LONG])
    assert f"depends on task '{CUT}', which does not exist" in unknown.value.message
