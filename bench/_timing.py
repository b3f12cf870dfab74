"""Tiny timing helpers shared by the benchmarks (percentiles over per-call wall time)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def sample(fn: Callable[[int], object], n: int, warmup: int = 20) -> list[float]:
    """Call ``fn(i)`` ``n`` times after a warm-up; return per-call milliseconds."""
    for i in range(warmup):
        fn(-1 - i)
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def row(name: str, ms: list[float], baseline: list[float] | None = None) -> str:
    p50, p99 = statistics.median(ms), pct(ms, 0.99)
    ratio = f"{p50 / statistics.median(baseline):6.1f}x" if baseline else "   1.0x"
    return f"{name:<44} p50 {p50:8.3f} ms   p99 {p99:8.3f} ms   vs baseline {ratio}"
