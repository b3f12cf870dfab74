"""Pure board operations: no store, explicit time and ids."""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, datetime, timedelta

import pytest

from taskloom.domain import board as ops
from taskloom.domain import whole_list
from taskloom.domain.approval import check_model_change, model_change
from taskloom.domain.board import Board
from taskloom.domain.board_view import render_markdown
from taskloom.domain.card import CardPatch, CardStatus, parse_status
from taskloom.domain.errors import InvalidInput, InvariantViolation, NotFound
from taskloom.domain.limits import MAX_BOARD_BYTES

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=1)


def ids():
    counter = itertools.count(1)
    return lambda: f"c{next(counter)}"


def board_with(*titles: str, **first_fields) -> Board:
    new_id = ids()
    b = Board("t")
    for i, title in enumerate(titles):
        patch = CardPatch(**first_fields) if i == 0 else CardPatch()
        b, _ = ops.add(b, title, patch, now=T0, new_id=new_id)
    return b


@pytest.mark.parametrize(
    ("alias", "status"),
    [
        ("pending", CardStatus.TODO),
        (" Completed ", CardStatus.DONE),
        ("in-progress", CardStatus.IN_PROGRESS),
        ("started", CardStatus.IN_PROGRESS),
        ("approved", CardStatus.READY),
        ("cancelled", CardStatus.REJECTED),
        ("awaiting-approval", CardStatus.AWAITING_APPROVAL),
    ],
)
def test_status_aliases(alias: str, status: CardStatus) -> None:
    assert parse_status(alias) is status


def test_unknown_status_names_the_choices() -> None:
    with pytest.raises(InvalidInput, match="invalid status 'nope' \\(expected todo\\|"):
        parse_status("nope")


def test_add_assigns_injected_ids_and_order() -> None:
    b = board_with("one", "two")
    assert [c.id for c in b.cards] == ["c1", "c2"]
    assert [c.order for c in b.cards] == [0, 1]
    assert b.cards[0].created_at == "2026-01-01T12:00:00.000Z"


def test_add_rejects_empty_title() -> None:
    with pytest.raises(InvalidInput, match="must not be empty"):
        ops.add(Board("t"), "   ", now=T0, new_id=ids())


def test_title_whitespace_and_newlines_collapse() -> None:
    _, card = ops.add(Board("t"), "  fix\n the   bug ", now=T0, new_id=ids())
    assert card.title == "fix the bug"


def test_single_in_progress_is_an_error_not_a_fix() -> None:
    b = board_with("one", "two", status="in_progress")
    with pytest.raises(InvariantViolation, match=r"got 2"):
        ops.update_status(b, "c2", "in_progress", now=T1)
    assert b.cards[0].status is CardStatus.IN_PROGRESS  # unchanged


def test_updated_at_moves_only_on_changed_card() -> None:
    b = board_with("one", "two")
    b2 = ops.update_status(b, "c2", "done", now=T1)
    assert b2.cards[0].updated_at == b.cards[0].updated_at
    assert b2.cards[1].updated_at == "2026-01-01T12:01:00.000Z"
    assert b2.updated_at == "2026-01-01T12:01:00.000Z"


def test_noop_returns_same_board() -> None:
    b = board_with("one")
    assert ops.revise_plan(b, now=T1) is b
    assert ops.update_status(b, "c1", "todo", now=T1) is b


def test_leaving_blocked_clears_blocker() -> None:
    b = board_with("one")
    b = ops.update_status(b, "c1", "blocked", now=T1, blocker="waiting on API key")
    assert b.cards[0].blocker == "waiting on API key"
    b = ops.update_status(b, "c1", "in_progress", now=T1)
    assert b.cards[0].blocker is None
    b = ops.update_status(b, "c1", "blocked", now=T1)
    assert b.cards[0].blocker is None  # the old reason does not come back


def test_blocked_renders_blocker_or_notes() -> None:
    b = board_with("one", notes="see log")
    b = ops.update_status(b, "c1", "blocked", now=T1)
    assert "  - _blocked:_ see log" in render_markdown(b)


def test_decide_plan_only_on_awaiting() -> None:
    b = board_with("one", "two", status="awaiting_approval")
    b = ops.decide_plan(b, "c1", True, now=T1)
    assert b.cards[0].status is CardStatus.READY
    with pytest.raises(InvariantViolation, match="not awaiting approval \\(status: todo\\)"):
        ops.decide_plan(b, "c2", True, now=T1)


