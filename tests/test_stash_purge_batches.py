"""Purging every thread's expired stashed results deletes them in bounded writes: a backlog
of them (a server that was down for days, thousands of threads) never holds the write lock
for the whole purge."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import taskloom
from taskloom.store.base import Transaction
from taskloom.store.stash import purge_stash


def test_purging_expired_results_writes_a_bounded_batch_per_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'stash.db'}"
    past = datetime.now(UTC) - timedelta(days=30)
    with taskloom.connect(url, clock=lambda: past) as old:
        for i in range(25):
            old.guard(f"thread-{i % 3}").force_stash("grep", f"result {i}\n" + "row\n" * 50)
    with taskloom.connect(url) as tl:
        store, write = tl.store, tl.store.write
        deleted: list[int] = []

        @contextlib.contextmanager
        def counted_write() -> Iterator[Transaction]:
            with write() as tx:
                before = tx.query_one("SELECT count(*) AS n FROM stash_results")
                yield tx
                after = tx.query_one("SELECT count(*) AS n FROM stash_results")
            assert before is not None and after is not None
            deleted.append(before["n"] - after["n"])

        monkeypatch.setattr(store, "write", counted_write)
        assert purge_stash(store, tl.now(), batch=10) == 25
        monkeypatch.undo()
        assert [n for n in deleted if n] == [10, 10, 5]  # event retention writes none
        assert all(not tl.guard(f"thread-{t}").results() for t in range(3))
        history = tl.guard("thread-0").history()
        assert [line["action"] for line in history[:9]] == ["expired"] * 9
