"""Text results that are tables drawn with markup rather than delimiters: a SQL client's
bordered table, an HTML page's table and an XML document's repeated elements, each read
as records so a count or a lookup is exact."""

from __future__ import annotations

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask

SHIPS = ("ground", "air", "sea")
DEPOTS = ("Reno", "Gdansk", "Pune")


def _parcels() -> list[list[str]]:
    return [[f"P{5000 + i}", SHIPS[i % 3], DEPOTS[i % 7 % 3], str(i * 13 % 97)] for i in range(240)]


def test_a_boxed_sql_client_table_is_read_by_its_cells(tl: Taskloom) -> None:
    rows = _parcels()
    head = ["tracking", "shipping_mode", "depot", "grams"]
    border = "+" + "+".join("-" * 16 for _ in head) + "+"

    def line(cells: list[str]) -> str:
        return "|" + "|".join(f" {c:<14} " for c in cells) + "|"

    text = "\n".join([border, line(head), border, *map(line, rows), border, "240 rows in set"])
    gold = sum(1 for r in rows if r[1] == "sea" and r[2] == "Pune")
    count, lookup = ask(
        tl, text, "how many parcels with shipping_mode sea at depot Pune?", "depot of parcel P5117"
    )
    assert f"Exact count: {gold:,} " in count
    assert "bordered table" in count
    assert f'["{rows[117][2]}"]' in lookup and "--- line 121\n| P5117" in lookup


def test_a_ruled_table_with_no_outer_bars_is_read_too(tl: Taskloom) -> None:
    rows = _parcels()
    text = " tracking | depot\n--------+-------\n" + "".join(f" {r[0]} | {r[2]}\n" for r in rows)
    text += "(240 rows)\n"
    (count,) = ask(tl, text, "how many parcels at depot Reno?")
    assert f"Exact count: {sum(1 for r in rows if r[2] == 'Reno'):,} " in count


def test_an_html_table_is_read_as_records_named_by_its_header_cells(tl: Taskloom) -> None:
    rows = _parcels()
    body = "".join("<tr>\n" + "".join(f"  <td> {c} </td>\n" for c in r) + "</tr>\n" for r in rows)
    text = (
        "<html><body><p>Parcels</p>\n<table><tr><th>Tracking</th><th>Mode</th><th>Depot</th>"
        f"<th>Grams</th></tr>\n{body}</table></body></html>\n"
    )
    gold = sum(1 for r in rows if r[1] == "air" and r[2] == "Gdansk")
    count, lookup = ask(
        tl, text, "How many parcels with Mode air and Depot Gdansk?", "Grams of P5031"
    )
    assert f"Exact count: {gold:,} " in count and "HTML table" in count
    assert f"[{rows[31][3]}]" in lookup


def test_xml_elements_are_records_and_an_empty_child_is_a_flag(tl: Taskloom) -> None:
    items = []
    for i in range(300):
        held = "<onhold reason='customs'/>" if i % 11 == 0 else ""
        items.append(
            f'  <shipment ref="S{i:04d}" carrier="{SHIPS[i % 3]}">'
            f"<dest>{DEPOTS[i % 5 % 3]}</dest>{held}</shipment>"
        )
    text = '<?xml version="1.0"?>\n<manifest>\n' + "\n".join(items) + "\n</manifest>\n"
    count, held, lookup = ask(
        tl,
        text,
        "how many shipments by carrier air to Pune?",
        "how many shipments are onhold?",
        "dest of shipment S0123",
    )
    gold = sum(1 for i in range(300) if SHIPS[i % 3] == "air" and DEPOTS[i % 5 % 3] == "Pune")
    assert f"Exact count: {gold:,} " in count and "XML table" in count
    assert f"Exact count: {len(range(0, 300, 11)):,} " in held
    assert f'["{DEPOTS[123 % 5 % 3]}"]' in lookup


def test_xml_with_a_doctype_is_not_read_so_no_entity_expands(tl: Taskloom) -> None:
    rows = "\n".join(f'<row id="{i}" kind="k{i % 4}"/>' for i in range(200))
    text = f'<?xml version="1.0"?>\n<!DOCTYPE t [<!ENTITY x "xx">]>\n<t>\n{rows}\n</t>\n'
    (count,) = ask(tl, text, "how many rows of kind k2?")
    assert "XML table" not in count
