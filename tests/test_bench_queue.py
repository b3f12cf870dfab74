"""``bench/queue.py`` keeps running: taskloom and the raw baselines drain the backlog with no
job handed out twice or lost (peers are only reported: persist-queue does hand jobs out twice
across processes). The figures themselves are not asserted; timing belongs to the benchmark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.backends import needed_pg_server

TASKLOOM = {"taskloom", "taskloom done_and_claim", "taskloom claim_batch(10) + done_many"}
RAW_PG = "raw psycopg SKIP LOCKED lease"
DAG_ROWS = {"taskloom, no dependencies", "taskloom, DAG, no groups", "taskloom, DAG + 100 groups"}
BENCH = Path(__file__).resolve().parent.parent / "bench" / "queue.py"


def _rows(out: str) -> dict[str, str]:
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) >= 2 and "dup" in cells[1]:
            rows[cells[0]] = line
    return rows


def _run(expected: set[str], *args: str, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--jobs", "60", "--workers", "1", "2", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    rows = _rows(done.stdout)
    assert expected <= set(rows), done.stdout
    for name in expected:
        line = rows[name]
        assert line.count("dup 0") == 2 and "(done" not in line, line
    shares = _work_per_worker(done.stdout)
    for name in expected:  # one worker is all of the work; two workers' shares make two
        alone, (fewest, most) = shares[name]
        assert alone == "-" and 0 <= fewest <= 1 <= most and abs(fewest + most - 2) < 0.011


def _work_per_worker(out: str) -> dict[str, tuple[str, tuple[float, float]]]:
    """The last table's rows (``| name | - | 0.41 / 1.59 |``), for runs at W=1 and W=2."""
    table = out.split("work per worker")[1].splitlines()[3:]
    rows = {}
    for line in table:
        name, alone, pair = (c.strip() for c in line.strip("|").split("|"))
        fewest, most = (float(v) for v in pair.split(" / "))
        rows[name] = (alone, (fewest, most))
    return rows


def test_sqlite_bench_drains_every_system_exactly_once() -> None:
    _run(
        {
            *TASKLOOM,
            "raw sqlite3 lease",
            "raw sqlite3 lease, batch(10)",
            "raw sqlite3 lease + event row",
            "raw sqlite3, no lease expiry",
        }
    )


@pytest.mark.postgres
def test_postgres_bench_drains_every_system_exactly_once() -> None:
    server = needed_pg_server()
    _run(
        {*TASKLOOM, RAW_PG, f"{RAW_PG}, batch(10)", f"{RAW_PG} + event row"},
        "--backend",
        "postgres",
        env={**os.environ, "TASKLOOM_BENCH_PG": server},
    )


def test_the_cost_breakdown_drains_every_loop_and_prints_each_row() -> None:
    """``bench/queue_cost.py`` drives taskloom's own statements with a bare loop: if they
    change shape (a claim that stops returning the id first, a completion that stops
    matching), the script stops with a message instead of printing a row."""
    done = subprocess.run(
        [sys.executable, str(BENCH.with_name("queue_cost.py")), "--jobs", "40", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    rows = [line.split("  ")[0] for line in done.stdout.splitlines()[-6:]]
    assert rows == [
        "raw",
        "raw + event row",
        "taskloom SQL (no Python API)",
        "taskloom (claim, then done)",
        "taskloom SQL, chained",
        "taskloom done_and_claim",
    ]


def test_a_backlog_over_the_queues_default_cap_is_drained_whole() -> None:
    """``--jobs`` above the default cap of 10,000 ready tasks: the setup raises the cap,
    so the taskloom rows drain the same backlog as the baselines (no ``(done N)``)."""
    done = subprocess.run(
        [sys.executable, str(BENCH), "--jobs", "10050", "--workers", "1", "--only", "Worker batch"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    row = _rows(done.stdout)["taskloom Worker batch(10)"]
    assert "dup 0" in row and "(done" not in row, row


def test_the_dag_bench_drains_the_graph_and_the_flat_queue_exactly_once() -> None:
    _run(DAG_ROWS, "--dag")


def test_only_keeps_the_baseline_row_and_refuses_a_name_that_matches_nothing() -> None:
    """``--only`` picks the rows to measure; the raw baseline is measured beside them, so the
    ratio to it is printed in the same invocation. A TEXT naming nothing is a usage error."""
    done = subprocess.run(
        [sys.executable, str(BENCH), "--jobs", "50", "--workers", "1", "--only", "done_and"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert set(_rows(done.stdout)) == {"taskloom done_and_claim", "raw sqlite3 lease"}
    assert "| taskloom done_and_claim / raw sqlite3 lease |" in done.stdout
    nothing = subprocess.run(
        [sys.executable, str(BENCH), "--jobs", "50", "--only", "nothing"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert nothing.returncode == 2 and nothing.stdout == "", nothing.stdout
    assert "--only 'nothing' names no system; the systems: taskloom;" in nothing.stderr
    assert "Traceback" not in nothing.stderr


@pytest.mark.parametrize(
    ("script", "args", "message"),
    [
        ("board_ops.py", ["--n", "0"], "--n is a whole number of at least 1"),
        ("queue_cost.py", ["--jobs", "0"], "--jobs and --repeat are whole numbers"),
        ("queue_cost.py", ["--repeat", "-1"], "--jobs and --repeat are whole numbers"),
        ("sse.py", ["--clients", "0"], "--clients and --writes are whole numbers"),
        ("sse.py", ["--writes", "0"], "--clients and --writes are whole numbers"),
        ("guard_memory.py", ["--sizes", "0"], "--sizes are whole numbers of megabytes"),
        ("context_economy.py", ["--per-kind", "-1"], "--per-kind is a whole number"),
    ],
)
def test_a_count_below_one_is_a_usage_error_before_anything_runs(
    script: str, args: list[str], message: str
) -> None:
    """Not a traceback from an empty median, nor (``--sizes 0``) the default sizes run."""
    done = subprocess.run(
        [sys.executable, str(BENCH.with_name(script)), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_bench_queue_backlog_prints_every_operation_at_both_backlogs() -> None:
    bench = BENCH.with_name("queue_backlog.py")
    done = subprocess.run(
        [sys.executable, str(bench), "--small", "20", "--large", "60", "--repeat", "3"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert rows[0] == "| operation | 20 ready | 60 ready | ratio |"
    names = {row.split("|")[1].strip() for row in rows[1:]}
    assert {"cancel", "surface (prompt hook)", "ready 20", "claim + done"} <= names
    assert "60 ready tasks added" in done.stdout
