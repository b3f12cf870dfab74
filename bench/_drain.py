"""Draining a pre-filled backlog with W worker processes, the same way for every system.

Each worker notes when it started its first claim and finished its last job, and the times of
its claim calls. Throughput is ``jobs / (latest finish - earliest start)`` ("first to last"),
one clock for every system. Every processed id comes back, so a job handed out twice shows as
``dup`` and a lost one as ``done`` below the backlog.
"""

from __future__ import annotations

import multiprocessing as mp
import statistics
import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

Worker = Callable[[str, int, Any, Any], None]
"""``worker(target, index, start_event, results_queue)``; see :func:`work`."""
Setup = Callable[[str, int], None]
"""``setup(target, jobs)``: create the queue at ``target`` and fill it with ``jobs`` jobs."""


Systems = dict[str, tuple[Setup, Worker]]


def installed(peers: dict[str, tuple[str, Setup, Worker]]) -> tuple[Systems, list[str]]:
    """The peers (``name: (module, setup, worker)``) whose module imports, and a note for
    each that does not."""
    found: Systems = {}
    notes = []
    for name, (module, setup, worker) in peers.items():
        try:
            __import__(module)
        except ImportError as exc:
            notes.append(f"{name}: not installed ({exc}); `make bench` installs it")
            continue
        found[name] = (setup, worker)
    return found, notes


def work(
    start: Any,
    results: Any,
    claim: Callable[[], T | None],
    complete: Callable[[T], Hashable],
    *,
    timed: str = "claim",
) -> None:
    """The worker loop every synchronous system shares: claim and complete until the queue
    answers empty; report ``(ids, first, last, latencies_ms)``, the latencies of ``claim``
    calls (or of ``complete`` calls, for a complete that also claims the next job)."""

    def claim_one() -> list[T]:
        item = claim()
        return [] if item is None else [item]

    work_batched(start, results, claim_one, lambda items: [complete(items[0])], timed=timed)


def work_batched(
    start: Any,
    results: Any,
    claim_many: Callable[[], list[T]],
    complete_many: Callable[[list[T]], list[Hashable]],
    *,
    timed: str = "claim",
) -> None:
    """:func:`work` for a worker that claims a batch and acknowledges it in one call."""
    ids: list[Hashable] = []
    latencies: list[float] = []
    start.wait()
    first = time.time()
    while True:
        t0 = time.perf_counter()
        items = claim_many()
        t1 = time.perf_counter()
        if not items:
            break
        ids.extend(complete_many(items))
        latencies.append(((t1 - t0) if timed == "claim" else (time.perf_counter() - t1)) * 1000)
    results.put((ids, first, time.time(), latencies))


def drain(target: str, worker: Worker, workers: int, jobs: int) -> dict[str, Any]:
    """Run ``workers`` processes of ``worker`` against ``target``; throughput, dups, latency."""
    ctx = mp.get_context("fork")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(target, n, start, results)) for n in range(workers)]
    for p in procs:
        p.start()
    time.sleep(0.5)  # let every worker connect before the clock starts
    start.set()
    outs = [results.get(timeout=900) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    ids = [i for out in outs for i in out[0]]
    busy = [o for o in outs if o[0]]
    span = max(o[2] for o in busy) - min(o[1] for o in busy) if busy else 0.0
    latencies = [ms for o in outs if o[3] is not None for ms in o[3]]
    return {
        "jobs_per_s": len(set(ids)) / span if span else 0.0,
        "done": len(set(ids)),
        "dup": len(ids) - len(set(ids)),
        "split": [len(o[0]) for o in outs],
        "latency": summary(latencies) if latencies else None,
    }


RunOne = Callable[[str, str, Setup, Worker, int], dict[str, Any]]
"""``run_one(tag, name, setup, worker, workers)``: fill a fresh queue named by ``tag`` and
drain it (see :func:`drain`)."""


def measure(
    found: Systems, workers: list[int], repeat: int, run_one: RunOne
) -> list[tuple[str, list[dict[str, Any]]]]:
    """Every system at every worker count, ``repeat`` times, the systems taking turns so that
    a slow spell of the machine falls on all of them; each cell is its median run, with the
    duplicates of every run added up and the fewest jobs any run finished."""
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in range(repeat):
        for n, (name, (setup, worker)) in enumerate(found.items()):
            for w in workers:
                cell = run_one(f"{n}_{w}_{r}", name, setup, worker, w)
                runs.setdefault((name, w), []).append(cell)
        print(f"  round {r + 1} of {repeat} done", flush=True)
    return [(name, [median_run(runs[(name, w)]) for w in workers]) for name in found]


def median_run(cells: list[dict[str, Any]]) -> dict[str, Any]:
    ordered = sorted(cells, key=lambda c: c["jobs_per_s"])
    mid = dict(ordered[len(ordered) // 2])
    mid["dup"] = sum(c["dup"] for c in cells)
    mid["done"] = min(c["done"] for c in cells)
    return mid


def summary(ms: list[float]) -> tuple[float, float, float]:
    """p50, p99 and max of claim latencies in milliseconds."""
    ordered = sorted(ms)
    return statistics.median(ordered), ordered[int(0.99 * (len(ordered) - 1))], ordered[-1]


def print_tables(
    jobs: int,
    workers: list[int],
    table: list[tuple[str, list[dict[str, Any]]]],
    ratios: dict[str, list[str]],
    repeat: int = 1,
) -> None:
    """Throughput (with dup/lost marks), the ratios of each taskloom row to its baselines
    (``ratios``: row name → baseline names), claim latency."""
    header = f"| system | {' | '.join(f'W={w}' for w in workers)} |\n|---|{'---|' * len(workers)}"
    runs = f", median of {repeat} runs" if repeat > 1 else ""
    print(f"\n{jobs:,} jobs, claim+complete, jobs/s first-to-last{runs} (dup = handed out twice)")
    print(header)
    for name, cells in table:
        text = " | ".join(
            f"{c['jobs_per_s']:,.0f} dup {c['dup']}"
            + ("" if c["done"] == jobs else f" (done {c['done']})")
            for c in cells
        )
        print(f"| {name} | {text} |")
    rates = {name: [c["jobs_per_s"] for c in cells] for name, cells in table}
    for name, baselines in ratios.items():
        for base in baselines:
            if name in rates and base in rates:
                pairs = zip(rates[name], rates[base], strict=True)
                shares = " | ".join(f"{t / b:.2f}x" if b else "-" for t, b in pairs)
                print(f"| {name} / {base} | {shares} |")
    print("\nclaim latency, ms p50 / p99 / max (over every claim call of every worker)")
    print(header)
    for name, cells in table:
        if all(c["latency"] is None for c in cells):
            continue
        text = " | ".join(
            "-" if c["latency"] is None else " / ".join(f"{v:.2f}" for v in c["latency"])
            for c in cells
        )
        print(f"| {name} | {text} |")
    print(
        "\nwork per worker: the fewest and the most jobs one worker did, each as a share of an"
        " even split (1.00 / 1.00 is even; near 0, a worker the others starved)"
    )
    print(header)
    for name, cells in table:
        print(f"| {name} | {' | '.join(spread(c['split']) for c in cells)} |")


def spread(split: list[int]) -> str:
    """The fewest and the most jobs one worker did, as shares of an even split: SQLite's busy
    handler sleeps a millisecond or more at a time, so one worker can take nearly every turn
    while the others wait (the issue's "some workers can starve")."""
    even = sum(split) / len(split) if split else 0
    if len(split) < 2 or not even:
        return "-"
    return f"{min(split) / even:.2f} / {max(split) / even:.2f}"
