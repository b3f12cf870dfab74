"""Counts in the queue's texts read as words do: ``1 task``, ``2 tasks`` (never
``task(s)``), in the ``task_ready`` tool, the session-start hook and the API's refusals."""

from __future__ import annotations

import pytest

import taskloom
from taskloom.cli import main
from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.domain.text import counted, plural
from taskloom.tools.registry import ToolContext


def test_plural_and_counted() -> None:
    assert (plural(1, "field"), plural(0, "field"), plural(2, "field")) == (
        "field",
        "fields",
        "fields",
    )
    assert (counted(1, "task"), counted(1234, "task")) == ("1 task", "1,234 tasks")
    assert (counted(1, "process"), counted(2, "process")) == ("1 process", "2 processes")


def test_the_ready_tool_says_one_task_and_two_tasks(tl: Taskloom) -> None:
    ctx = ToolContext(agent_id="coder-1")
    first, _ = tl.queue.add("first")
    tl.queue.add("after", depends_on=[first.id])
    one = tl.tools.dispatch("task_ready", {"explain": True}, ctx).content
    assert one.startswith("1 task in the shared queue can run now for you;")
    assert "\n1 task cannot run now:" in one and "(s)" not in one
    tl.queue.add("second")
    tl.queue.add("after too", depends_on=[first.id])
    two = tl.tools.dispatch("task_ready", {"explain": True, "limit": 1}, ctx).content
    assert two.startswith("2 tasks in the shared queue can run now for you;")
    assert "More than 1 task cannot run now; the 1 most urgent" in two and "(s)" not in two


@pytest.mark.parametrize(("n", "said"), [(0, "no tasks"), (1, "1 task"), (2, "2 tasks")])
def test_the_session_start_hook_counts_in_words(
    db_url: str, capsys: pytest.CaptureFixture[str], n: int, said: str
) -> None:
    with taskloom.connect(db_url) as tl:
        tl.queue.add_many([{"title": f"t{i}"} for i in range(n)])
    assert main(["hook", "session-start", "--agent", "a", "--db", db_url]) == 0
    assert capsys.readouterr().out == f"taskloom: {said} ready in the shared queue for a.\n"


def test_an_unknown_card_field_is_named_in_the_singular_and_plural(tl: Taskloom) -> None:
    board = tl.board("t")
    with pytest.raises(InvalidInput, match=r"^unknown card field: colour$"):
        board.add("x", colour="red")
    with pytest.raises(InvalidInput, match=r"^unknown card fields: colour, size$"):
        board.add("x", colour="red", size=3)
