"""Totals and means of the numbers an exact answer selects: "what is the total weight of
the crates bound for Porto?" sums every match, not only those shown."""

from __future__ import annotations

import json

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask


def _crates() -> list[dict[str, object]]:
    return [
        {
            "crate": f"cr-{i:04d}",
            "port": ("Porto", "Dakar", "Hull")[i % 3],
            "weightKg": 10 + (i * 37) % 490,
            "dims": {"volume": i % 9 + 1, "label": f"L{i}"},
        }
        for i in range(600)
    ]


def test_a_total_sums_every_match_of_a_number_field(tl: Taskloom) -> None:
    """The 200 matches were listed and shown in part; their total was nowhere."""
    crates = _crates()
    porto = [int(c["weightKg"]) for c in crates if c["port"] == "Porto"]  # type: ignore[call-overload]
    total, mean = ask(
        tl,
        json.dumps({"crates": crates}),
        "what is the total weightKg of the crates for port Porto?",
        "what is the average weightKg of crates for port Porto?",
    )
    assert f"over all {len(porto)} matches: {sum(porto)} (" in total
    assert f"min {min(porto)}, max {max(porto)}" in mean


def test_a_total_of_objects_reads_their_named_number_member(tl: Taskloom) -> None:
    crates = _crates()
    vol = sum(int(c["dims"]["volume"]) for c in crates if c["port"] == "Hull")  # type: ignore[index]
    (answer,) = ask(
        tl, json.dumps({"crates": crates}), "what is the combined dims volume for port Hull?"
    )
    assert f".dims.volume over all 200 matches: {vol} (" in answer


def test_a_count_or_a_plain_lookup_gets_no_total(tl: Taskloom) -> None:
    crates = _crates()
    count, lookup = ask(
        tl,
        json.dumps({"crates": crates}),
        "what is the total number of crates for port Dakar?",
        "what is the weightKg of cr-0007?",
    )
    assert "Total of" not in count and "Total of" not in lookup


def test_a_table_column_is_totalled_from_its_cells(tl: Taskloom) -> None:
    rows = [
        (f"n{i:03d}", ("red", "blue")[i % 2], f"{(i * 13) % 97 + 0.25:.2f}") for i in range(240)
    ]
    text = "node,colour,load\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows)
    blue = sum(float(c) for _a, b, c in rows if b == "blue")
    (answer,) = ask(tl, text, "what is the sum of load for colour blue?")
    assert f"over all 120 matches: {blue:g} (" in answer


def test_a_total_with_no_condition_reads_every_record_holding_the_field(tl: Taskloom) -> None:
    """A number only some records hold, asked for as a total with no condition, got the
    ranking of three records."""
    items: list[dict[str, object]] = []
    for i in range(300):
        item: dict[str, object] = {"slot": f"s{i}", "kind": ("disk", "nic", "cpu")[i % 3]}
        if i % 3 == 0:
            item["spec"] = {"capacity_gb": 100 + i}
        items.append(item)
    gold = sum(100 + i for i in range(0, 300, 3))
    (answer,) = ask(tl, json.dumps({"items": items}), "what is the total capacity_gb?")
    assert f"over all 100 matches: {gold} (" in answer
