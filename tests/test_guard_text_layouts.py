"""Questions on text laid out for people: fixed-width tables whose cells hold spaces."""

from __future__ import annotations

from taskloom.client import Taskloom
from taskloom.guard import GuardConfig

TIGHT = GuardConfig(threshold_tokens=60, compacted_max_tokens=10, preview_chars=200)
IMAGES = ("nginx:1.25", "redis:7", "postgres:16")
STATES = ("Up 3 hours", "Exited (1) 2 days ago", "Up 5 minutes")


def _ask(tl: Taskloom, text: str, *questions: str) -> list[str]:
    g = tl.guard("t1", config=TIGHT)
    rid = g.stash("tool", text).result_id
    assert rid
    return [g.extract(rid, q) for q in questions]


def test_a_fixed_width_table_with_spaces_in_cells_is_read_by_its_columns(tl: Taskloom) -> None:
    rows = [(f"{i:012x}", IMAGES[i % 3], STATES[i % 7 % 3], f"svc_{i}") for i in range(60)]
    text = f"{'CONTAINER ID':<14}{'IMAGE':<13}{'STATUS':<24}NAMES\n" + "".join(
        f"{c:<14}{im:<13}{st:<24}{n}\n" for c, im, st, n in rows
    )
    gold = sum(1 for r in rows if r[1] == "redis:7")
    up = sum(1 for r in rows if r[1] == "redis:7" and r[2] == "Up 3 hours")
    count, both, status = _ask(
        tl,
        text,
        "How many containers run redis:7?",
        "How many containers have IMAGE redis:7 and STATUS 'Up 3 hours'?",
        "What is the STATUS of svc_7?",
    )
    assert f"Exact count: {gold:,} " in count
    assert f"Exact count: {up:,} " in both
    assert f"{rows[7][0]:<14}{rows[7][1]:<13}{rows[7][2]:<24}svc_7" in status


def test_a_two_word_header_over_aligned_cells_is_one_column(tl: Taskloom) -> None:
    head = f"{'NAME':<10}{'READY':<7}{'NODE':<8}{'NOMINATED NODE':<16}GATES\n"
    body = "".join(
        f"{f'pod-{i}':<10}{'1/1':<7}{f'n{i % 4}':<8}{'<none>':<16}{'<none>' if i % 2 else 'x'}\n"
        for i in range(40)
    )
    (count,) = _ask(tl, head + body, "How many pods have NODE n2 and GATES x?")
    assert "Exact count: 10 " in count
