"""A YAML document whose top-level key maps names to mappings (a workflow's ``jobs:``):
each named mapping is a record, so counts are exact and a lookup shows its lines."""

from __future__ import annotations

from taskloom.client import Taskloom
from taskloom.guard.table import read_table
from tests.test_guard_text_records import ask

RUNNERS = ("ubuntu-22.04", "macos-14", "windows-2022")


def _workflow(jobs: int) -> str:
    out = ["name: CI", "on:", "  push:", "    branches: [main]", "jobs:"]
    for i in range(jobs):
        out += [
            f"  job-{i}:",
            f"    runs-on: {RUNNERS[i % 7 % 3]}",
            f"    timeout-minutes: {10 + i}",
            "    steps:",
            "      - uses: actions/checkout@v4",
            "      - name: Install",
            "        run: pip install -e .",
            "      - name: Run test",
            f"        run: make test PKG=p{i % 5}",
        ]
    return "\n".join(out) + "\n"


def test_a_mapping_of_named_jobs_is_read_as_records_keyed_by_name() -> None:
    table = read_table(_workflow(5))
    assert table is not None and table.kind == "YAML mapping" and table.name == "jobs"
    assert table.records[1]["job"] == "job-1" and table.records[1]["runs-on"] == "macos-14"
    assert table.spans[0] == (6, 14)  # job-0's lines, its steps included


def test_named_jobs_are_counted_and_looked_up_exactly(tl: Taskloom) -> None:
    text = _workflow(150)
    gold = sum(RUNNERS[i % 7 % 3] == "macos-14" for i in range(150))
    count, lookup = ask(
        tl, text, "how many jobs have runs-on macos-14?", "what is the runs-on of job-123?"
    )
    assert f"Exact count: {gold:,} " in count
    assert f"  job-123:\n    runs-on: {RUNNERS[123 % 7 % 3]}\n" in lookup


def test_a_question_naming_one_record_by_its_id_gets_no_tally_of_every_record(
    tl: Taskloom,
) -> None:
    (one,) = ask(tl, _workflow(150), "which runner does the job-77 job run on?")
    assert "Tally of" not in one  # a tally of every step's run would drop job-77
    assert f"  job-77:\n    runs-on: {RUNNERS[77 % 7 % 3]}\n" in one


def test_which_record_has_the_longest_number_ranks_the_records_by_it(tl: Taskloom) -> None:
    (top,) = ask(tl, _workflow(150), "which job has the longest timeout?")
    assert "highest timeout-minutes" in top and "  job-149:\n" in top
