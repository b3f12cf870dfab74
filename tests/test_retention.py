"""Event retention is a property of the database, applied by every writer.

Without ``taskloom serve`` running, the event log used to grow for ever. Now the policy is
stored in the database (``taskloom retention set``, or the default) and any process that
writes applies it, a bounded batch at a time. Both backends.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main
from taskloom.client import Taskloom
from taskloom.errors import InvalidInput
from taskloom.server.app import create_app
from taskloom.server.http import CleanStopServer
from taskloom.store import retention
from taskloom.store.retention import (
    BATCH,
    DEFAULT_KEEP,
    DEFAULT_POLICY,
    EVERY_WRITES,
    RetentionPolicy,
    apply_policy,
    event_counts,
    read_policy,
    set_policy,
)
from tests.conftest import FakeClock, subprocess_env
from tests.test_serve_processes import free_port


def started(server: CleanStopServer, *_: object) -> None:
    """A server's run, stubbed: it started, served nothing, and was stopped."""
    server.started = True


def stored_events(tl: Taskloom) -> int:
    with tl.store.read() as tx:
        return len(tx.events_after(0, limit=10 * DEFAULT_KEEP))


def test_a_database_keeps_the_default_number_of_events_without_a_server(
    tl: Taskloom,
) -> None:
    """The default, with no policy ever set: the newest 10,000 events."""
    tl.queue.max_active = 20_000
    tl.queue.add_many([{"title": f"task {i}"} for i in range(10_050)])  # a first write
    assert stored_events(tl) == 10_000 == DEFAULT_KEEP


def test_many_writes_without_a_server_keep_the_log_bounded(tl: Taskloom) -> None:
    set_policy(tl.store, tl.now(), keep=100)
    for i in range(1, 2_501):
        tl.queue.add(f"task {i}")
        if i % 500 == 0:
            assert event_counts(tl.store)["events"] <= 100 + EVERY_WRITES
    with tl.store.read() as tx:
        assert read_policy(tx) == RetentionPolicy(keep=100)


def test_a_writer_far_behind_catches_up_a_batch_per_commit(
    make_tl: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One application deletes at most a batch; a writer that found a whole batch due
    prunes again after its next commit, so a backlog goes in a few commits, never in one long
    transaction."""
    monkeypatch.setattr(retention, "EVERY_S", 1e9)  # the count decides, not the clock
    first = make_tl()  # type: ignore[operator]
    first.queue.max_active = 20_000
    first.queue.add_many([{"title": f"task {i}"} for i in range(12_000)])  # pruned to 10,000
    set_policy(first.store, first.now(), keep=10)  # set, not yet applied by this writer
    assert event_counts(first.store)["events"] == DEFAULT_KEEP
    second = make_tl()  # type: ignore[operator]  # another process, as it were: same file
    seen = []
    for title in ("a", "b", "c"):
        second.board("t").add(title)
        seen.append(event_counts(second.store)["events"])
    assert seen == [DEFAULT_KEEP + 1 - BATCH, 10, 11]  # the third write was not due


def test_a_producer_appending_more_than_a_batch_per_commit_keeps_the_log_bounded(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One batch per commit let the log grow by every commit's events past a batch: four
    commits of 12,000 tasks each left 28,000 events under a policy of 100."""
    monkeypatch.setattr(retention, "EVERY_S", 0)  # every commit applies the policy
    tl.queue.max_active = 100_000
    set_policy(tl.store, tl.now(), keep=100)
    for round_ in range(4):
        tl.queue.add_many([{"title": f"task {round_}.{i}"} for i in range(12_000)])
        assert event_counts(tl.store)["events"] == 100


@pytest.mark.slow
def test_the_cli_applies_the_policy_set_once(db_url: str, tmp_path: Path) -> None:
    """Real processes, as a shell loop or a prompt hook makes them: each prunes after its
    first write, so the log stays at the policy however many commands run."""

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "taskloom", *args, "--db", db_url],
            env=subprocess_env(),
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    assert "keep the newest 5 events, and none older than 7 days" in run(
        "retention", "set", "--keep", "5", "--older-than", "7d"
    )
    for i in range(7):
        run("tasks", "add", f"task {i}")
    shown = json.loads(run("retention", "show", "--json"))
    assert shown["events"] == 5
    assert (shown["keep"], shown["older_than_s"], shown["default"]) == (5, 7 * 86400, False)
    assert "keep every event, and none older than 12 hours" in run(
        "retention", "set", "--keep", "0", "--older-than", "12h"
    )


def test_the_policy_is_checked(tl: Taskloom, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InvalidInput, match="keep"):
        set_policy(tl.store, tl.now(), keep=0)
    with pytest.raises(InvalidInput, match="age limit"):
        set_policy(tl.store, tl.now(), older_than=timedelta(days=40_000))
    with tl.store.read() as tx:
        assert read_policy(tx) is None  # nothing was stored
    for args, message in [
        ([], "give --keep, --older-than or both"),
        (["--older-than", "7x"], "--older-than takes a duration"),
        (["--keep", "-1"], "--keep must be from 0"),
        (["--older-than", "40000d"], "Error: --older-than must be at most 36525d (100 years)"),
    ]:
        assert main(["retention", "set", *args, "--db", tl.url]) == 1
        assert message in capsys.readouterr().err


def test_the_age_limit_uses_the_writers_clock(tl_fixed: Taskloom, clock: FakeClock) -> None:
    tl_fixed.board("t").add("old")
    clock.advance(10 * 86400)
    tl_fixed.board("t").add("new")
    set_policy(tl_fixed.store, tl_fixed.now(), older_than=timedelta(days=7))
    assert apply_policy(tl_fixed.store, tl_fixed.now()) == 1
    assert stored_events(tl_fixed) == 1


