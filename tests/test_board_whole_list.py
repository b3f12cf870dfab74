"""A model's whole-list write (todo_write, todo_list, todo replace and clear) never drops a
card another writer made since the model's last write, which the model was never shown."""

from __future__ import annotations

import threading
from typing import Any

import taskloom
from taskloom import Taskloom
from taskloom.domain import whole_list
from taskloom.domain.board import Board
from taskloom.tools import ToolContext

CTX = ToolContext(thread_id="t")


def dispatch(tl: Taskloom, name: str, args: dict[str, Any]) -> taskloom.ToolResult:
    result = tl.tools.dispatch(name, args, CTX)
    assert not result.is_error, result.content
    return result


def todo_write(tl: Taskloom, *titles: str) -> taskloom.ToolResult:
    todos = [{"content": t, "status": "pending", "activeForm": t + "ing"} for t in titles]
    return dispatch(tl, "todo_write", {"todos": todos})


def titles(result: taskloom.ToolResult) -> list[str]:
    assert result.data is not None
    if "todos" in result.data:
        return [t["content"] for t in result.data["todos"]]
    return [c["title"] for c in result.data["cards"]]


def test_a_card_a_person_adds_while_the_model_works_survives_its_next_todo_write(
    db_url: str,
) -> None:
    with taskloom.connect(db_url) as tl:
        todo_write(tl, "Read the code", "Write the fix")
    with taskloom.connect(db_url) as person:  # another process: the panel, the CLI
        person.board("t").add("Also update the changelog")
    with taskloom.connect(db_url) as tl:
        result = todo_write(tl, "Read the code", "Write the fix", "Run the tests")
        assert titles(result) == [
            "Read the code",
            "Write the fix",
            "Run the tests",
            "Also update the changelog",
        ]
        assert "Kept 1 card added or changed by someone else since your last" in result.content
        assert "'Also update the changelog'" in result.content
        assert [c["title"] for c in result.data["kept"]] == ["Also update the changelog"]
        # Shown it now, the model that leaves it out again removes it.
        again = todo_write(tl, "Read the code", "Write the fix", "Run the tests")
        assert titles(again) == ["Read the code", "Write the fix", "Run the tests"]
        assert "Kept" not in again.content


def test_a_model_may_drop_its_own_cards_and_a_person_may_drop_anything(tl: Taskloom) -> None:
    todo_write(tl, "A", "B")
    dispatch(tl, "todo", {"op": "add", "content": "C"})
    result = todo_write(tl, "A")
    assert titles(result) == ["A"] and "kept" not in result.data
    tl.board("t").add("D")
    assert [c["title"] for c in tl.board("t").replace([{"title": "E"}])["cards"]] == ["E"]


def test_the_todo_replace_op_keeps_the_unseen_card_and_honours_the_ones_it_names(
    tl: Taskloom,
) -> None:
    todo_write(tl, "A")
    seen = tl.board("t").add("Person's card")["card"]
    tl.board("t").add("Another person's card")
    result = dispatch(
        tl,
        "todo",
        {"op": "replace", "cards": [{"content": "B"}, {"id": seen["id"], "content": "Renamed"}]},
    )
    assert titles(result) == ["B", "Renamed", "Another person's card"]
    assert [c["title"] for c in result.data["kept"]] == ["Another person's card"]


def test_a_models_clear_and_a_hermes_list_write_keep_the_unseen_card(tl: Taskloom) -> None:
    todo_write(tl, "A", "B")
    tl.board("t").add("Person's card")
    cleared = dispatch(tl, "todo", {"op": "clear"})
    assert titles(cleared) == ["Person's card"]
    tl.board("t").add("Second person's card")
    written = dispatch(tl, "todo_list", {"todos": [{"id": "1", "content": "X"}], "merge": False})
    assert titles(written) == ["X", "Second person's card"]
    assert "Second person's card" in written.data["note"]
    assert titles(dispatch(tl, "todo_list", {"todos": [{"id": "1"}]})) == ["X"]


def test_a_board_a_person_seeded_is_kept_on_the_models_first_write(tl: Taskloom) -> None:
    tl.board("t").add("Plan from the user")
    result = todo_write(tl, "Step one")
    assert titles(result) == ["Step one", "Plan from the user"]
    assert "Leave it out again to remove it" in result.content