def test_reject_plan() -> None:
    b = board_with("one", status="awaiting_approval")
    assert ops.decide_plan(b, "c1", False, now=T1).cards[0].status is CardStatus.REJECTED


def test_revise_plan_rejects_every_awaiting_card() -> None:
    new_id = ids()
    b = Board("t")
    for _ in range(3):
        b, _ = ops.add(b, "x", CardPatch(status="awaiting_approval"), now=T0, new_id=new_id)
    b, _ = ops.add(b, "y", now=T0, new_id=new_id)
    b = ops.revise_plan(b, now=T1)
    assert [c.status for c in b.cards] == [CardStatus.REJECTED] * 3 + [CardStatus.TODO]


def test_remove_and_unknown_id() -> None:
    before = board_with("one", "two")
    b = ops.remove(before, "c1", now=T1)
    assert [c.id for c in b.cards] == ["c2"]
    # the other cards stay as they were, their order (a sort key) too: a removal stores nothing
    # of theirs
    assert b.cards[0] is before.cards[1] and b.cards[0].order == 1
    with pytest.raises(NotFound, match="todo id 'zzz' not found"):
        ops.remove(b, "zzz", now=T1)


def test_replace_checks_invariant_after_dropping_empty_cards() -> None:
    items = [
        CardPatch(title="a", status="in_progress"),
        CardPatch(title="  ", status="in_progress"),  # dropped before the check
    ]
    b = whole_list.replace(Board("t"), items, now=T0, new_id=ids())
    assert [c.title for c in b.cards] == ["a"]


def test_replace_two_in_progress_fails() -> None:
    items = [CardPatch(title="a", status="in_progress"), CardPatch(title="b", status="started")]
    with pytest.raises(InvariantViolation):
        whole_list.replace(Board("t"), items, now=T0, new_id=ids())


def test_replace_keeps_given_ids_and_timestamps_of_unchanged_cards() -> None:
    b = board_with("one", "two")
    b2 = whole_list.replace(
        b, [CardPatch(id="c2", title="two"), CardPatch(title="new")], now=T1, new_id=lambda: "fresh"
    )
    assert [c.id for c in b2.cards] == ["c2", "fresh"]
    assert b2.cards[0].updated_at == b.cards[1].updated_at


def test_replace_duplicate_ids_rejected() -> None:
    with pytest.raises(InvariantViolation, match="duplicate todo id 'x'"):
        whole_list.replace(
            Board("t"),
            [CardPatch(id="x", title="a"), CardPatch(id="x", title="b")],
            now=T0,
            new_id=ids(),
        )


def test_clear() -> None:
    b = whole_list.clear(board_with("one"), now=T1)
    assert b.cards == ()
    assert render_markdown(b) == "_No todos yet._"


def test_claim_card_is_compare_and_set() -> None:
    b = board_with("one")
    b, card = ops.claim_card(b, "c1", ["todo", "ready"], "in_progress", now=T1)
    assert card.status is CardStatus.IN_PROGRESS
    with pytest.raises(InvariantViolation, match="status is 'in_progress', expected one of"):
        ops.claim_card(b, "c1", ["todo", "ready"], "in_progress", now=T1)
    with pytest.raises(NotFound, match="claim_card: card 'nope' not found"):
        ops.claim_card(b, "nope", ["todo"], "done", now=T1)


def test_set_session_thread_stamps_and_clears() -> None:
    b = ops.set_session_thread(board_with("one"), "c1", "run-7", now=T1)
    assert b.cards[0].session_thread_id == "run-7"
    assert ops.set_session_thread(b, "c1", None, now=T1).cards[0].session_thread_id is None


def test_edit_patch_semantics() -> None:
    b = board_with("one", notes="n", plan=["s1", " ", "s2"])
    assert b.cards[0].plan == ("s1", "s2")
    b = ops.edit(b, "c1", CardPatch(notes="", title="renamed"), now=T1)
    assert b.cards[0].notes is None
    assert b.cards[0].title == "renamed"
    assert b.cards[0].plan == ("s1", "s2")
    with pytest.raises(InvalidInput, match="cannot be changed"):
        ops.edit(b, "c1", CardPatch(id="other"), now=T1)
    with pytest.raises(InvalidInput, match="approval_mode"):
        ops.edit(b, "c1", CardPatch(approval_mode="sometimes"), now=T1)


