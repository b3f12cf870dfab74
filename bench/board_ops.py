"""Benchmark: one ``todo`` tool dispatch through the real SQLite store, and what it stores.

Prints p50/p99 for ``add``, ``update_status`` and ``remove`` on a 50-card and a 1,000-card
board, next to a raw ``sqlite3`` baseline (one INSERT + COMMIT in WAL mode) measured in the
same run; then the bytes one change stores (the events it appends and the rows it writes or
rewrites, read back from the database file) at both sizes.

    make bench            # or: .venv/bin/python bench/board_ops.py [--n 500]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
from collections.abc import Callable
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


class Bench:
    """One board of ``cards`` cards on its own thread, changed through the ``todo`` tool."""

    def __init__(self, tl: taskloom.Taskloom, cards: int) -> None:
        self.tl = tl
        self.thread = f"bench-{cards}"
        self.ctx = ToolContext(thread_id=self.thread)
        tl.board(self.thread).replace([{"title": f"card {i}"} for i in range(cards)])
        self.ids = [c["id"] for c in tl.board(self.thread).list()["cards"]]
        self.done: set[str] = set()

    def todo(self, **args: object) -> dict[str, object]:
        result = self.tl.tools.dispatch("todo", args, self.ctx)
        assert not result.is_error, result.content
        data: dict[str, object] = result.data
        return data

    def update(self, i: int) -> None:
        """Flip a card between todo and done: every call is a change."""
        card_id = self.ids[i % len(self.ids)]
        status = "todo" if card_id in self.done else "done"
        self.done ^= {card_id}
        self.todo(op="update_status", id=card_id, status=status)

    def add(self, i: int) -> str:
        card = self.todo(op="add", content=f"new {i}")["cards"]
        assert isinstance(card, list)
        return str(card[-1]["id"])

    def remove(self, card_id: str) -> None:
        self.todo(op="remove", id=card_id)


def timings(bench: Bench, n: int) -> dict[str, list[float]]:
    """Each op timed on a board of its size: an add on one card fewer (the add makes the
    board whole), then a remove of the card it made."""
    out = {"update_status": sample(bench.update, n)}
    bench.tl.board(bench.thread).remove(bench.ids.pop())
    added: list[str] = []
    out["add"], out["remove"] = [], []
    for _ in range(n):
        out["add"] += sample(lambda i: added.append(bench.add(i)), 1, warmup=0)
        out["remove"] += sample(lambda _: bench.remove(added.pop()), 1, warmup=0)
    bench.ids.append(bench.add(-1))
    return out


_TABLES = {
    "documents": "kind || '/' || key, state",
    "board_cards": "thread_id || '/' || card_id, data",
}
"""The tables a board change writes rows to, with each row's key and its stored text."""


def _rows(conn: sqlite3.Connection) -> set[tuple[str, str, str]]:
    """Every stored row but the events, as its table, its key and its text."""
    found = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    rows: set[tuple[str, str, str]] = set()
    for table, columns in _TABLES.items():
        if table in found:
            rows |= {(table, k, v) for k, v in conn.execute(f"SELECT {columns} FROM {table}")}
    return rows


def stored_bytes(path: Path, change: Callable[[int], object], changes: int = 20) -> float:
    """The mean bytes one change stores: the text of the events it appends, and of every row
    it writes (a document, a card) that was not stored as it is before."""
    conn = sqlite3.connect(path)
    try:
        total = 0
        for i in range(changes):
            before = _rows(conn)
            last = conn.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0]
            change(i)
            total += sum(len(text) for _, _, text in _rows(conn) - before)
            total += conn.execute(
                "SELECT COALESCE(SUM(LENGTH(data)), 0) FROM events WHERE id > ?", (last,)
            ).fetchone()[0]
        return total / changes
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="calls per measurement")
    args = parser.parse_args()
    if args.n < 1:
        parser.error(f"--n is a whole number of at least 1, not {args.n}")
    with tempfile.TemporaryDirectory() as tmp:
        base = raw_baseline(Path(tmp) / "raw.db", args.n)
        print(row("baseline: raw sqlite3 INSERT+COMMIT", base))
        path = Path(tmp) / "taskloom.db"
        sizes: dict[int, float] = {}
        with taskloom.connect(f"sqlite:///{path}") as tl:
            for cards in (50, 1000):
                n = args.n if cards <= 50 else max(50, args.n // 5)
                bench = Bench(tl, cards)
                for name, ms in timings(bench, n).items():
                    print(row(f"todo {name:<14} ({cards:>5} cards)", ms, base))
                sizes[cards] = stored_bytes(path, bench.update)
        for cards, size in sizes.items():
            print(f"stored per update_status ({cards:>5} cards)   {size:12,.0f} bytes")
        print(f"median p50 baseline {statistics.median(base):.3f} ms")


if __name__ == "__main__":
    main()
