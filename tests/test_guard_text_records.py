"""Questions on text results that hold records or sections: a CSV/TSV export, JSON Lines,
a `ps`-like table, a log with level words, a Markdown document."""

from __future__ import annotations

import json
import re

from taskloom.client import Taskloom
from taskloom.guard import GuardConfig

TIGHT = GuardConfig(threshold_tokens=60, compacted_max_tokens=10, preview_chars=200)
PLANS = ("free", "team", "business")
COUNTRIES = ("DE", "FR", "US")


def ask(tl: Taskloom, text: str, *questions: str) -> list[str]:
    g = tl.guard("t1", config=TIGHT)
    rid = g.stash("tool", text).result_id
    assert rid
    return [g.extract(rid, q) for q in questions]


def _users() -> list[list[str]]:
    return [
        [str(100 + i), f"u{i}@example.com", COUNTRIES[i % 3], PLANS[i % 7 % 3], f'"note, {i}"']
        for i in range(300)
    ]


def test_csv_rows_answer_an_exact_count_with_two_conditions_and_a_lookup(tl: Taskloom) -> None:
    rows = _users()
    text = "id,email,country,plan,notes\n" + "".join(",".join(r) + "\n" for r in rows)
    gold = sum(1 for r in rows if r[2] == "FR" and r[3] == "team")
    count, holder = ask(
        tl,
        text,
        "How many users have country FR and plan team?",
        "Which user has u117@example.com",
    )
    assert f"Exact count: {gold:,} " in count
    assert "country == 'FR'" in count and "plan == 'team'" in count
    assert "Header (line 1): id,email,country,plan,notes" in holder
    assert '--- line 119\n217,u117@example.com,DE,business,"note, 117"' in holder


def test_tsv_and_a_ps_table_are_read_by_their_header(tl: Taskloom) -> None:
    rows = [(f"ORD-{i}", ("shipped", "pending")[i % 2 and i % 5 != 0]) for i in range(200)]
    tsv = "order_id\tstatus\tqty\n" + "".join(f"{o}\t{s}\t{i}\n" for i, (o, s) in enumerate(rows))
    gold = sum(1 for _o, s in rows if s == "pending")
    users = ("root", "postgres", "redis")
    ps = "USER PID %CPU COMMAND\n" + "".join(
        f"{users[i % 3]:<9}{i * 7 + 1:>6} 0.{i % 10} /usr/bin/prog --flag {i}\n" for i in range(200)
    )
    (count,) = ask(tl, tsv, "How many orders are pending?")
    owned, command = ask(tl, ps, "How many processes does user redis own?", "command of PID 701")
    assert f"Exact count: {gold:,} " in count
    assert "Exact count: 66 " in owned
    assert "/usr/bin/prog --flag 100" in command


def test_a_value_the_question_names_beside_a_condition_is_a_condition_too(tl: Taskloom) -> None:
    levels = ("INFO", "ERROR", "WARN", "INFO")
    services = ("billing", "auth", "search")
    events = [
        {"level": levels[i % 4], "service": services[i % 3], "request_id": f"req-{i:05d}-a{i % 9}"}
        for i in range(600)
    ]
    gold = sum(1 for e in events if e["level"] == "ERROR" and e["service"] == "billing")
    jsonl = "".join(json.dumps(e) + "\n" for e in events)
    count, lookup = ask(
        tl, jsonl, "How many ERROR events from service billing?", "service of req-00437-a5"
    )
    (as_json,) = ask(tl, json.dumps(events), "How many ERROR events from service billing?")
    assert f"Exact count: {gold:,} " in count and f"Exact count: {gold:,} " in as_json
    assert "level == 'ERROR'" in count
    assert '"request_id": "req-00437-a5"' in lookup and '"service": "search"' in lookup


def test_a_count_of_log_lines_by_level_word_is_exact_and_says_what_it_counts(
    tl: Taskloom,
) -> None:
    lines = []
    for i in range(400):
        level = ("INFO", "ERROR", "WARNING", "INFO", "DEBUG")[i % 5]
        logger = ("app.db", "app.http")[i % 2]
        lines.append(f"2024-05-14 00:{i // 60:02d}:{i % 60:02d} {level} {logger}: job {i} ERRORS=0")
    text = "\n".join(lines) + "\n"
    errors, warnings, unknown = ask(
        tl,
        text,
        "How many ERROR lines are in the log?",
        "How many WARNING lines from app.http?",
        "How many FATAL lines?",
    )
    assert "Exact count: 80 (lines holding the word 'ERROR' whole" in errors
    assert "Exact count: 40 " in warnings
    assert "Exact count" not in unknown


def test_a_markdown_heading_named_by_the_question_returns_its_section_whole(
    tl: Taskloom,
) -> None:
    parts = ["# Service"]
    for name in ("Install", "Quick start", "Configuration", "Testing"):
        body = "\n\n".join(f"{name} paragraph {k} " + "words " * 40 for k in range(4))
        parts.append(f"## {name}\n\n{body}\n\n### {name} details\n\n{name} detail end.\n")
    (section, details) = ask(
        tl, "\n".join(parts), "Show the Quick start section.", "quick start details"
    )
    assert "method: Markdown section" in section
    assert "Quick start paragraph 0" in section and "Quick start detail end." in section
    assert "## Configuration" not in section
    assert "### Quick start details" in details and "Quick start paragraph 0" not in details


def test_line_numbers_of_records_and_log_lines_follow_the_one_line_rule(tl: Taskloom) -> None:
    """A form feed or a U+2028 inside a line split it in two for the table, line count and
    trace readers, so the line numbers they named pointed past the lines they meant."""
    lines = []
    for i in range(300):
        level = ("INFO", "ERROR", "INFO")[i % 3]
        note = "page\x0cbreak\u2028next" if level == "INFO" else "failed"
        lines.append(f"2024-05-14 00:{i // 60:02d}:{i % 60:02d} {level} app: job {i} {note}")
    g = tl.guard("t1", config=TIGHT)
    rid = g.stash("tool", "\n".join(lines) + "\n").result_id or ""
    answer = g.extract(rid, "How many ERROR lines are in the log?")
    assert "Exact count: 100 " in answer
    named = [int(n) for n in re.findall(r"^--- line (\d+)$", answer, re.M)]
    assert named == [2, 5, 8]
    for n in named:
        assert g.read(rid, lines=f"{n}-{n}").split("\n", 1)[1] == lines[n - 1]
    rows = [f'{100 + i},{("FR", "DE")[i % 2]},"a\u2028b {i}"' for i in range(200)]
    (count,) = ask(
        tl, "id,country,notes\n" + "\n".join(rows) + "\n", "How many rows have country FR?"
    )
    assert "Exact count: 100 " in count
