"""A short-lived command on PostgreSQL (it makes a call or two and exits) opens no pool: one
plain connection, and for a write the notifier's, which wakes the listeners."""

from __future__ import annotations

import subprocess
import sys

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
            assert probed(args, db_url).split()[:3] == ["0", "2", "False"], args
