"""An exact count never drops a condition: a word of the question that looks like a
condition but ties to no field or value makes the count not exact, naming the word; and a
field present in only some records ("failure", "error") is a condition its verb or noun
sets ("failed", "errored", "have a failure")."""

from __future__ import annotations

import json

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask

REGIONS = ("north", "south", "east")


def _parcels() -> list[dict[str, object]]:
    return [
        {"tracking": f"pc-{i:04d}", "region": REGIONS[i % 3], "grams": i * 7 % 300,
         "courier": f"courier{i % 4}"}
        for i in range(150)
    ]  # fmt: skip


def test_a_count_with_a_condition_no_field_holds_is_not_exact(tl: Taskloom) -> None:
    """ "how many parcels were refunded?" was "Exact count: 150", every parcel, though no
    field or value says refunded; and with a region read too, the count of that region."""
    text = json.dumps(_parcels())
    alone, beside, quoted = ask(
        tl,
        text,
        "how many parcels were refunded?",
        "how many parcels in region north were refunded?",
        "how many parcels have note 'fragile'?",
    )
    for answer, word in ((alone, "refunded"), (beside, "refunded"), (quoted, "fragile")):
        assert "Exact count" not in answer and "Not an exact count" in answer
        assert f"'{word}'" in answer and "could not be read as conditions" in answer


def test_a_count_whose_every_condition_is_read_stays_exact(tl: Taskloom) -> None:
    parcels = _parcels()
    text = json.dumps(parcels)
    north = sum(1 for p in parcels if p["region"] == "north")
    heavy = sum(1 for p in parcels if p["region"] == "south" and int(p["grams"]) > 200)  # type: ignore[call-overload]
    by_courier = sum(1 for p in parcels if p["courier"] == "courier2")
    answers = ask(
        tl,
        text,
        "how many parcels are there in region north?",
        "how many parcels in region south have grams over 200?",
        "how many parcels did courier courier2 deliver?",
        "How many parcels exist in this result?",
    )
    assert f"Exact count: {north} " in answers[0]
    assert f"Exact count: {heavy} " in answers[1]
    assert f"Exact count: {by_courier} " in answers[2]
    assert "Exact count: 150 " in answers[3]


def _junit(failing: set[int], skipped: set[int]) -> str:
    cases = []
    for i in range(90):
        inner = ""
        if i in failing:
            inner = f'<failure message="expected {i}">Traceback line {i}</failure>'
        elif i in skipped:
            inner = '<skipped message="no network"/>'
        cases.append(f'  <testcase classname="suite.s{i % 3}" name="check_{i}">{inner}</testcase>')
    return '<?xml version="1.0"?>\n<testsuite name="all">\n' + "\n".join(cases) + "\n</testsuite>\n"


def test_a_field_some_records_hold_is_a_condition_its_verb_sets(tl: Taskloom) -> None:
    """ "which tests failed?" over testcases of which only the failing hold a ``failure``
    was no exact list: "failed" tied to no field."""
    failing, skipped = {4, 17, 60}, {5, 6, 7, 8}
    listed, counted, had, passed = ask(
        tl,
        _junit(failing, skipped),
        "which tests failed?",
        "how many testcases failed?",
        "how many testcases have a failure?",
        "how many testcases did not fail?",
    )
    assert "Exact list: 3 row matches (matching failure is present" in listed
    assert all(f'name="check_{i}"' in listed for i in failing)
    assert "Exact count: 3 " in counted and "Exact count: 3 " in had
    assert "Exact count" not in passed  # a negated condition is no presence


def test_a_json_key_some_records_hold_is_a_condition_too(tl: Taskloom) -> None:
    jobs: list[dict[str, object]] = [
        {"name": f"j{i}", "queue": ("fast", "slow")[i % 2]} for i in range(120)
    ]
    for i in range(0, 120, 9):
        jobs[i]["error"] = f"boom {i}"
    jobs[1]["error"] = None  # null, as if absent
    errored = sum(1 for j in jobs if j.get("error"))
    in_a = sum(1 for j in jobs if j.get("error") and j["queue"] == "fast")
    answers = ask(
        tl, json.dumps(jobs), "how many jobs errored?", "how many jobs in queue fast have errors?"
    )
    assert f"Exact count: {errored} " in answers[0]
    assert f"Exact count: {in_a} " in answers[1]


def test_a_long_list_of_rows_names_every_match(tl: Taskloom) -> None:
    """A list of 15 failing testcases showed three rows and "12 more": the rows' names
    are listed whole before the rows."""
    failing = set(range(3, 90, 6))
    (listed,) = ask(tl, _junit(failing, set()), "which tests failed?")
    assert f"Exact list: {len(failing)} row matches" in listed
    assert "--- name of the matches in row order" in listed
    assert all(f'"check_{i}"' in listed for i in failing)


def test_a_pointing_word_sets_no_condition_of_a_count(tl: Taskloom) -> None:
    issues = [{"number": i, "state": "CLOSED" if i % 3 else "OPEN"} for i in range(300)]
    text = json.dumps({"data": {"issues": {"nodes": issues}}})
    (count,) = ask(tl, text, "how many of these issues are closed?")
    assert f"Exact count: {sum(i % 3 != 0 for i in range(300))} " in count


def test_an_un_word_counts_the_records_whose_field_it_names_is_absent(tl: Taskloom) -> None:
    """ "how many issues are unassigned?" over issues whose ``assignee`` is null when no one
    is: the word was read as no condition, and no count was given."""
    prs = [
        {"number": i, "reviewer": None if i % 6 == 0 else {"login": f"r{i % 4}"}, "draft": False}
        for i in range(240)
    ]
    (json_count,) = ask(tl, json.dumps(prs), "how many entries are unreviewed?")
    assert "Exact count: 40 " in json_count and "reviewer is absent" in json_count
    rows = "".join(f"h{i},{'' if i % 5 == 0 else 'ops'},{i % 3}\n" for i in range(300))
    (csv_count,) = ask(tl, "host,owner,rack\n" + rows, "How many hosts are unowned?")
    assert "Exact count: 60 " in csv_count
    (kept,) = ask(tl, "host,owner,rack\n" + rows, "How many hosts are unwound?")
    assert "is absent" not in kept


def test_the_subject_of_a_closing_verb_of_relation_names_the_result(tl: Taskloom) -> None:
    """ "how many hosts did the scan find?": ``scan`` is what made the result, not a
    condition on its rows; a subject before another verb stays one."""
    rows = "".join(
        f"10.1.{i // 200}.{i % 200},{('open', 'filtered')[i % 4 == 0]}\n" for i in range(450)
    )
    found, probed = ask(
        tl,
        "address,state\n" + rows,
        "how many hosts did the scan find?",
        "how many hosts did the scan probe?",
    )
    assert "Exact count: 450 " in found
    assert "Exact count" not in probed
