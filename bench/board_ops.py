"""Benchmark: one ``todo`` tool dispatch through the real SQLite store.

Prints p50/p99 for ``add`` and ``update_status`` on a 50-card and a 990-card board (under the
1,000-card limit), next to a raw ``sqlite3`` baseline (one INSERT + COMMIT in WAL mode)
measured in the same run.

    make bench            # or: .venv/bin/python bench/board_ops.py [--n 500]
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
from pathlib import Path

import taskloom
from _timing import row, sample
from taskloom.tools import ToolContext


def raw_baseline(path: Path, n: int) -> list[float]:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")

    def insert(i: int) -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t (body) VALUES (?)", (f"card {i}",))
        conn.execute("COMMIT")

    return sample(insert, n)


def board_bench(tl: taskloom.Taskloom, cards: int, n: int) -> tuple[list[float], list[float]]:
    thread = f"bench-{cards}"
    ctx = ToolContext(thread_id=thread)
    tl.board(thread).replace([{"title": f"card {i}"} for i in range(cards)])
    ids = [c["id"] for c in tl.board(thread).list()["cards"]]

    def update(i: int) -> None:
        status = "done" if i % 2 else "todo"
        result = tl.tools.dispatch(
            "todo", {"op": "update_status", "id": ids[i % len(ids)], "status": status}, ctx
        )
        assert not result.is_error, result.content

    updates = sample(update, n)
    board = tl.board(thread)

    def add(i: int) -> None:
        result = tl.tools.dispatch("todo", {"op": "add", "content": f"new {i}"}, ctx)
        assert not result.is_error, result.content
        pending.append(result.data["cards"][-1]["id"])

    # Time each add on a board of exactly `cards` cards: remove the new card, untimed.
    pending: list[str] = []
    adds: list[float] = []
    for i in range(n):
        adds.extend(sample(add, 1, warmup=0 if i else 5))
        for cid in pending:
            board.remove(cid)
        pending.clear()
    return adds, updates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="calls per measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = raw_baseline(Path(tmp) / "raw.db", args.n)
        print(row("baseline: raw sqlite3 INSERT+COMMIT", base))
        with taskloom.connect(f"sqlite:///{tmp}/taskloom.db") as tl:
            for cards in (50, 990):  # a board holds at most 1,000 (the adds need room)
                n = args.n if cards <= 50 else max(50, args.n // 5)
                adds, updates = board_bench(tl, cards, n)
                print(row(f"todo add            ({cards:>5} cards)", adds, base))
                print(row(f"todo update_status  ({cards:>5} cards)", updates, base))


if __name__ == "__main__":
    main()
