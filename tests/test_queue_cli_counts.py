"""The queue's human output writes large counts with thousands separators (``1,234``), as
``counted`` does everywhere else; its ``--json`` output keeps plain numbers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main

N = 1234


def _out(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_large_counts_have_thousands_separators(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.jsonl"
    plan.write_text("".join(json.dumps({"title": f"t{i}"}) + "\n" for i in range(N)))
    db = ("--db", db_url)
    assert _out(capsys, "tasks", "add", "--from", str(plan), *db).endswith(
        "\n1,234 added, 0 already queued\n"
    )
    assert "ready 1,234  " in _out(capsys, "tasks", "stats", *db)
    assert json.loads(_out(capsys, "tasks", "stats", *db, "--json"))["ready"] == N
    head = _out(capsys, "tasks", "ready", "--limit", "0", *db).splitlines()[0]
    assert head == "1,234 ready (1,234 more not shown; use --limit)"
    assert json.loads(_out(capsys, "tasks", "ready", "--limit", "0", *db, "--json"))["count"] == N
    listed = _out(capsys, "tasks", "list", "--limit", "1", *db).splitlines()
    assert listed[-1] == "… and 1,233 more (use --limit)"
    with taskloom.connect(db_url) as tl:
        assert len(tl.queue.claim_batch("w", 1000, lease=0.05)) == 1000  # a batch's most
    time.sleep(0.1)
    assert "\nlease_expired: 1,000  " in _out(capsys, "doctor", *db)
    assert len(json.loads(_out(capsys, "doctor", *db, "--json"))["lease_expired"]) == 1000


def test_doctor_lists_a_sample_of_a_large_category_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    with taskloom.connect(db[1]) as tl:
        root, _ = tl.queue.add("root")
        tl.queue.add_many({"title": f"t{i}", "depends_on": [root.id]} for i in range(25))
        tl.queue.cancel(root.id)
        blocked = sorted(t.id for t in tl.queue.list(status="blocked", limit=100))
    line = next(ln for ln in _out(capsys, "doctor", *db).splitlines() if ln.startswith("blocked"))
    assert line == (f"blocked: 25  {' '.join(blocked[:20])}  … and 5 more (--json lists them all)")
    assert json.loads(_out(capsys, "doctor", *db, "--json"))["blocked"] == blocked
