"""Counts and lookups over values held in an array inside each record: a label's name, a
tag, a reviewer's login."""

from __future__ import annotations

import json
from typing import Any

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask

KINDS = ("crash", "perf", "docs", "help wanted")


def _issues() -> list[dict[str, Any]]:
    return [
        {
            "num": 700 + i,
            "headline": f"Problem {i}",
            "status": ("open", "closed")[i % 2],
            "labels": [
                {"id": 9000 + j, "name": KINDS[j], "colour": f"{j}{j}aa00"}
                for j in range(4)
                if (i + j) % 3 == 0
            ],
        }
        for i in range(90)
    ]


def test_a_count_matches_a_value_against_the_names_of_member_objects(tl: Taskloom) -> None:
    issues = _issues()
    crash = sum(1 for r in issues if any(x["name"] == "crash" for x in r["labels"]))
    helped = [
        r
        for r in issues
        if r["status"] == "open" and any(x["name"] == "help wanted" for x in r["labels"])
    ]
    one, two = ask(
        tl,
        json.dumps(issues),
        "How many issues have the label crash?",
        "How many issues have label 'help wanted' and status open?",
    )
    assert f"Exact count: {crash} " in one
    assert "[?@.labels[?@.name=='crash']]" in one
    assert f"Exact count: {len(helped)} " in two
    assert "@.labels[?@.name=='help wanted']" in two and "@.status=='open'" in two


def _tickets() -> dict[str, Any]:
    tags = ("Urgent", "db", "frontend", "billing")
    return {
        "data": {
            "page": 1,
            "tickets": [
                {
                    "key": f"OPS-{i}",
                    "detail": {"tagList": [tags[k] for k in range(4) if i % (k + 2) == 0]},
                    "reviewers": [{"handle": f"dev{(i + k) % 5}", "vote": "+1"} for k in range(2)],
                }
                for i in range(70)
            ],
        }
    }


def test_a_nested_array_of_strings_answers_counts_and_lists_in_any_case(tl: Taskloom) -> None:
    doc = _tickets()
    tickets = doc["data"]["tickets"]
    urgent = [t["key"] for t in tickets if "Urgent" in t["detail"]["tagList"]]
    billing = [t["key"] for t in tickets if "billing" in t["detail"]["tagList"]]
    count, listed = ask(
        tl,
        json.dumps(doc),
        "How many tickets have the tag list urgent?",
        "Which tickets are tagged billing?",
    )
    assert f"Exact count: {len(urgent)} " in count
    assert "[?@.detail.tagList[?@=='Urgent']]" in count
    assert f"Exact list: {len(billing)} matches" in listed
    assert all(f'"key":"{k}"' in listed for k in billing[:3])


def test_a_lookup_reads_a_member_objects_other_name_like_field(tl: Taskloom) -> None:
    doc = _tickets()
    tickets = doc["data"]["tickets"]
    gold = sum(1 for t in tickets if any(r["handle"] == "dev3" for r in t["reviewers"]))
    (count,) = ask(tl, json.dumps(doc), "How many tickets have reviewer dev3?")
    assert f"Exact count: {gold} " in count
    assert "@.reviewers[?@.handle=='dev3']" in count


def test_a_path_a_member_nests_deeper_is_a_condition_on_its_records(tl: Taskloom) -> None:
    """A value nested two objects deep in a list's members (a file path under
    ``origin.source.file``), among many distinct paths: it was read as no condition. A
    member holding values of its own is read no deeper: the count of members in a state
    stays the members' own group's."""
    files = [f"pkg/{d}/{n}.go" for d in ("core", "net", "db", "ui", "cli") for n in "abcdefgh"]
    builds = [
        {
            "id": f"b{i}",
            "steps": [
                {"origin": {"source": {"file": files[(i * k) % len(files)]}}} for k in (1, 3)
            ],
        }
        for i in range(300)
    ]
    gold = sum(
        any(s["origin"]["source"]["file"] == "pkg/net/c.go" for s in b["steps"]) for b in builds
    )
    (count,) = ask(tl, json.dumps(builds), "how many builds touch pkg/net/c.go?")
    assert f"Exact count: {gold} " in count

    hosts = [
        {"id": f"g{g}", "nodes": [
            {"node": f"n{g}-{k}", "status": {"phase": ("up", "down")[(g + k) % 3 == 0]}}
            for k in range(3)
        ]}
        for g in range(100)
    ]  # fmt: skip
    down = sum((g + k) % 3 == 0 for g in range(100) for k in range(3))
    (nodes,) = ask(tl, json.dumps({"groups": hosts}), "how many nodes are down?")
    assert f"Exact count: {down} " in nodes


def test_a_key_value_tag_held_by_list_members_is_a_condition(tl: Taskloom) -> None:
    """``zone:b`` sits among 60 distinct tags: a value of so many was no condition alone."""
    hosts = [
        {"host": f"h{i}", "labels": [f"rack:r{i % 29}", f"zone:{'abc'[i % 3]}", f"n{i % 31}"]}
        for i in range(150)
    ]
    gold = sum(1 for h in hosts if "zone:b" in h["labels"])
    (answer,) = ask(tl, json.dumps({"hosts": hosts}), "how many hosts carry zone:b?")
    assert f"Exact count: {gold} " in answer