def test_a_write_that_keeps_a_card_and_changes_nothing_else_still_shows_it(tl: Taskloom) -> None:
    """The list sent again unchanged: the kept card is reported once, and then it is seen."""
    todo_write(tl, "A", "B")
    tl.board("t").add("P")
    first = todo_write(tl, "A", "B")
    assert "Leave it out again to remove it" in first.content
    again = todo_write(tl, "A", "B")
    assert titles(again) == ["A", "B"] and "Kept" not in again.content
    tl.board("t").add("Q")
    assert titles(dispatch(tl, "todo", {"op": "clear"})) == ["Q"]
    assert titles(dispatch(tl, "todo", {"op": "clear"})) == []


def test_a_kept_card_in_progress_is_named_as_kept_when_the_list_starts_another(
    tl: Taskloom,
) -> None:
    todo_write(tl, "A", "B")
    working = tl.board("t").add("Person's work", status="in_progress")["card"]
    todos = [
        {"content": t, "status": s, "activeForm": t}
        for t, s in (("A", "in_progress"), ("B", "pending"))
    ]
    refused = tl.tools.dispatch("todo_write", {"todos": todos}, CTX)
    assert refused.is_error
    assert f"'Person's work' ({working['id']}), a card someone else added or" in refused.content
    assert "put it in your list with the status it should have" in refused.content
    todos.append({"content": "Person's work", "status": "completed", "activeForm": "x"})
    assert titles(dispatch(tl, "todo_write", {"todos": todos})) == ["A", "B", "Person's work"]


def test_a_full_board_says_how_many_cards_a_whole_list_write_keeps(tl: Taskloom) -> None:
    """The model sent fewer cards than the count it is told: the message says why."""
    mine = [f"Step {n}" for n in range(995)]
    tl.board("t").replace([{"title": t} for t in mine])
    todo_write(tl, *mine)
    for n in range(5):
        tl.board("t").add(f"Person's card {n}")
    todos = [{"content": t, "status": "pending", "activeForm": t} for t in [*mine, "One more"]]
    refused = tl.tools.dispatch("todo_write", {"todos": todos}, CTX)
    assert refused.is_error
    assert (
        "this change would leave 1001 (996 listed and 5 cards someone else added or changed"
        " since your last write, which your list leaves out and so keeps): remove cards"
    ) in refused.content


def test_two_models_on_one_thread_each_keep_the_cards_the_other_made(db_url: str) -> None:
    """Models their hosts name (``agent_id``) each have their own mark, kept with the board."""
    planner = ToolContext(thread_id="t", agent_id="planner")
    coder = ToolContext(thread_id="t", agent_id="coder")

    def write(ctx: ToolContext, *items: str) -> taskloom.ToolResult:
        todos = [{"content": t, "status": "pending", "activeForm": t} for t in items]
        with taskloom.connect(db_url) as tl:  # each call from its own host
            result = tl.tools.dispatch("todo_write", {"todos": todos}, ctx)
        assert not result.is_error, result.content
        return result

    write(planner, "Plan the work")
    second = write(coder, "Write the code")
    assert titles(second) == ["Write the code", "Plan the work"]
    assert "'Plan the work'" in second.content
    third = write(planner, "Plan the work", "Review")
    assert titles(third) == ["Plan the work", "Review", "Write the code"]
    # Each has been shown the other's card now: leaving it out removes it.
    assert titles(write(coder, "Write the code", "Review")) == ["Write the code", "Review"]


def test_a_card_a_person_renamed_since_the_models_last_write_is_kept_not_lost(
    db_url: str,
) -> None:
    """todo_write names cards by title: the old title no longer names the renamed card."""
    with taskloom.connect(db_url) as tl:
        todo_write(tl, "Read the code", "Write the fix")
        fix = tl.board("t").get().cards[1]
    with taskloom.connect(db_url) as person:
        person.board("t").edit(fix.id, title="Write the fix for #12", notes="see the issue")
    with taskloom.connect(db_url) as tl:
        result = todo_write(tl, "Read the code", "Write the fix")
        assert titles(result) == ["Read the code", "Write the fix", "Write the fix for #12"]
        assert tl.board("t").get().get(fix.id).notes == "see the issue"
        assert "Kept 1 card added or changed by someone else" in result.content
        assert titles(todo_write(tl, "Read the code", "Write the fix")) == [
            "Read the code",
            "Write the fix",
        ]