def test_serve_flags_set_the_databases_policy(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve``'s retention flags store what they say, for every writer; without them the
    policy stays as it was."""
    monkeypatch.setattr(CleanStopServer, "run", started)
    port = str(free_port())
    assert main(["serve", "--port", port, "--retain-events", "7", "--db", db_url]) == 0
    assert main(["serve", "--port", port, "--older-than", "2d", "--db", db_url]) == 0
    assert main(["serve", "--port", port, "--db", db_url]) == 0
    with taskloom.connect(db_url) as tl, tl.store.read() as tx:
        assert read_policy(tx) == RetentionPolicy(keep=7, older_than=timedelta(days=2))
    assert main(["serve", "--port", port, "--retain-events", "0", "--db", db_url]) == 0
    with taskloom.connect(db_url) as tl, tl.store.read() as tx:
        assert read_policy(tx) == RetentionPolicy(keep=None, older_than=timedelta(days=2))


def test_every_retention_command_names_its_age_older_than(
    tl: Taskloom, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tasks prune``, ``retention set`` and ``serve`` each take ``--older-than 30d``; the
    old ``tasks prune --days N`` and ``serve --retain-days N`` still work, hidden from
    ``--help``, with a one-line note on stderr naming the new spelling."""
    monkeypatch.setattr(CleanStopServer, "run", started)
    db = ("--db", tl.url)
    for command, old in ((["tasks", "prune"], "--days"), (["serve"], "--retain-days")):
        assert main([*command, "--help"]) == 0
        shown = capsys.readouterr().out
        assert "--older-than" in shown and "30d, 12h" in shown and old not in shown, shown
        assert main([*command, "--older-than", "1d", old, "1", *db]) == 1
        assert capsys.readouterr().err == (
            f"Error: give --older-than or {old}, not both ({old} is its old name)\n"
        )
    for old in ("--days", "--older-than"):
        task, _ = tl.queue.add("finished")
        tl.queue.cancel(task.id)
        value = "0" if old == "--older-than" else "0.0"
        assert main(["tasks", "prune", old, value, *db, "--json"]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out) == {"pruned": 1}
        assert err == (
            "note: --days is deprecated; use --older-than 0\n" if old == "--days" else ""
        )
    port = str(free_port())
    in_words = "event retention: keep the newest 10,000 events, and none older than 36 hours"
    assert main(["serve", "--port", port, "--retain-days", "1.5", *db]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "note: --retain-days is deprecated; use --older-than 1.5d"
    assert in_words in lines and not any("deprecated" in line for line in lines[1:])
    assert main(["serve", "--port", port, "--older-than", "1d12h", *db]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert in_words in lines and not any("deprecated" in line for line in lines)
    assert main(["retention", "set", "--older-than", "none", *db]) == 0
    with tl.store.read() as tx:
        assert read_policy(tx) == RetentionPolicy(keep=DEFAULT_KEEP, older_than=None)
    for command in (["serve", "--port", port], ["retention", "set"]):
        assert main([*command, "--older-than", "0d", *db]) == 0  # 0 in any unit: no age limit
        assert "whatever their age" in "".join(capsys.readouterr()), command
    for command in (["serve", "--port", port], ["retention", "set"], ["tasks", "prune"]):
        assert main([*command, "--older-than", "36526d", *db]) == 1  # one limit, one message
        too_old = "Error: --older-than must be at most 36525d (100 years)\n"
        assert capsys.readouterr().err == too_old, command


def test_a_server_applies_the_databases_policy(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retention, "EVERY_S", 1e9)  # only the server prunes here
    tl.board("t").add("first")  # this writer's first commit: the default applied
    set_policy(tl.store, tl.now(), keep=2)
    for title in ("a", "b", "c", "d"):
        tl.board("t").add(title)
    assert stored_events(tl) == 5
    app = create_app(tl, prune_every_s=0.05, mcp=False)

    async def go() -> None:
        async with app.router.lifespan_context(app):
            deadline = time.monotonic() + 20
            while stored_events(tl) > 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)

    asyncio.run(go())
    assert stored_events(tl) == 2


def test_the_default_policy_in_words() -> None:
    assert DEFAULT_POLICY.describe() == "keep the newest 10,000 events, whatever their age"
    assert RetentionPolicy(None, timedelta(hours=36)).describe() == (
        "keep every event, and none older than 36 hours"
    )


def test_one_event_and_one_second_are_singular(
    tl: Taskloom, capsys: pytest.CaptureFixture[str]
) -> None:
    assert RetentionPolicy(1, timedelta(seconds=1)).describe() == (
        "keep the newest 1 event, and none older than 1 second"
    )
    assert RetentionPolicy(None, timedelta(seconds=1_000_001)).describe() == (
        "keep every event, and none older than 1,000,001 seconds"  # not 1e+06 seconds
    )
    task, _ = tl.queue.add("one")
    tl.queue.cancel(task.id)
    assert main(["tasks", "prune", "--older-than", "0", "--db", tl.url]) == 0
    assert capsys.readouterr().out == "pruned 1 task\n"


def test_set_reports_the_events_it_pruned(tl: Taskloom, capsys: pytest.CaptureFixture[str]) -> None:
    """The write that saves the policy prunes (every writer's first commit applies it): the
    count was of the batches after it, 0."""
    for title in ("one", "two", "three"):
        tl.queue.add(title)
    assert main(["retention", "set", "--keep", "1", "--db", tl.url]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "event retention: keep the newest 1 event, whatever their age",
        "pruned 2 events now",
    ]
    assert main(["retention", "set", "--keep", "1", "--db", tl.url, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["events"], shown["pruned"]) == (1, 0)