def test_upsert_merge_keeps_unnamed_and_appends_new() -> None:
    b = board_with("one", "two")
    b = whole_list.upsert(
        b,
        [CardPatch(id="c2", status="done"), CardPatch(id="n", title="three")],
        prune=False,
        now=T1,
        new_id=ids(),
    )
    assert [(c.id, c.status.value) for c in b.cards] == [
        ("c1", "todo"),
        ("c2", "done"),
        ("n", "todo"),
    ]


def test_upsert_prune_keeps_only_named_in_given_order() -> None:
    b = board_with("one", "two", "three")
    b = whole_list.upsert(
        b, [CardPatch(id="c3"), CardPatch(id="c1")], prune=True, now=T1, new_id=ids()
    )
    assert [c.id for c in b.cards] == ["c3", "c1"]


def test_upsert_new_item_needs_content() -> None:
    with pytest.raises(InvalidInput, match="needs content"):
        whole_list.upsert(Board("t"), [CardPatch(id="x")], prune=False, now=T0, new_id=ids())


def test_render_markdown_exact() -> None:
    b = board_with(
        "Ship it",
        objective="release 1.0",
        assigned_agent="coder",
        allowed_tools=["bash", "git"],
        approval_mode="required",
        plan=["build", "tag"],
        acceptance_criteria=["CI green"],
        evidence=["run 42"],
        notes="careful",
    )
    b = ops.update_status(b, "c1", "done", now=T1)
    assert render_markdown(b) == (
        "- [x] Ship it  `(c1)`\n"
        "  - objective: release 1.0\n"
        "  - agent: coder\n"
        "  - tools: bash, git\n"
        "  - approval: approved\n"
        "  - plan:\n"
        "    - build\n"
        "    - tag\n"
        "  - acceptance criteria:\n"
        "    - CI green\n"
        "  - evidence:\n"
        "    - run 42\n"
        "  - careful"
    )


def test_free_text_cannot_pose_as_another_card() -> None:
    b = board_with("Real", plan=["a\n- [x] fake plan card"], notes="n1\n- [x] fake note card")
    markdown = render_markdown(b)
    top_level = [line for line in markdown.split("\n") if line.startswith("- ")]
    assert top_level == ["- [ ] Real  `(c1)`"]
    assert "      - [x] fake plan card" in markdown and "    - [x] fake note card" in markdown


def test_markers() -> None:
    expected = {
        "todo": "[ ]",
        "awaiting_approval": "[?]",
        "ready": "[ ]",
        "in_progress": "[~]",
        "blocked": "[!]",
        "done": "[x]",
        "rejected": "[-]",
    }
    assert {s.value: s.marker for s in CardStatus} == expected


def test_card_round_trips_through_dict() -> None:
    b = board_with("one", plan=["a"], approval_mode="required", source_metadata={"k": 1})
    assert Board.from_dict(b.to_dict()) == b


def test_summary_counts() -> None:
    b = ops.update_status(board_with("a", "b", "c"), "c1", "done", now=T1)
    s = b.summary()
    assert (s["done"], s["todo"], s["total"]) == (1, 2, 3)


def awaiting_board(**fields) -> Board:
    return board_with("Deploy", "Other", status="awaiting_approval", **fields)


@pytest.mark.parametrize("status", ["ready", "in_progress", "blocked", "done"])
def test_model_change_refuses_approving_or_starting(status: str) -> None:
    before = awaiting_board(approval_mode="required")
    after = ops.update_status(before, "c1", status, now=T1)
    with pytest.raises(InvariantViolation, match="waiting for a person"):
        check_model_change(before, after)


def test_model_change_refuses_dropping_the_requirement() -> None:
    before = board_with("Deploy", approval_mode="required")
    for mode in ("not_required", None):
        after = ops.edit(before, "c1", CardPatch(approval_mode=mode), now=T1)
        with pytest.raises(InvariantViolation, match="only a person can change"):
            check_model_change(before, after)


