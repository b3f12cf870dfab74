"""Benchmark: extra peak memory of wrap, read and extract on large JSON results.

For each size (10 and 50 MB by default) the script builds a JSON array of issue-like
records (seeded, so every run gets the same text), then in a fresh process measures with
``tracemalloc`` the peak of Python allocations during each call above what was held before
it, as a multiple of the input's size (the target is at most 3x), and the process's peak
resident set after all calls. The token counter's vocabulary (about 40 MB, loaded once per
process whatever the input) is loaded before measuring. The stash is SQLite in a temporary
directory; no LLM. ``tracemalloc`` slows the calls about threefold: the times are upper
bounds.

    python bench/guard_memory.py [--sizes 10 50]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import taskloom
from taskloom.guard import GuardConfig


def payload(megabytes: int, seed: int = 5) -> str:
    """About ``megabytes`` MB of pretty-printed JSON records."""
    rng = random.Random(seed)
    states, labels = ("open", "closed"), ("bug", "docs", "feature", "question")
    records: list[dict[str, Any]] = []
    size = 0
    while size < megabytes * 1_000_000:
        i = len(records)
        record = {
            "id": 100_000 + i,
            "number": i,
            "title": f"Issue {i}: {rng.choice(('crash', 'typo', 'slow'))} in module {i % 97}",
            "state": rng.choice(states),
            "user": {"login": f"user{i % 613}", "id": i % 613, "site_admin": False},
            "labels": [{"name": rng.choice(labels)}],
            "comments": rng.randrange(40),
            "body": "Steps to reproduce: " + " ".join(rng.choice(labels) for _ in range(30)),
        }
        records.append(record)
        size += len(json.dumps(record, indent=2)) + 4
    return json.dumps(records, indent=2)


def measure(name: str, call: Callable[[], Any], size: int) -> None:
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    started = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] - before
    del result
    print(f"| {name} | {peak / 1e6:,.0f} MB | {peak / size:.2f}x | {seconds:.1f} s |", flush=True)


def one_size(megabytes: int) -> None:
    text = payload(megabytes)
    size = len(text)
    with tempfile.TemporaryDirectory() as tmp:
        tl = taskloom.connect(f"sqlite:///{tmp}/bench.db")
        guard = tl.guard("bench", GuardConfig(quota_bytes=256 * 1024 * 1024))
        guard.count("warm")  # the vocabulary, loaded once per process, is not the input's cost
        tracemalloc.start()
        print(f"\n{size / 1e6:.1f} MB of JSON ({text.count(chr(10)) + 1:,} lines)")
        print("| call | extra peak | x input | time |")
        print("| --- | ---: | ---: | ---: |")
        wrapped = guard.stash("issues", text)
        rid = wrapped.result_id or ""
        measure("wrap (again: stored result found)", lambda: guard.stash("issues", text), size)
        measure("read(path=$[5000].user)", lambda: guard.read(rid, path="$[5000].user"), size)
        measure("read(page=3)", lambda: guard.read(rid, page=3), size)
        question = "How many issues have state open?"
        measure(f"extract({question!r})", lambda: guard.extract(rid, question), size)
        query = "Issue 4321: title and user"
        measure(f"extract({query!r})", lambda: guard.extract(rid, query), size)
        tracemalloc.stop()
        tl.close()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    print(f"peak RSS of the process: {rss:,.0f} MB")


def first_wrap(megabytes: int) -> None:
    """The first wrap of a result, alone in its process (it stores the result)."""
    text = payload(megabytes)
    with tempfile.TemporaryDirectory() as tmp:
        tl = taskloom.connect(f"sqlite:///{tmp}/bench.db")
        guard = tl.guard("bench", GuardConfig(quota_bytes=256 * 1024 * 1024))
        guard.count("warm")
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        started = time.perf_counter()
        guard.stash("issues", text)
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1] - before
        print(f"| wrap (first: checks, redacts, counts, stores) | {peak / 1e6:,.0f} MB"
              f" | {peak / len(text):.2f}x | {seconds:.1f} s |")  # fmt: skip
        tl.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[10, 50], help="result sizes to measure, in MB"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--first", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if min(args.sizes) < 1:
        parser.error("--sizes are whole numbers of megabytes, at least 1")
    if args.one:
        one_size(args.one)
        return 0
    if args.first:
        first_wrap(args.first)
        return 0
    for megabytes in args.sizes:
        subprocess.run([sys.executable, __file__, "--one", str(megabytes)], check=True)
        subprocess.run([sys.executable, __file__, "--first", str(megabytes)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
