"""Top records by a number only their members hold: "which build has the most reruns?"
over builds holding ``stages: [{"rerunTotal": 2}, …]`` ranks the builds by the sum of
``rerunTotal`` over each build's stages."""

from __future__ import annotations

import json

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask


def _builds() -> list[dict[str, object]]:
    out = []
    for i in range(120):
        stages = [
            {"title": f"stage-{j}", "rerunTotal": (i * 7 + j * 3) % 5, "minutes": j + i % 9}
            for j in range(1 + i % 4)
        ]
        out.append({"build": f"bld-{i:03d}", "branch": ("main", "dev")[i % 2], "stages": stages})
    return out


def _sums(builds: list[dict[str, object]]) -> dict[str, int]:
    return {
        str(b["build"]): sum(int(s["rerunTotal"]) for s in b["stages"])  # type: ignore[attr-defined]
        for b in builds
    }


def test_records_rank_by_the_sum_of_a_number_their_members_hold(tl: Taskloom) -> None:
    """It was a tally of single stages' ``rerunTotal`` values, which names no build."""
    builds = _builds()
    sums = _sums(builds)
    top = sorted(sums.values(), reverse=True)[:3]
    (answer,) = ask(tl, json.dumps({"builds": builds}), "which build has the most reruns?")
    assert "sum of stages[*].rerunTotal per record" in answer
    assert f"{top[0]}, {top[1]}, {top[2]}" in answer
    best = max(sums, key=lambda k: sums[k])
    assert best in answer


def test_member_sums_keep_the_question_s_conditions(tl: Taskloom) -> None:
    builds = _builds()
    sums = {k: v for k, v in _sums(builds).items() if int(k[-3:]) % 2 == 1}  # branch dev
    low = sorted(sums.values())[:3]
    (answer,) = ask(
        tl, json.dumps({"builds": builds}), "which build on branch dev has the fewest reruns?"
    )
    assert "branch == 'dev'" in answer and "sum of stages[*].rerunTotal" in answer
    assert f"{low[0]}, {low[1]}, {low[2]}" in answer


def test_a_plain_field_or_asking_for_the_members_is_no_member_sum(tl: Taskloom) -> None:
    builds = _builds()
    for b in builds:
        b["reruns"] = int(str(b["build"])[-3:]) % 11
    text = json.dumps({"builds": builds})
    plain, members = ask(
        tl, text, "which build has the most reruns?", "which stage has the most reruns?"
    )
    assert "sum of" not in plain and "sum of" not in members


def _shelves() -> list[dict[str, object]]:
    out = []
    for i in range(90):
        books = [f"title-{i}-{j}" for j in range((i * 5) % 13)]
        out.append({"shelf": f"sh-{i:02d}", "room": ("north", "south")[i % 2], "bookList": books})
    return out


def test_records_rank_by_how_many_members_an_array_they_name_holds(tl: Taskloom) -> None:
    """It found no field for "books" (``bookList``) and ranked records by their words."""
    shelves = _shelves()
    sizes = {str(s["shelf"]): len(s["bookList"]) for s in shelves}  # type: ignore[arg-type]
    best = max(sizes, key=lambda k: (sizes[k], -int(k[3:])))
    most, fewest = ask(
        tl,
        json.dumps({"shelves": shelves}),
        "which shelf holds the most books?",
        "which shelf in room north has the fewest books?",
    )
    assert "number of bookList[*] members per record" in most
    assert best in most and "12, 12, 12" in most
    assert "room == 'north'" in fewest and "0, 0, 0" in fewest


def test_an_array_whose_members_are_asked_for_is_not_counted(tl: Taskloom) -> None:
    shelves = [
        {"shelf": f"sh-{i}", "books": [{"book": f"b{i}-{j}"} for j in range(i % 4)]}
        for i in range(60)
    ]
    (answer,) = ask(tl, json.dumps({"shelves": shelves}), "which book has the most books?")
    assert "members per record" not in answer


def test_every_record_sharing_the_best_value_is_named(tl: Taskloom) -> None:
    """Three of the tied records were shown and the others were not named, though each
    answers the question as well."""
    shelves = _shelves()
    tied = [str(s["shelf"]) for s in shelves if len(s["bookList"]) == 12]  # type: ignore[arg-type]
    (answer,) = ask(tl, json.dumps({"shelves": shelves}), "which shelf holds the most books?")
    assert f"{len(tied)} records share the highest value 12: {', '.join(tied)}." in answer
