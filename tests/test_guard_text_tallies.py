"""Questions on records that need more than a filter: a level written in lower case, a
value written before its field, a number id, a value past the indexed ones, a tally of a
field, the last record, a table whose cells hold spaces."""

from __future__ import annotations

import json

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask


def test_a_lower_case_level_word_counts_log_lines_bare_or_bracketed(tl: Taskloom) -> None:
    levels = ("notice", "error", "warn", "notice", "crit")
    lines = [
        f"2023/11/01 10:00:{i % 60:02d} [{levels[i % 5]}] {i}#0: up{i % 2}" for i in range(300)
    ]
    bracketed, bare, absent = ask(
        tl,
        "\n".join(lines) + "\n",
        "How many [error] lines?",
        "How many crit lines for up1?",
        "How many fatal lines?",
    )
    assert "Exact count: 60 " in bracketed
    assert "Exact count: 30 " in bare
    assert "Exact count" not in absent


def test_a_value_written_before_its_field_is_a_condition_in_json_lines(tl: Taskloom) -> None:
    actions = ("read", "write", "delete")
    events = [
        {
            "action": actions[i % 3],
            "actor": {"name": f"svc-{i % 7}", "kind": ("bot", "human")[i % 2]},
        }
        for i in range(300)
    ]
    gold = sum(1 for e in events if e["action"] == "delete" and e["actor"]["kind"] == "human")
    jsonl = "".join(json.dumps(e) + "\n" for e in events)
    (count,) = ask(tl, jsonl, "how many delete actions by a human actor?")
    assert f"Exact count: {gold:,} " in count
    assert "action == 'delete'" in count and "actor.kind == 'human'" in count


def test_a_number_after_a_word_is_the_id_of_the_field_that_word_names(tl: Taskloom) -> None:
    orders = [
        {"id": 5000 + i, "status": ("paid", "shipped")[i % 2], "customer": {"id": 100 + i % 40}}
        for i in range(200)
    ]
    doc = json.dumps({"data": orders})
    lookup, count, top = ask(
        tl,
        doc,
        "What is the status of order 5013?",
        "How many orders did customer 117 place?",
        "What is the status of the top 5 orders?",
    )
    assert "$.data[?@.id==5013].status" in lookup and '["shipped"]' in lookup
    assert "Exact count: 5 " in count and "@.customer.id==117" in count
    assert "==5]" not in top and "==5)" not in top


def test_an_id_past_the_indexed_values_is_found_by_its_shape(tl: Taskloom) -> None:
    events = [
        {"request_id": f"req-{i:05d}-{(i * 7919) % 65536:04x}", "latency_ms": i % 997}
        for i in range(3000)
    ]
    late = events[2718]
    jsonl = "".join(json.dumps(e) + "\n" for e in events)
    (lookup,) = ask(tl, jsonl, f"latency_ms of request {late['request_id']}")
    assert f"request_id == '{late['request_id']}'" in lookup
    assert f'"latency_ms": {late["latency_ms"]}' in lookup


def test_a_field_asked_with_most_or_distinct_is_tallied_over_the_selected_records(
    tl: Taskloom,
) -> None:
    levels = ("INFO", "ERROR", "INFO", "WARN")
    services = ("billing", "auth", "search", "search", "auth")
    events = [{"level": levels[i % 4], "service": services[i % 5]} for i in range(400)]
    errors = {s: 0 for s in set(services)}
    for e in events:
        errors[e["service"]] += e["level"] == "ERROR"
    jsonl = "".join(json.dumps(e) + "\n" for e in events)
    most, distinct = ask(
        tl, jsonl, "Which service has the most errors?", "Which services appear in the log?"
    )
    assert "matching level == 'ERROR'" in most
    assert all(f'"{s}": {n:,}' in most for s, n in errors.items())
    assert "every one of the 400 rows" in distinct and '"search": 160' in distinct


def test_a_number_field_asked_with_most_ranks_the_records_by_it(tl: Taskloom) -> None:
    ps = "USER PID RSS COMMAND\n" + "".join(
        f"u{i % 3} {100 + i} {(i * 7919) % 10007} prog-{i}\n" for i in range(300)
    )
    (top,) = ask(tl, ps, "Which process uses the most RSS memory?")
    best = max(range(300), key=lambda i: (i * 7919) % 10007)
    assert "highest RSS" in top and f"prog-{best}" in top


def test_a_question_holding_only_a_timestamp_reads_the_rows_that_hold_it(tl: Taskloom) -> None:
    events = [
        {"ts": f"2024-03-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z", "msg": f"m{i}"}
        for i in range(0, 9000, 3)
    ]
    jsonl = "".join(json.dumps(e) + "\n" for e in events)
    (at,) = ask(tl, jsonl, f"What happened at {events[2500]['ts']}?")
    assert f"ts == '{events[2500]['ts']}'" in at and '"msg": "m7500"' in at


def test_a_field_of_few_values_asked_with_most_and_a_number_field_ranks_by_the_number(
    tl: Taskloom,
) -> None:
    commands = ("nginx", "node", "java")
    ps = "PID %CPU COMMAND\n" + "".join(
        f"{100 + i} {(i * 7919) % 1000 / 10:.1f} {commands[i % 3]}\n" for i in range(299)
    ) + "399 99.5 ffmpeg\n"  # fmt: skip
    (top,) = ask(tl, ps, "Which command is using the most CPU?")
    assert "highest %CPU" in top and "399 99.5 ffmpeg" in top
    assert "not summed" in top
    assert "Tally of COMMAND" not in top  # how often each command occurs is not asked