@pytest.mark.parametrize("status", [None, "todo", "ready", "in_progress", "blocked"])
def test_a_new_card_that_requires_approval_starts_awaiting_it(status: str | None) -> None:
    """Added as todo it was gated yet no one could approve it (decide_plan takes cards
    awaiting approval, the panel showed no button); added as ready it passed for approved."""
    fields = {"status": status} if status else {}
    patch = CardPatch(approval_mode="required", **fields)
    after, card = ops.add(Board("t"), "x", patch, now=T0, new_id=ids())
    assert card.status is CardStatus.AWAITING_APPROVAL
    check_model_change(Board("t"), after)  # the model may submit a plan for approval
    item = CardPatch(title="y", approval_mode="required", status=status or "todo")
    listed = whole_list.upsert(Board("t"), [item], prune=True, now=T0, new_id=ids())
    assert listed.cards[0].status is CardStatus.AWAITING_APPROVAL
    approved = ops.decide_plan(after, card.id, True, now=T1)
    assert approved.cards[0].status is CardStatus.READY


def test_model_change_refuses_a_new_finished_card_that_requires_approval() -> None:
    before = Board("t")
    after, _ = ops.add(
        before, "x", CardPatch(approval_mode="required", status="done"), now=T0, new_id=ids()
    )
    with pytest.raises(InvariantViolation, match="waiting for a person"):
        check_model_change(before, after)


def test_model_change_allows_what_a_model_may_do() -> None:
    before = awaiting_board(approval_mode="required")
    allowed = [
        ops.update_status(before, "c1", "rejected", now=T1),
        ops.edit(before, "c1", CardPatch(plan=["revised"]), now=T1),
        ops.revise_plan(before, now=T1),
        ops.remove(before, "c1", now=T1),
        ops.update_status(before, "c2", "in_progress", now=T1),
    ]
    for after in allowed:
        check_model_change(before, after)
    approved = ops.decide_plan(before, "c1", True, now=T1)
    check_model_change(approved, ops.update_status(approved, "c1", "in_progress", now=T1))


def test_a_gated_plan_cannot_slip_back_to_todo_where_no_one_decides() -> None:
    before = awaiting_board(approval_mode="required")
    after = ops.update_status(before, "c1", "todo", now=T1)
    with pytest.raises(InvariantViolation, match="a person decides on its plan"):
        check_model_change(before, after)


def test_awaiting_card_without_requirement_cannot_slip_back_to_todo() -> None:
    before = awaiting_board()
    after = ops.update_status(before, "c1", "todo", now=T1)
    with pytest.raises(InvariantViolation, match="waiting for a person"):
        check_model_change(before, after)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (CardPatch(title="a\x00b"), "todo content must not contain NUL"),
        (CardPatch(title="\ud800"), "todo content is not valid UTF-8"),
        (CardPatch(objective="\x00"), "objective must not contain NUL"),
        (CardPatch(notes="\udfff"), "notes is not valid UTF-8"),
        (CardPatch(blocker="\x00"), "blocker must not"),
        (CardPatch(assigned_agent="\x00"), "assigned_agent must not"),
        (CardPatch(plan=["ok", "\x00"]), "plan must not"),
        (CardPatch(allowed_tools=["\ud800"]), "allowed_tools is not valid"),
        (CardPatch(acceptance_criteria=["\x00"]), "acceptance_criteria must not"),
        (CardPatch(source_metadata={"k": ["\x00"]}), "source_metadata must not"),
        (CardPatch(source_metadata={"\ud800": 1}), "source_metadata is not valid"),
    ],
)
def test_unstorable_card_text_is_invalid_input(patch: CardPatch, message: str) -> None:
    b = board_with("one")
    with pytest.raises(InvalidInput, match=message):
        ops.edit(b, "c1", patch, now=T1)


def test_unstorable_title_and_ids_refused_by_every_op() -> None:
    b = board_with("one")
    with pytest.raises(InvalidInput, match="NUL"):
        ops.add(b, "a\x00", now=T1, new_id=ids())
    with pytest.raises(InvalidInput, match="todo id must not"):
        whole_list.replace(b, [CardPatch(id="x\x00", title="x")], now=T1, new_id=ids())
    with pytest.raises(InvalidInput, match="todo id is not valid"):
        whole_list.upsert(b, [CardPatch(id="\ud800", title="x")], prune=False, now=T1, new_id=ids())
    with pytest.raises(InvalidInput, match="session_thread_id must not"):
        ops.set_session_thread(b, "c1", "run\x00", now=T1)


