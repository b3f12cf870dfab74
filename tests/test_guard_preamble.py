"""Tables a tool prints under a preamble (comment lines, a summary block) or with a unit in
a column's name: read as tables, so counts are exact and lookups show the row."""

from __future__ import annotations

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask

REGIONS = ("eu-west", "us-east", "ap-south")
HEALTH = ("ok", "ok", "degraded", "down")


def test_a_csv_whose_header_follows_comment_lines_is_read_as_a_table(tl: Taskloom) -> None:
    rows = [(f"host-{i:03d}", REGIONS[i % 3], str(1000 + i), HEALTH[i % 7 % 4]) for i in range(300)]
    text = (
        "# host inventory export (fleet-report v2.3)\n"
        "# generated 2024-06-30T08:00:00Z; values are 5-minute averages\n"
        "hostname,region,mem_mb,health\n" + "".join(",".join(r) + "\n" for r in rows)
    )
    gold = sum(r[1] == "us-east" and r[3] == "degraded" for r in rows)
    count, lookup = ask(
        tl, text, "how many degraded hosts are in us-east?", "what is mem_mb for host-123?"
    )
    assert f"Exact count: {gold:,} " in count
    assert "host-123,eu-west,1123," in lookup
    assert "--- line 127\nhost-123," in lookup  # its own line, the comment lines counted


def test_a_process_table_under_a_summary_block_is_read_as_a_table(tl: Taskloom) -> None:
    users = ("root", "www-data", "app", "postgres")
    rows = [(1000 + i, users[i % 7 % 4], f"{i % 50}.0", f"cmd{i}") for i in range(400)]
    text = (
        "top - 10:14:07 up 12 days,  3:04,  2 users,  load average: 1.84, 1.52, 1.31\n"
        "Tasks: 400 total,   1 running, 399 sleeping,   0 stopped,   0 zombie\n"
        "MiB Mem :  63482.2 total,   2210.9 free,  21133.0 used,  40138.3 buff/cache\n"
        "\n"
        "    PID USER      %CPU COMMAND\n"
        + "".join(f"{p:>7} {u:<9}{c:>5} {m}\n" for p, u, c, m in rows)
    )
    gold = sum(r[1] == "www-data" for r in rows)
    (count,) = ask(tl, text, "how many processes does www-data run?")
    assert f"Exact count: {gold:,} " in count


def test_a_column_name_with_its_unit_in_brackets_makes_a_fixed_width_table(
    tl: Taskloom,
) -> None:
    spaces = ("default", "payments", "monitoring")
    rows = [(spaces[i % 7 % 3], f"pod-{i}-{i * 7919 % 10007:05d}", f"{i + 1}m", f"{i + 8}Mi")
            for i in range(300)]  # fmt: skip
    head = ("NAMESPACE", "NAME", "CPU(cores)", "MEMORY(bytes)")
    text = "".join(f"{a:<14}{b:<20}{c:<13}{d}\n" for a, b, c, d in [head, *rows])
    gold = sum(r[0] == "monitoring" for r in rows)
    (count,) = ask(tl, text, "how many pods are in the monitoring namespace?")
    assert f"Exact count: {gold:,} " in count


def test_a_text_of_many_short_blocks_is_read_below_one_preamble_at_most(tl: Taskloom) -> None:
    text = "".join(f"step {i} started\nstep {i} done in {i % 9}s\n\n" for i in range(3000))
    (count,) = ask(tl, text, "how many steps are done?")
    assert "step" in count  # answered by the text's lines, not lost to a reading of each block


def test_a_lookup_naming_a_column_of_the_table_below_a_summary_is_exact(tl: Taskloom) -> None:
    rows = [(1000 + i, f"{i % 50}.0", f"cmd{i}") for i in range(400)]
    text = (
        "top - 10:14:07 up 12 days,  3:04,  2 users,  load average: 1.84, 1.52, 1.31\n"
        "Tasks: 400 total,   1 running, 399 sleeping,   0 stopped,   0 zombie\n"
        "\n"
        "    PID  %CPU COMMAND\n" + "".join(f"{p:>7} {c:>5} {m}\n" for p, c, m in rows)
    )
    (lookup,) = ask(tl, text, "what command is PID 1234?")
    assert "Exact lookup: 1 row match" in lookup and "cmd234" in lookup
