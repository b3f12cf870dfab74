"""Table cells read as values: a tab-aligned cell's padding is no part of it; a value that
recurs in one column of many values reads as a condition on that column."""

from __future__ import annotations

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask


def test_a_tab_aligned_listing_reads_cells_without_their_padding(tl: Taskloom) -> None:
    rows = [
        (f"job-{i}", ("queued", "done", "lost")[i % 3], str(i * 7), f"team-{i % 4}")
        for i in range(90)
    ]
    head = ("JOB", "STATE", "TRIES", "OWNER")
    widths = [max(len(r[c]) for r in [head, *rows]) + 2 for c in range(3)]
    text = "".join(
        "".join(f"{r[c]:<{widths[c]}}\t" for c in range(3)) + r[3] + "\n" for r in [head, *rows]
    )
    count, owner = ask(tl, text, "How many jobs are lost?", "Which OWNER has job-41?")
    assert f"Exact count: {sum(r[1] == 'lost' for r in rows)} " in count
    assert '"team-1"' in owner


def _volumes() -> tuple[str, list[tuple[str, str, int]]]:
    rows = [("nfs" if i % 4 == 0 else f"plugin-{i}", f"vol_{i:03d}", 100 + i) for i in range(200)]
    text = f"{'DRIVER':<12}{'VOLUME':<10}SIZE_MB\n" + "".join(
        f"{d:<12}{v:<10}{s}\n" for d, v, s in rows
    )
    return text, rows


def test_a_value_that_recurs_in_a_column_of_many_values_is_a_condition(tl: Taskloom) -> None:
    text, rows = _volumes()
    (count,) = ask(tl, text, "How many nfs disks are there?")
    assert f"Exact count: {sum(r[0] == 'nfs' for r in rows)} " in count


def test_a_value_few_rows_hold_in_such_a_column_makes_no_count_of_every_row(tl: Taskloom) -> None:
    text, _rows = _volumes()
    (count,) = ask(tl, text, "How many ceph disks are there?")
    assert "Exact count" not in count