def test_a_plan_edited_in_the_same_millisecond_is_not_the_plan_that_was_seen() -> None:
    """``updated_at`` has millisecond precision: a model's edit landing in the millisecond
    the plan was shown kept its stamp, and an approval of the old plan passed for the new."""
    from taskloom.domain.errors import Conflict

    shown = awaiting_board(approval_mode="required")
    seen = shown.get("c1").updated_at
    edited = ops.edit(shown, "c1", CardPatch(plan=["rm -rf /"]), now=T0)  # same millisecond
    assert edited.get("c1").updated_at > seen
    with pytest.raises(Conflict):
        ops.decide_plan(edited, "c1", True, now=T0, seen=seen)
    unchanged = ops.edit(edited, "c1", CardPatch(plan=["rm -rf /"]), now=T0)
    assert unchanged.get("c1").updated_at == edited.get("c1").updated_at


def test_claim_card_takes_one_status_or_a_list_and_refuses_other_things() -> None:
    """A lone "todo" was read letter by letter ("invalid status 't'")."""
    b = board_with("one")
    b2, card = ops.claim_card(b, "c1", "todo", "in_progress", now=T1)
    assert card.status is CardStatus.IN_PROGRESS
    b3, _ = ops.claim_card(b2, "c1", CardStatus.IN_PROGRESS, "done", now=T1)
    assert b3.get("c1").status is CardStatus.DONE
    with pytest.raises(InvalidInput, match="a status or a list of statuses, not int"):
        ops.claim_card(b, "c1", 5, "done", now=T1)  # type: ignore[arg-type]


def test_a_second_in_progress_names_the_card_already_in_progress() -> None:
    b = board_with("Write tests", "Deploy", "Docs")
    b = ops.update_status(b, "c2", "in_progress", now=T1)
    with pytest.raises(InvariantViolation) as err:
        ops.update_status(b, "c3", "in_progress", now=T1)
    assert "(got 2)" in str(err.value) and "'Deploy' (c2) is in progress already" in str(err.value)


def _big(b: Board, title: str, size: int) -> Board:
    """``b`` with a card of about ``size`` bytes of notes, set without the checks (as an
    older version may have stored it)."""
    b, card = ops.add(b, title, now=T0, new_id=lambda: title)
    return dataclasses.replace(
        b, cards=(*b.cards[:-1], dataclasses.replace(card, notes="n" * size))
    )


def test_a_card_s_text_is_capped_across_its_fields() -> None:
    """Each field under 64 KiB, 100 plan steps of 65,000 bytes made a 6.5 MB card."""
    steps = CardPatch(plan=["y" * 65_000] * 100)
    with pytest.raises(InvalidInput, match=r"more than the 65536 \(64 KiB\) a card may hold"):
        ops.add(Board("t"), "huge", steps, now=T0, new_id=ids())
    two = CardPatch(notes="n" * 40_000, evidence=["e" * 30_000])
    with pytest.raises(InvalidInput, match="shorten its notes, plan"):
        ops.add(Board("t"), "big", two, now=T0, new_id=ids())
    b, _ = ops.add(Board("t"), "fits", CardPatch(notes="n" * 60_000), now=T0, new_id=ids())
    with pytest.raises(InvalidInput, match="64 KiB"):
        ops.edit(b, "c1", CardPatch(plan=["p" * 6_000]), now=T1)


def test_a_board_s_text_is_capped_and_an_old_oversized_board_may_shrink() -> None:
    b, new_id = Board("t"), ids()
    for i in range(16):
        b, _ = ops.add(b, f"card {i}", CardPatch(notes="n" * 65_000), now=T0, new_id=new_id)
    with pytest.raises(InvalidInput, match=r"1 MiB\) a board may hold.*remove cards that are done"):
        ops.add(b, "one more", CardPatch(notes="n" * 10_000), now=T0, new_id=new_id)
    old = _big(_big(Board("t"), "a", 700_000), "b", 700_000)  # stored before the limits
    shrunk = ops.update_status(old, "a", "done", now=T1)  # same size: allowed
    shrunk = ops.edit(shrunk, "b", CardPatch(notes="short"), now=T1)
    assert shrunk.get("b").notes == "short"
    with pytest.raises(InvalidInput, match="64 KiB"):
        ops.edit(old, "a", CardPatch(plan=["one more step"]), now=T1)
    with pytest.raises(InvalidInput, match="1 MiB"):
        ops.add(old, "c", CardPatch(notes="n"), now=T1, new_id=ids())


