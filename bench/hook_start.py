"""Benchmark: how long a coding agent waits for taskloom's hooks, which start a process on
every prompt and every session.

    .venv/bin/python bench/hook_start.py [--runs 15] [--src PATH]

Each row is the wall time of a fresh process, median and slowest of ``--runs``, processes
taking turns so that the machine's drift hits each alike, on one SQLite queue of 20 ready
tasks:

- ``python -c pass``: the interpreter's own start, the floor;
- ``raw sqlite3 read``: the interpreter plus a bare ``sqlite3`` read of the ready tasks, the
  baseline a hook is compared with;
- ``taskloom hook prompt`` and ``taskloom hook session-start``: the hooks as ``taskloom
  init`` installs them (through ``python -m taskloom``).

``--src PATH``: also time the hooks of the taskloom source tree at PATH (its ``src``
folder), for a before-and-after on one machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import taskloom

RAW_READ = (
    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
    " c.execute(\"SELECT id, title FROM tasks WHERE status = 'ready'"
    ' ORDER BY priority, created_at LIMIT 10").fetchall()'
)


def timed(argv: list[str], env: dict[str, str]) -> float:
    """One process's wall time in milliseconds; its failure ends the benchmark."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode(errors='replace')}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="processes per row")
    parser.add_argument("--src", type=Path, help="another taskloom source tree's src folder")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs is a whole number of at least 1")
    if args.src is not None and not (args.src / "taskloom").is_dir():
        parser.error(f"--src {args.src} holds no taskloom package")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "hooks.db"
        url = f"sqlite:///{db}"
        with taskloom.connect(url) as tl:
            tl.queue.add_many([{"title": f"task {i}"} for i in range(20)])
        env = {**os.environ, "TASKLOOM_URL": url}
        here = {**env, "PYTHONPATH": str(Path(taskloom.__file__).parents[1])}
        py = sys.executable
        rows: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c pass": ([py, "-c", "pass"], env),
            "raw sqlite3 read": ([py, "-c", RAW_READ, str(db)], env),
        }
        trees = {"": here}
        if args.src is not None:
            trees[" (--src)"] = {**env, "PYTHONPATH": str(args.src.resolve())}
        for hook in ("prompt", "session-start"):
            argv = [py, "-m", "taskloom", "hook", hook, "--agent", "a"]
            for suffix, tree in trees.items():
                rows[f"taskloom hook {hook}{suffix}"] = (argv, tree)
        times: dict[str, list[float]] = {name: [] for name in rows}
        for run in range(args.runs):
            for name, (argv, run_env) in rows.items():
                times[name].append(timed(argv, run_env))
            print(f"run {run + 1}/{args.runs} done", file=sys.stderr, flush=True)
    base = statistics.median(times["raw sqlite3 read"])
    print(f"\nwall time of one process, {args.runs} runs each (ms)")
    print(f"{'process':<36} {'median':>8} {'slowest':>8} {'vs raw read':>12}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<36} {median:>8.0f} {max(values):>8.0f} {median / base:>11.1f}x")


if __name__ == "__main__":
    main()
