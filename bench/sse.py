"""Benchmark: write → browser-stream delivery latency of `taskloom serve`, at 1, 50, 200 clients.

    .venv/bin/python bench/sse.py [--clients 1 50 200] [--writes 40] [--db URL]

Starts `taskloom serve` as its own process on a free loopback port, opens N concurrent SSE
streams for one thread, then edits cards of a ten-card board from this process through a separate
connection (as an agent or the CLI would: a different process from the server, so delivery
relies on the server's outbox poll, not an in-process wake-up). For each write it records the
write alone (call → commit returned) and, per client, write start → event received. Prints
p50/p95/p99/max per client count, with the write alone as the baseline, and counts missed or
duplicated deliveries (there should be none).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# bench/queue.py would shadow the standard library's ``queue``: keep bench/ off the path.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) != _HERE]

import httpx  # noqa: E402

import taskloom  # noqa: E402

THREAD = "bench"
VERSION = re.compile(rb'"version": (\d+)')


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def start_server(db: str) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskloom", "serve", f"--port={port}", f"--db={db}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.get(f"{url}/api/threads", timeout=1)
            return proc, url
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("taskloom serve did not start")


async def client(
    url: str, ready: asyncio.Event, seen: dict[int, float], stop: asyncio.Event
) -> int:
    """Follow the stream; record when each board version arrived. Returns duplicates seen.

    A bare asyncio socket reading lines, rather than an HTTP client library, so that 200
    clients in this one process measure the server and not the client's per-chunk overhead.
    """
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        f"GET /api/events?thread={THREAD}&tasks=0 HTTP/1.1\r\nHost: {host}\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    dups = 0
    try:
        while line := await reader.readline():
            if not line.startswith(b"data:"):
                continue
            # The board's version is the first "version" in the frame; a regex beats decoding
            # the whole snapshot 200 times per write in this one client process.
            match = VERSION.search(line)
            if match is None:  # the opening's own events (opening, opened) carry no board
                continue
            version = int(match.group(1))
            if version in seen:
                dups += 1
            seen[version] = time.perf_counter()
            ready.set()
            if stop.is_set():
                break
    finally:
        writer.close()
    return dups


async def run(url: str, db: str, clients: int, writes: int) -> dict[str, float]:
    tl = taskloom.connect(db)
    # A realistic board: ten cards, each write edits one (the snapshot stays ~5 KB).
    ids = [tl.board(THREAD).add(f"card {i}")["card"]["id"] for i in range(10)]
    start_version = tl.board(THREAD).list()["version"]
    stop = asyncio.Event()
    readies = [asyncio.Event() for _ in range(clients)]
    seens: list[dict[int, float]] = [{} for _ in range(clients)]
    tasks = [asyncio.create_task(client(url, readies[i], seens[i], stop)) for i in range(clients)]
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
    started: dict[int, float] = {}
    write_ms: list[float] = []
    for i in range(writes):
        t0 = time.perf_counter()
        snap = await asyncio.to_thread(tl.board(THREAD).edit, ids[i % 10], notes=f"write {i}")
        write_ms.append((time.perf_counter() - t0) * 1000)
        started[snap["version"]] = t0
        await asyncio.sleep(random.uniform(0.05, 0.15))
    await asyncio.sleep(1.0)
    stop.set()
    tl.board(THREAD).edit(ids[0], notes="stop")  # wakes every client so it sees `stop`
    dups = sum(await asyncio.wait_for(asyncio.gather(*tasks), 30))
    latencies, missed = [], 0
    for seen in seens:
        for version, t0 in started.items():
            if version in seen:
                latencies.append((seen[version] - t0) * 1000)
            else:
                missed += 1
    tl.close()
    assert start_version < min(started)
    return {
        "write_p50": statistics.median(write_ms),
        "p50": pct(latencies, 50),
        "p95": pct(latencies, 95),
        "p99": pct(latencies, 99),
        "max": max(latencies),
        "missed": missed,
        "dups": dups,
        "deliveries": len(latencies),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--clients", type=int, nargs="+", default=[1, 50, 200], help="streams open, one row each"
    )
    parser.add_argument("--writes", type=int, default=40, help="board writes timed per row")
    parser.add_argument("--db", help="database URL (default: a fresh SQLite file)")
    args = parser.parse_args()
    if args.writes < 1 or min(args.clients) < 1:
        parser.error("--clients and --writes are whole numbers of at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or f"sqlite:///{Path(tmp) / 'sse.db'}"
        proc, url = start_server(db)
        try:
            print(f"taskloom serve at {url} on {db.split('?')[0]}; {args.writes} writes per row")
            print(
                f"{'clients':>7} {'write p50':>10} {'deliv p50':>10} {'p95':>8} {'p99':>8}"
                f" {'max':>8} {'delivered':>10} {'missed':>7} {'dups':>5}"
            )
            for n in args.clients:
                r = asyncio.run(run(url, db, n, args.writes))
                print(
                    f"{n:>7} {r['write_p50']:>8.2f}ms {r['p50']:>8.1f}ms {r['p95']:>6.1f}ms"
                    f" {r['p99']:>6.1f}ms {r['max']:>6.1f}ms {r['deliveries']:>10} "
                    f"{r['missed']:>7} {r['dups']:>5}",
                    flush=True,
                )
        finally:
            proc.kill()


if __name__ == "__main__":
    main()
