"""Board dependencies through the real store, on every backend: a card comes after others
(``blocked_by``), starts only once they are done, never in a cycle; removing a card others
wait on takes force; the ready view says what can start now and why the rest cannot."""

from __future__ import annotations

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput, InvariantViolation
from taskloom.tools import ToolContext, ToolResult


def chain(tl: Taskloom, *titles: str, model: bool = False) -> list[str]:
    """Cards on thread ``t``, each after the one before it, added by the host (or by the
    model); their ids."""
    board = tl.board("t").as_model() if model else tl.board("t")
    ids: list[str] = []
    for title in titles:
        ids.append(board.add(title, blocked_by=ids[-1:])["card"]["id"])
    return ids


def test_a_card_starts_only_once_what_it_comes_after_is_done(tl: Taskloom) -> None:
    a, b = chain(tl, "Write the code", "Test it")
    board = tl.board("t")
    for start in (
        lambda: board.update_status(b, "in_progress"),
        lambda: board.claim_card(b, ["todo"]),
        lambda: board.as_model().edit(b, status="in_progress"),
    ):
        with pytest.raises(InvariantViolation) as refused:
            start()
        assert refused.value.message == (
            f"card 'Test it' ({b}) cannot start yet: it comes after 'Write the code' ({a}),"
            " todo; finish those first"
        )
    assert board.list()["version"] == 2  # nothing changed
    board.update_status(a, "done")
    assert board.update_status(b, "in_progress")["cards"][1]["status"] == "in_progress"


def test_a_long_cycle_is_named_by_its_ends_and_how_many_cards_between(tl: Taskloom) -> None:
    ids = chain(tl, *(f"C{i}" for i in range(40)))
    with pytest.raises(InvalidInput) as refused:
        tl.board("t").edit(ids[0], add_blocked_by=[ids[-1]])
    named = [f"'C{i}' ({ids[i]})" for i in (0, 39, 38, 37)]
    tail = [f"'C{i}' ({ids[i]})" for i in (3, 2, 1, 0)]
    assert refused.value.message == (
        f"that would make a cycle: {' after '.join(named)} after … 33 more … after"
        f" {' after '.join(tail)}; a card cannot wait on itself"
    )


def test_a_cycle_is_refused_with_the_cycle_named(tl: Taskloom) -> None:
    a, b, c = chain(tl, "A", "B", "C")
    board = tl.board("t")
    with pytest.raises(InvalidInput) as refused:
        board.edit(a, add_blocked_by=[c])
    assert refused.value.message == (
        f"that would make a cycle: 'A' ({a}) after 'C' ({c}) after 'B' ({b}) after 'A' ({a});"
        " a card cannot wait on itself"
    )
    with pytest.raises(InvalidInput, match="cannot come after itself"):
        board.edit(a, blocked_by=[a])
    with pytest.raises(InvalidInput, match="cannot come after 'nope': no card of this board"):
        board.add("D", blocked_by=["nope"])
    assert board.list()["version"] == 3


def test_edges_are_added_and_removed_by_id(tl: Taskloom) -> None:
    a, b, c = (tl.board("t").add(t)["card"]["id"] for t in ("A", "B", "C"))
    board = tl.board("t")
    assert board.edit(c, add_blocked_by=[a, b, a])["card"]["blocked_by"] == [a, b]
    assert board.edit(c, remove_blocked_by=[a])["card"]["blocked_by"] == [b]
    assert board.edit(c, blocked_by=[])["card"]["blocked_by"] == []


def test_removing_a_card_others_wait_on_takes_force_which_drops_their_edges(
    tl: Taskloom,
) -> None:
    a, b = chain(tl, "A", "B")
    board = tl.board("t")
    with pytest.raises(InvariantViolation) as refused:
        board.remove(a)
    assert refused.value.message == (
        f"card 'A' ({a}) cannot be removed: 'B' ({b}) comes after it. Remove that edge"
        " first (`remove_blocked_by`), or remove it with `force`, which drops the edge"
    )
    also = board.add("C", blocked_by=[a])["card"]["id"]
    with pytest.raises(InvariantViolation) as refused:
        board.remove(a)
    assert refused.value.message == (
        f"card 'A' ({a}) cannot be removed: 'B' ({b}), 'C' ({also}) come after it. Remove those"
        " edges first (`remove_blocked_by`), or remove it with `force`, which drops them"
    )
    snap = board.remove(a, force=True)
    assert [(c["id"], c["blocked_by"]) for c in snap["cards"]] == [(b, []), (also, [])]
    assert "after:" not in snap["markdown"]


def test_a_done_card_or_one_no_one_waits_on_anymore_is_removed_freely(tl: Taskloom) -> None:
    a, b = chain(tl, "A", "B")
    board = tl.board("t")
    board.update_status(a, "done")
    assert board.remove(a)["cards"][0]["blocked_by"] == []  # B no longer waits on it
    c, d = chain(tl, "C", "D")[-2:]
    board.update_status(d, "rejected")  # D will never run: C may go
    assert [card["id"] for card in board.remove(c)["cards"]] == [b, d]


def test_a_whole_list_write_drops_the_edges_to_cards_it_leaves_out(tl: Taskloom) -> None:
    chain(tl, "Write the code", "Test it", model=True)
    todos = [{"content": "Test it", "status": "pending", "activeForm": "Testing"}]
    result = tl.tools.dispatch("todo_write", {"todos": todos}, ToolContext(thread_id="t"))
    assert not result.is_error, result.content
    assert [c["blocked_by"] for c in result.data["cards"]] == [[]]


