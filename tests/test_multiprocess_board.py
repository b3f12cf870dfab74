"""Several OS processes writing one board at once lose nothing."""

from __future__ import annotations

import multiprocessing as mp

import pytest

import taskloom

ADDS = 200
PROCESSES = 3


def _writer(url: str, name: str, start: mp.synchronize.Event) -> None:  # type: ignore[name-defined]
    with taskloom.connect(url) as tl:
        board = tl.board("shared")
        start.wait()
        for i in range(ADDS):
            board.add(f"{name}-{i}")


@pytest.mark.slow
def test_concurrent_processes_lose_no_card(db_url: str) -> None:
    url = db_url
    with taskloom.connect(url) as tl:
        tl.board("warmup").add("create the schema first")
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(url, f"p{n}", start)) for n in range(PROCESSES)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    with taskloom.connect(url) as tl:
        snap = tl.board("shared").list()
        with tl.store.read() as tx:
            versions = [
                e.data["version"] for e in tx.events_after(0, thread_id="shared", limit=10_000)
            ]
    titles = {c["title"] for c in snap["cards"]}
    assert len(snap["cards"]) == PROCESSES * ADDS
    assert titles == {f"p{n}-{i}" for n in range(PROCESSES) for i in range(ADDS)}
    assert len({c["id"] for c in snap["cards"]}) == PROCESSES * ADDS
    assert snap["version"] == PROCESSES * ADDS
    assert versions == list(range(1, PROCESSES * ADDS + 1))  # gapless, in commit order