def test_a_full_board_of_ordinary_cards_is_far_below_the_limits() -> None:
    items = [
        CardPatch(title=f"Step {i}: update the parser", notes="n" * 200, plan=["do it", "check"])
        for i in range(1000)
    ]
    b = whole_list.replace(Board("t"), items, now=T0, new_id=ids())
    assert len(b.cards) == 1000
    assert sum(c.text_size() for c in b.cards) < MAX_BOARD_BYTES // 3


def _approved(title: str = "Drop table users") -> Board:
    patch = CardPatch(status="awaiting_approval", approval_mode="required", plan=["back up"])
    b, _ = ops.add(Board("t"), title, patch, now=T0, new_id=lambda: "c1")
    return ops.decide_plan(b, "c1", True, now=T0)


def test_a_model_cannot_swap_an_approved_plan_by_removing_and_adding_it_again() -> None:
    b = _approved()
    counter = itertools.count(1)
    new_id = lambda: f"n{next(counter)}"  # noqa: E731
    swapped = CardPatch(title="drop  TABLE users.", plan=["drop, skip backup"], status="done")
    gone = model_change(b, ops.remove(b, "c1", now=T1))  # removing it is the model's right
    assert gone.retired_titles == ("drop table users",)
    for before, after in [
        (gone, whole_list.replace(gone, [swapped], now=T1, new_id=new_id)),
        (b, whole_list.replace(b, [swapped], now=T1, new_id=new_id)),  # one replace
        (b, ops.add(b, "Drop table users", swapped, now=T1, new_id=new_id)[0]),  # beside it
    ]:
        with pytest.raises(InvariantViolation, match="needs a person's approval"):
            check_model_change(before, after)
    waiting = dataclasses.replace(swapped, status="awaiting_approval")
    check_model_change(gone, whole_list.replace(gone, [waiting], now=T1, new_id=new_id))
    cleared = whole_list.clear(b, now=T1, forget_removed=True)  # a person's fresh start
    check_model_change(cleared, whole_list.replace(cleared, [swapped], now=T1, new_id=new_id))


def test_a_withdrawn_plan_stays_gated_whatever_mode_it_was_sent_with() -> None:
    """Submitted `not_required`, withdrawn, then done: no one approved it."""
    for mode in (None, "not_required"):
        before = awaiting_board(approval_mode=mode)
        withdrawn = ops.revise_plan(before, now=T1)
        check_model_change(before, withdrawn)
        assert withdrawn.cards[0].approval_mode == "required"
        with pytest.raises(InvariantViolation, match="was rejected"):
            check_model_change(withdrawn, ops.update_status(withdrawn, "c1", "done", now=T1))
    lowered = ops.edit(
        before, "c1", CardPatch(status="rejected", approval_mode=None), now=T1
    )  # a host may: the model's gate refuses it
    assert lowered.cards[0].approval_mode is None
    with pytest.raises(InvariantViolation, match="only a person can change"):
        check_model_change(before, lowered)


def test_an_approved_card_moved_to_todo_stays_approved() -> None:
    approved = ops.decide_plan(awaiting_board(), "c1", True, now=T1)
    started = ops.update_status(approved, "c1", "in_progress", now=T1)
    paused = ops.update_status(started, "c1", "todo", now=T1)
    assert paused.cards[0].status is CardStatus.READY
    check_model_change(started, paused)
    plain = ops.update_status(
        ops.update_status(started, "c2", "done", now=T1), "c2", "todo", now=T1
    )
    assert plain.cards[1].status is CardStatus.TODO  # a card never approved is just todo


def test_only_a_model_s_removal_is_remembered() -> None:
    b = _approved()
    assert ops.remove(b, "c1", now=T1).retired_ids == ()  # a person's, through the store
    gone = model_change(b, ops.remove(b, "c1", now=T1))
    assert (gone.retired_ids, gone.retired_titles) == (("c1",), ("drop table users",))
