"""A true-or-false field is named by its adjective: "direct" for ``isDirect``, "private"
for ``is_private``, "wiki" for ``hasWiki``, "archived" for ``archived``; negated ("not",
"non-", "without") it selects the records where the field is false."""

from __future__ import annotations

import json

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask

GRADES = ("low", "moderate", "high", "critical")


def _advisories() -> list[dict[str, object]]:
    return [
        {"package": f"pkg-{i:04d}", "grade": GRADES[i % 4], "isDirect": i % 3 == 0,
         "patchReady": i % 5 == 0}
        for i in range(240)
    ]  # fmt: skip


def _projects() -> list[dict[str, object]]:
    return [
        {"slug": f"proj-{i:03d}", "is_private": i % 4 == 1, "hasWiki": i % 3 != 0,
         "archived": i % 6 == 2, "stars": i * 13 % 97}
        for i in range(180)
    ]  # fmt: skip


def test_an_adjective_names_a_prefixed_true_or_false_field(tl: Taskloom) -> None:
    """ "how many critical advisories are direct?" was not exact: 'direct' tied to no field,
    though ``isDirect`` says it. A noun beside it that ties to nothing ("in direct
    dependencies") still makes the count not exact."""
    rows = _advisories()
    direct = sum(1 for r in rows if r["grade"] == "critical" and r["isDirect"])
    indirect = sum(1 for r in rows if r["grade"] == "critical" and not r["isDirect"])
    answers = ask(
        tl,
        json.dumps({"advisories": rows}),
        "how many critical advisories are direct?",
        "how many critical advisories are not direct?",
        "how many critical advisories are in direct dependencies?",
    )
    assert f"Exact count: {direct} " in answers[0] and "isDirect == true" in answers[0]
    assert f"Exact count: {indirect} " in answers[1] and "isDirect == false" in answers[1]
    assert "Exact count" not in answers[2] and "'dependencies'" in answers[2]


def test_snake_case_has_prefixes_and_non_prefixes_read_as_flags(tl: Taskloom) -> None:
    rows = _projects()
    private = sum(1 for r in rows if r["is_private"])
    no_wiki = sum(1 for r in rows if not r["hasWiki"])
    live_private = sum(1 for r in rows if r["is_private"] and not r["archived"])
    answers = ask(
        tl,
        json.dumps(rows),
        "how many projects are private?",
        "how many projects are without a wiki?",
        "how many non-archived projects are private?",
    )
    assert f"Exact count: {private} " in answers[0]
    assert f"Exact count: {no_wiki} " in answers[1]
    assert f"Exact count: {live_private} " in answers[2]


def test_an_adjective_of_no_true_or_false_field_still_refuses(tl: Taskloom) -> None:
    """ "stars" holds numbers, not flags: "starred" is no condition on it, so the count is
    not exact."""
    (answer,) = ask(tl, json.dumps(_projects()), "how many projects are starred?")
    assert "Exact count" not in answer and "'starred'" in answer


def test_a_column_of_true_and_false_spelled_as_text_is_a_flag(tl: Taskloom) -> None:
    """A table writes its booleans as text (``Yes``/``No``; ``psql``'s ``t``/``f``): the
    adjective that names the column was read as no condition."""
    rows = [
        (f"user{i}", ("admin", "dev", "ops")[i % 3], ("Yes", "No")[i % 4 == 0]) for i in range(240)
    ]
    text = "login,role,enabled\n" + "".join(",".join(r) + "\n" for r in rows)
    on, off = ask(
        tl, text, "how many enabled users have role admin?", "how many users are not enabled?"
    )
    gold_on = sum(r[1] == "admin" and r[2] == "Yes" for r in rows)
    assert f"Exact count: {gold_on} " in on and "enabled == 'Yes'" in on
    assert f"Exact count: {sum(r[2] == 'No' for r in rows)} " in off