def test_a_replace_naming_a_card_a_person_changed_since_keeps_what_it_does_not_give(
    tl: Taskloom,
) -> None:
    card = dispatch(tl, "todo", {"op": "add", "content": "A", "notes": "mine"}).data["card"]
    dispatch(tl, "todo", {"op": "replace", "cards": [{"id": card["id"], "content": "A"}]})
    assert tl.board("t").get().get(card["id"]).notes is None  # the model's own: replaced
    tl.board("t").edit(card["id"], notes="a person's note", plan=["ask first"])
    cards = [{"id": card["id"], "content": "A", "status": "in_progress"}]
    dispatch(tl, "todo", {"op": "replace", "cards": cards})
    kept = tl.board("t").get().get(card["id"])
    assert (kept.notes, kept.plan, kept.status.value) == (
        "a person's note",
        ("ask first",),
        "in_progress",
    )
    dispatch(tl, "todo", {"op": "replace", "cards": cards})
    assert tl.board("t").get().get(card["id"]).notes is None  # seen now: a replace again


def test_a_board_stored_before_the_change_marks_counts_only_new_cards(tl: Taskloom) -> None:
    old = Board.from_dict({"thread_id": "t", "next_number": 4, "shown_to_model": 3})
    assert old.shown_to(None) == (3, "") and old.shown_to("coder") == (0, "")
    todo_write(tl, "A", "B")
    tl.board("t").add("P")
    board = tl.board("t").get()
    again = Board.from_dict({**board.to_dict(), "shown_at": None})
    assert [c.title for c in whole_list.unshown(again)] == ["P"]


def test_a_card_a_person_removes_while_todo_write_runs_does_not_come_back_under_its_id(
    db_url: str,
) -> None:
    """todo_write names cards by title. Named from a read before its write, a card a person
    removed in between came back as a new card under the removed card's id."""
    todos = {"todos": [{"content": t, "status": "pending", "activeForm": t} for t in "AB"]}
    with taskloom.connect(db_url) as model, taskloom.connect(db_url) as person:
        for _ in range(60):
            dispatch(model, "todo_write", todos)
            removed = model.board("t").get().cards[1]
            remover = threading.Thread(target=person.board("t").remove, args=(removed.id,))
            remover.start()
            dispatch(model, "todo_write", todos)
            remover.join()
            back = model.board("t").get().find(removed.id)
            assert back is None or back.number == removed.number


def test_a_stale_pending_in_todo_write_does_not_undo_a_persons_done(db_url: str) -> None:
    with taskloom.connect(db_url) as tl:
        todo_write(tl, "Read the code", "Write the fix")
        fix = tl.board("t").get().cards[1]
    with taskloom.connect(db_url) as person:  # the panel: a person marks it done
        person.board("t").update_status(fix.id, "done")
    with taskloom.connect(db_url) as tl:
        result = todo_write(tl, "Read the code", "Write the fix")  # both still "pending"
        assert tl.board("t").get().get(fix.id).status.value == "done"
        assert [c["status"] for c in result.data["cards"]] == ["todo", "done"]
        assert "Kept 1 card finished by someone else since your last write" in result.content
        assert f"'Write the fix' ({fix.id}) done. Send it unfinished again" in result.content
        assert result.data["kept_finished"] == [
            {"id": fix.id, "title": "Write the fix", "status": "done"}
        ]
        # Shown it now, the model that sends it open again reopens it.
        again = todo_write(tl, "Read the code", "Write the fix")
        assert tl.board("t").get().get(fix.id).status.value == "todo"
        assert "Kept" not in again.content


def test_a_replace_keeps_a_card_a_person_rejected_but_may_change_what_it_says(
    tl: Taskloom,
) -> None:
    card = dispatch(tl, "todo", {"op": "add", "content": "Migrate the db"}).data["card"]
    tl.board("t").update_status(card["id"], "rejected")
    cards = [{"id": card["id"], "content": "Migrate the db first", "status": "in_progress"}]
    result = dispatch(tl, "todo", {"op": "replace", "cards": cards})
    kept = tl.board("t").get().get(card["id"])
    assert (kept.title, kept.status.value) == ("Migrate the db first", "rejected")
    assert "which your list would reopen: 'Migrate the db' " in result.content
    dispatch(tl, "todo", {"op": "replace", "cards": cards})
    assert tl.board("t").get().get(card["id"]).status.value == "in_progress"


def test_a_list_that_names_a_persons_done_finished_changes_nothing_for_it(tl: Taskloom) -> None:
    card = dispatch(tl, "todo", {"op": "add", "content": "A"}).data["card"]
    tl.board("t").update_status(card["id"], "done")
    cards = [{"id": card["id"], "content": "A", "status": "completed"}]
    result = dispatch(tl, "todo", {"op": "replace", "cards": cards})
    assert tl.board("t").get().get(card["id"]).status.value == "done"
    assert "kept_finished" not in result.data
    assert "Kept" not in result.content