def test_a_gated_card_in_todo_is_explained_with_the_way_out(tl: Taskloom) -> None:
    """A rejected plan a person moved to todo was "awaiting a person's approval", though
    ``board approve`` refused it as not awaiting approval, and no approve line was listed."""
    board = tl.board("t")
    plan = board.add("Deploy", approval_mode="required")["card"]["id"]
    board.decide_plan(plan, False)
    board.update_status(plan, "todo")
    (reasons,) = [c["reasons"] for c in board.ready(explain=True)["not_ready"]]
    assert reasons == [
        "its plan needs a person's approval: move it to awaiting_approval for a decision"
    ]
    board.update_status(plan, "awaiting_approval")
    assert board.decide_plan(plan, True)["card"]["status"] == "ready"


def test_ready_lists_what_can_start_and_explains_the_rest(tl: Taskloom) -> None:
    board = tl.board("t")
    a, b = chain(tl, "Write the code", "Test it")
    plan = board.add("Deploy", approval_mode="required")["card"]["id"]
    stuck = board.add("Fix CI", status="blocked", blocker="the runner is down")["card"]["id"]
    free = board.add("Write docs")["card"]["id"]
    view = board.ready(explain=True)
    assert [c["id"] for c in view["ready"]] == [a, free]
    assert view["in_progress"] is None
    reasons = {c["id"]: c["reasons"] for c in view["not_ready"]}
    assert reasons == {
        b: [f"waiting on 'Write the code' ({a}), todo"],
        plan: ["awaiting a person's approval"],
        stuck: ["blocked: the runner is down"],
    }
    waiting = next(c for c in view["not_ready"] if c["id"] == b)
    assert [c["id"] for c in waiting["waiting_on"]] == [a]
    assert view["text"].splitlines() == [
        "Ready to start (2):",
        f"- Write the code  `({a})`",
        f"- Write docs  `({free})`",
        "Not ready (3):",
        f"- Test it  `({b})`: waiting on 'Write the code' ({a}), todo",
        f"- Deploy  `({plan})`: awaiting a person's approval",
        f"- Fix CI  `({stuck})`: blocked: the runner is down",
    ]
    assert board.list()["ready_count"] == 2
    assert "not_ready" not in board.ready()  # without explain, only what can start
    board.update_status(a, "in_progress")
    view = board.ready(explain=True)
    assert [c["id"] for c in view["ready"]] == [free]
    assert view["in_progress"]["id"] == a
    assert "only one card may be in progress" in view["text"]
    board.update_status(a, "done")
    assert {c["id"] for c in board.ready()["ready"]} == {b, free}
    assert board.list()["ready_count"] == 2


def test_cards_are_numbered_in_order_and_numbers_are_never_reused(tl: Taskloom) -> None:
    board = tl.board("t")
    ids = [board.add(t)["card"]["id"] for t in ("A", "B", "C")]
    board.remove(ids[2])
    board.clear()
    assert board.add("D")["card"]["number"] == 4
    assert board.replace([{"title": "E"}, {"title": "F"}])["cards"][1]["number"] == 6


def test_the_markdown_says_what_a_card_comes_after_and_where_its_approval_stands(
    tl: Taskloom,
) -> None:
    """An approved card reads as approved, not as a plain todo waiting for approval."""
    board = tl.board("t")
    a, b = chain(tl, "A", "B")
    waiting = board.add("Plan", approval_mode="required")["card"]["id"]
    approved = board.add("Approved plan", approval_mode="required")["card"]["id"]
    board.decide_plan(approved, True)
    rejected = board.add("Rejected plan", approval_mode="required")["card"]["id"]
    markdown = board.decide_plan(rejected, False)["markdown"]
    assert markdown.splitlines() == [
        f"- [ ] A  `({a})`",
        f"- [ ] B  `({b})`",
        f"  - after: {a}",
        f"- [?] Plan  `({waiting})`",
        "  - approval: required",
        f"- [ ] Approved plan  `({approved})`",
        "  - approval: approved",
        f"- [-] Rejected plan  `({rejected})`",
        "  - approval: rejected",
    ]


def todo(tl: Taskloom, **args: object) -> ToolResult:
    return tl.tools.dispatch("todo", args, ToolContext(thread_id="t"))


def test_the_todo_tool_adds_and_removes_edges_and_says_what_is_ready(tl: Taskloom) -> None:
    a = todo(tl, op="add", content="Write the code").data["card"]["id"]
    added = todo(tl, op="add", content="Test it", blocked_by=[a])
    b = added.data["card"]["id"]
    assert f"  - after: {a}" in added.content
    assert added.content.startswith("Todo board (version 2; 2 cards: 2 todo; 1 can start now)")
    ready = todo(tl, op="ready", explain=True)
    assert not ready.is_error and ready.data["ready"][0]["id"] == a
    assert f"waiting on 'Write the code' ({a}), todo" in ready.content
    refused = todo(tl, op="remove", id=a)
    assert refused.is_error and "with `force`, which drops the edge" in refused.content
    assert todo(tl, op="edit", id=b, remove_blocked_by=[a]).data["cards"][1]["blocked_by"] == []
    assert todo(tl, op="edit", id=b, add_blocked_by=[a]).data["cards"][1]["blocked_by"] == [a]
    assert todo(tl, op="remove", id=a, force=True).data["cards"][0]["blocked_by"] == []
    for args in ({"op": "edit", "id": b, "force": True}, {"op": "list", "explain": True}):
        wrong = todo(tl, **args)
        assert wrong.is_error and "does not take" in wrong.content, args
