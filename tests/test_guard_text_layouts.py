"""Questions on text laid out for people: fixed-width tables whose cells hold spaces."""

from __future__ import annotations

import json

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask

IMAGES = ("nginx:1.25", "redis:7", "postgres:16")
STATES = ("Up 3 hours", "Exited (1) 2 days ago", "Up 5 minutes")


def test_a_fixed_width_table_with_spaces_in_cells_is_read_by_its_columns(tl: Taskloom) -> None:
    rows = [(f"{i:012x}", IMAGES[i % 3], STATES[i % 7 % 3], f"svc_{i}") for i in range(60)]
    text = f"{'CONTAINER ID':<14}{'IMAGE':<13}{'STATUS':<24}NAMES\n" + "".join(
        f"{c:<14}{im:<13}{st:<24}{n}\n" for c, im, st, n in rows
    )
    gold = sum(1 for r in rows if r[1] == "redis:7")
    up = sum(1 for r in rows if r[1] == "redis:7" and r[2] == "Up 3 hours")
    count, both, status = ask(
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
    (count,) = ask(tl, head + body, "How many pods have NODE n2 and GATES x?")
    assert "Exact count: 10 " in count


def _log_with_tracebacks() -> str:
    out = []
    for i in range(80):
        out.append(f"2024-05-14 00:{i:02d}:00,100 INFO [w] app: processed job {i}")
        if i % 20 == 7:
            out += [
                f"2024-05-14 00:{i:02d}:30,500 ERROR [w] app: unhandled exception in job {i}",
                "Traceback (most recent call last):",
                '  File "/srv/app/a.py", line 10, in run',
                "    result = run(payload)",
                '  File "/srv/app/b.py", line 20, in fetch',
                "    result = fetch(payload)",
                f"KeyError: 'slot-{i}'",
            ]
    return "\n".join(out) + "\n"


def test_a_traceback_question_shows_the_exception_line_of_the_trace_it_names(
    tl: Taskloom,
) -> None:
    after, last = ask(
        tl,
        _log_with_tracebacks(),
        "What exception was raised in the traceback after the error at 2024-05-14 00:27:30,500?",
        "What was the exception of the last traceback?",
    )
    assert "KeyError: 'slot-27'" in after and "KeyError: 'slot-7'" not in after
    assert '  File "/srv/app/b.py", line 20, in fetch' in after
    assert "KeyError: 'slot-67'" in last and "4 tracebacks" in last


def test_a_java_stack_trace_shows_its_exception_and_its_cause(tl: Taskloom) -> None:
    lines = [f"12:00:{i:02d} WARN worker {i} thrown off: exception swallowed" for i in range(60)]
    lines += [
        'Exception in thread "main" java.lang.IllegalStateException: pool closed',
        "\tat com.acme.Pool.take(Pool.java:41)",
        "\tat com.acme.Main.main(Main.java:12)",
        "Caused by: java.io.IOException: broken pipe",
        "\tat com.acme.Net.write(Net.java:88)",
    ]
    (found,) = ask(tl, "\n".join(lines) + "\n", "Which exception was thrown?")
    assert "java.lang.IllegalStateException: pool closed" in found
    assert "Caused by: java.io.IOException: broken pipe" in found


def test_the_last_or_most_recent_record_is_answered_whole(tl: Taskloom) -> None:
    items = [
        {
            "number": 100 + i,
            "title": f"Bug {i} in parser",
            "created_at": f"2024-01-{i % 28 + 1:02d}",
        }
        for i in range(60)
    ]
    doc = json.dumps({"total_count": 60, "items": items})
    last, recent = ask(
        tl, doc, "What is the title of the last item?", "Which is the most recent item?"
    )
    assert '"title":"Bug 59 in parser"' in last and "$.items[59]" in last
    assert "$.items[55]" in recent and "latest created_at" in recent


def test_the_first_and_last_record_of_json_lines_and_a_log(tl: Taskloom) -> None:
    events = "".join(json.dumps({"id": f"e{i}", "ms": i * 3}) + "\n" for i in range(200))
    log = "".join(f"10:{i // 60:02d}:{i % 60:02d} INFO worker {i} ok\n" for i in range(300))
    (event,) = ask(tl, events, "Show the last event")
    (first,) = ask(tl, log, "What is the first entry?")
    assert '{"id": "e199", "ms": 597}' in event
    assert "10:00:00 INFO worker 0 ok" in first


def _services() -> str:
    out = ["apiVersion: v1", "kind: ServiceList", "services:"]
    for i in range(50):
        out += [
            f"  - name: svc-{i}",
            f"    tier: {('batch', 'web', 'cache')[i % 3]}",
            f"    replicas: {i % 4}",
            "    env:",
            f"      URL: http://h{i}.svc:80",
            "    ports: [80, 443]",
        ]
    return "\n".join(out) + "\n"


def test_a_yaml_list_of_records_answers_counts_exactly(tl: Taskloom) -> None:
    every, batch, lookup = ask(
        tl,
        _services(),
        "How many services are defined?",
        "How many services have tier batch and replicas 1?",
        "What is the tier of svc-31?",
    )
    assert "Exact count: 50 " in every
    gold = sum(1 for i in range(50) if i % 3 == 0 and i % 4 == 1)
    assert f"Exact count: {gold} " in batch
    assert "  - name: svc-31\n    tier: web" in lookup


def _frame() -> tuple[str, list[tuple[str, str, int, float]]]:
    """A data frame as printed for people: a row label column with no name above it."""
    rows = [
        (f"k{i:03d}", ("ash", "oak", "elm")[i % 3], 5 + i * 7 % 61, (i * 29) % 83 + 0.5)
        for i in range(150)
    ]
    labels = [f"r{i}" for i in range(len(rows))]
    w = max(len(x) for x in labels)
    head = " " * w + f"  {'code':>4}  {'wood':>4}  {'boards':>6}  {'board_len':>9}\n"
    body = "".join(
        f"{lab:<{w}}  {c:>4}  {wd:>4}  {b:>6}  {ln:>9.2f}\n"
        for lab, (c, wd, b, ln) in zip(labels, rows, strict=True)
    )
    return head + body, rows


def test_a_first_column_of_row_labels_with_no_name_is_the_index(tl: Taskloom) -> None:
    """The unnamed label column was read as the first named column, and every cell moved
    one column left."""
    text, rows = _frame()
    oak = sum(1 for r in rows if r[1] == "oak")
    count, lookup = ask(tl, text, "how many rows have wood oak?", "what is the boards of k007?")
    assert f"Exact count: {oak} " in count and "fixed-width table" in count
    assert "code == 'k007'" in lookup and f"[{rows[7][2]}]" in lookup


def test_a_number_field_written_whole_ranks_over_one_sharing_its_stem(tl: Taskloom) -> None:
    """ "board_len" and "boards" share the stem "board": neither ranked the rows."""
    text, rows = _frame()
    best = max(rows, key=lambda r: r[3])
    (answer,) = ask(tl, text, "which code has the highest board_len?")
    assert "with the highest board_len" in answer and best[0] in answer
