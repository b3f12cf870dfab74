"""A short-lived command on PostgreSQL (it makes a call or two and exits) opens no pool: one
plain connection, on which a write also wakes the listeners."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

import taskloom
from tests.backends import needed_pg_server, pg_schema
from tests.conftest import subprocess_env
from tests.test_hook_waits import PROBE

pytestmark = pytest.mark.postgres

READS = (
    ["tasks", "list"],
    ["tasks", "stats"],
    ["board", "list", "t1"],
    ["goal", "show", "t1"],
    ["stash", "list", "t1"],
)
WRITES = (["tasks", "add", "Write the tests"], ["board", "add", "t1", "Ship it"])


def probed(args: list[str], db_url: str) -> str:
    """What :data:`~tests.test_hook_waits.PROBE` prints after the command: its exit status,
    how many connections it opened, whether the pool was imported, how many threads run."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args, "--db", db_url],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def test_short_lived_commands_on_postgresql_open_no_pool() -> None:
    """They opened a connection to check the URL, then a pool (imported, with its worker
    threads) and the pool's own connection, as the long-running ``serve`` does."""
    with pg_schema(needed_pg_server()) as db_url:
        with taskloom.connect(db_url) as tl:
            tl.queue.add("Review PR 12")
            tl.goal("t1").set("Ship the release")
        for args in READS:
            assert probed(args, db_url).split()[:3] == ["0", "1", "False"], args
        for args in WRITES:
            # no notifier's connection, nor its thread: the write notifies on its own
            assert probed(args, db_url).split() == ["0", "1", "False", "1"], args


def test_a_short_lived_write_wakes_the_listeners_with_its_event() -> None:
    """The notification a one-shot write sends on its own connection, right after its
    commit, reaches a listener (a ``taskloom serve`` of another host), its payload the id
    of the event the write appended."""
    with pg_schema(needed_pg_server()) as db_url, taskloom.connect(db_url) as tl:
        tl.queue.add("Review PR 12")
        woken: list[int] = []
        listening, arrived = threading.Event(), threading.Event()

        def on_event(event_id: int) -> None:
            woken.append(event_id)
            arrived.set()

        stop = tl.store.listen(on_event, ready=listening.set)
        try:
            assert listening.wait(10)
            for args in WRITES:
                arrived.clear()
                started = time.monotonic()
                assert probed(args, db_url).split()[:2] == ["0", "1"], args
                assert arrived.wait(10), f"{args}: no notification"
                assert time.monotonic() - started < 10
                with tl.store.read() as tx:
                    newest = max(e.id for e in tx.events_after(0, limit=1000))
                assert woken[-1] == newest, (args, woken, newest)
        finally:
            stop()
