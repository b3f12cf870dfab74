"""Counts and lookups over records that hold a list of records: the count's noun says
whether the records or the matching members are counted; a list's emptiness; key/value
pairs read as fields."""

from __future__ import annotations

import json
from typing import Any

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask

SKUS = ("sku-red", "sku-blue", "sku-green")


def _orders() -> list[dict[str, Any]]:
    return [
        {
            "order_id": f"ord-{1000 + i}",
            "status": ("paid", "refunded")[i % 2],
            "items": [{"sku": SKUS[(i + k) % 3], "qty": k + 1} for k in range(i % 5)]
            + [{"sku": "sku-red", "qty": 9} for _ in range(i % 3 == 0)],
        }
        for i in range(120)
    ]


def _suites() -> dict[str, Any]:
    return {
        "run": {
            "suites": [
                {
                    "title": f"suite {i}",
                    "cases": [
                        {"case": f"c{i}-{k}", "outcome": ("pass", "fail", "skip")[(i + k) % 3]}
                        for k in range(i % 6)
                    ],
                }
                for i in range(90)
            ]
        }
    }


def _pods() -> list[dict[str, Any]]:
    return [
        {
            "podName": f"web-{i}",
            "phase": ("Running", "Pending")[i % 4 == 0],
            "containers": [
                {"image": ("nginx:1.25", "envoy:1.30")[k > 0], "restarts": 2 * (k > 0)}
                for k in range(1 + i % 3)
            ],
            "labels": [
                {"key": "app", "value": f"shop{i % 3}"},
                {"key": "owner", "value": f"team-{i}"},
            ],
        }
        for i in range(100)
    ]


def test_a_count_whose_noun_names_the_list_counts_its_matching_members(tl: Taskloom) -> None:
    orders = _orders()
    items = sum(1 for o in orders for it in o["items"] if it["sku"] == "sku-red")
    held = sum(1 for o in orders if any(it["sku"] == "sku-red" for it in o["items"]))
    assert items != held
    by_item, by_order = ask(
        tl,
        json.dumps(orders),
        "How many sku-red items are there?",
        "How many orders hold sku-red?",
    )
    assert f"Exact count: {items} " in by_item
    assert "$[*].items[?@.sku=='sku-red']" in by_item
    assert f"Exact count: {held} " in by_order


def test_a_count_whose_noun_names_neither_is_refused_with_both_counts(tl: Taskloom) -> None:
    doc = _suites()
    suites = doc["run"]["suites"]
    failed = sum(1 for s in suites for c in s["cases"] if c["outcome"] == "fail")
    holding = sum(1 for s in suites if any(c["outcome"] == "fail" for c in s["cases"]))
    assert failed != holding
    (out,) = ask(tl, json.dumps(doc), "How many fail results are there?")
    assert "Exact count" not in out
    assert f"the {holding:,} records holding a match" in out
    assert f"the {failed:,} matching members of their cases" in out


def test_a_count_of_records_or_entries_counts_the_members_that_hold_the_field(
    tl: Taskloom,
) -> None:
    """The nouns "records" and "entries" name no collection: the records that have a field are the
    members that hold it, not the records around them (a schema's definitions, each with a
    list of group/version/kind entries, were refused as either)."""
    doc = _suites()
    suites = doc["run"]["suites"]
    failed = sum(1 for s in suites for c in s["cases"] if c["outcome"] == "fail")
    holding = sum(1 for s in suites if any(c["outcome"] == "fail" for c in s["cases"]))
    assert failed != holding
    records, entries = ask(
        tl,
        json.dumps(doc),
        "How many records have outcome fail?",
        "How many entries have outcome fail?",
    )
    assert f"Exact count: {failed} " in records
    assert f"Exact count: {failed} " in entries


def test_a_count_of_records_named_by_their_collection_stays_a_count_of_records(
    tl: Taskloom,
) -> None:
    doc = _suites()
    suites = doc["run"]["suites"]
    holding = sum(1 for s in suites if any(c["outcome"] == "fail" for c in s["cases"]))
    (out,) = ask(tl, json.dumps(doc), "How many suites have outcome fail?")
    assert f"Exact count: {holding} " in out


def test_a_list_named_after_have_no_or_without_is_empty(tl: Taskloom) -> None:
    doc = _suites()
    empty = sum(1 for s in doc["run"]["suites"] if not s["cases"])
    one, two = ask(
        tl,
        json.dumps(doc),
        "How many suites have no cases?",
        "How many suites without cases are there?",
    )
    assert f"Exact count: {empty} " in one
    assert "length(@.cases)==0" in one
    assert f"Exact count: {empty} " in two


def test_a_count_of_records_named_by_a_field_of_theirs_counts_the_holders(tl: Taskloom) -> None:
    pods = _pods()
    held = [
        p
        for p in pods
        if any(c["image"] == "envoy:1.30" and c["restarts"] == 2 for c in p["containers"])
    ]
    assert len(held) != sum(len(p["containers"]) - 1 for p in held)
    (out,) = ask(tl, json.dumps(pods), "How many pods have image envoy:1.30 and restarts 2?")
    assert f"Exact count: {len(held)} " in out
    assert "$[?@.containers[?@.image=='envoy:1.30' && @.restarts==2]]" in out


def test_a_key_value_pair_list_reads_as_fields_of_its_record(tl: Taskloom) -> None:
    pods = _pods()
    shop1 = sum(
        1 for p in pods if any(t["key"] == "app" and t["value"] == "shop1" for t in p["labels"])
    )
    listed, counted = ask(
        tl,
        json.dumps(pods),
        "Which pod is labelled owner=team-42?",
        "How many pods have app=shop1?",
    )
    assert "[?@.labels[?@.key=='owner' && @.value=='team-42']]" in listed
    assert '"podName":"web-42"' in listed
    assert f"Exact count: {shop1} " in counted


def test_a_lookup_by_a_members_value_shows_that_member(tl: Taskloom) -> None:
    doc = {
        "groups": [
            {
                "gid": f"g{i}",
                "nodes": [{"nodeId": f"n-{i}-{k}x9", "addr": f"10.0.{i}.{k}"} for k in range(3)],
            }
            for i in range(60)
        ]
    }
    (out,) = ask(tl, json.dumps(doc), "what is the address of n-17-2x9?")
    assert "$.groups[*].nodes[?@.nodeId=='n-17-2x9']" in out
    assert "10.0.17.2" in out
