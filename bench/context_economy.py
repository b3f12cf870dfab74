"""Benchmark: tokens that enter history vs answers the model can still reach, held out by source.

Corpus and questions: :mod:`corpus` (eight public sources at pinned versions, split into dev
and test by source) and :mod:`questions` (six kinds, generated from each payload's own
data, written before the retrieval was tuned). The figures that count are the test
split's: its sources were never looked at while tuning.

Strategies, each on the same questions:

- ``raw``: the whole payload enters history;
- ``head+tail 10KiB``: the first and last 5 KiB with an omission marker;
- ``preview-only``: a placeholder with the size and the first 1,500 characters;
- ``taskloom``: ``guard.wrap`` once per payload, then per question one
  ``extract_from_result`` (and, when the answer says every match is paged, the
  ``read_result`` pages it names, at most five), with no LLM configured.

A question is answered when its gold is visible: a value verbatim; every key of a ``keys``
question; for a ``count``, the exact number stated as the count (taskloom's
``Exact count: N``), or every record for a strategy that shows the whole payload. Recall
comes with a 95% Wilson interval. Token counts are exact o200k_base counts.

    python bench/context_economy.py [--cache DIR] [--per-kind 3] [--split test] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import taskloom
from taskloom.guard.tokens import counter

sys.path.insert(0, str(Path(__file__).parent))
from corpus import Payload, default_cache, install, load
from questions import KINDS, Question, questions

HEAD_TAIL_BYTES = 10 * 1024
STRATEGIES = ("raw", "head+tail 10KiB", "preview-only", "taskloom")
MAX_PAGES = 5
_COUNT = re.compile(r"Exact count: ([\d,]+)")
_PAGED = re.compile(r'path="((?:[^"\\]|\\.)*)", page=1')


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def head_tail(text: str) -> str:
    data = text.encode()
    if len(data) <= HEAD_TAIL_BYTES:
        return text
    half = HEAD_TAIL_BYTES // 2
    head = data[:half].decode(errors="ignore")
    tail = data[-half:].decode(errors="ignore")
    return f"{head}\n[... omitted {len(data) - 2 * half} bytes of {len(data)} ...]\n{tail}"


def preview_only(text: str, tokens: int) -> str:
    preview = text[:1500]
    return (
        f"[oversized tool output: {tokens} tokens ({len(text.encode())} bytes) — "
        f'stashed as result_id="res_1"]\nPreview (first {len(preview)} chars):\n{preview}\n\n'
        'If the preview does not answer your task, call:\nextract_from_result(result_id="res_1",'
        ' query="<specific question>")'
    )


def _seen(visible: str, value: str) -> bool:
    return value in visible or json.dumps(value, ensure_ascii=False)[1:-1] in visible


def answered(q: Question, visible: str, whole: bool) -> bool:
    """Whether ``visible`` answers ``q``; ``whole``: it shows the entire payload."""
    if q.kind == "count":
        stated = _COUNT.search(visible)
        return whole or (stated is not None and int(stated.group(1).replace(",", "")) == q.gold)
    if isinstance(q.gold, tuple):
        return all(_seen(visible, key) for key in q.gold)
    return _seen(visible, str(q.gold))


@dataclass
class Score:
    tokens: int = 0
    hits: int = 0
    questions: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    asked: Counter[str] = field(default_factory=Counter)

    def add(self, kind: str, hit: bool) -> None:
        self.questions += 1
        self.hits += hit
        self.asked[kind] += 1
        self.by_kind[kind] += hit


@dataclass
class Run:
    scores: dict[str, Score] = field(default_factory=lambda: {s: Score() for s in STRATEGIES})
    counts: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)
    payloads: int = 0
    sources: set[str] = field(default_factory=set)


def _taskloom(guard: object, rid: str, q: Question, count: object) -> tuple[str, int]:
    """What the model sees for ``q`` after the placeholder: the extract answer and the pages
    it points to; and their tokens."""
    answer = guard.extract(rid, q.text)  # type: ignore[attr-defined]
    seen, spent = answer, count(answer)  # type: ignore[operator]
    paged = _PAGED.search(answer)
    if paged and q.kind != "count" and not answered(q, seen, False):
        path = json.loads(f'"{paged.group(1)}"')
        for page in range(1, MAX_PAGES + 1):
            try:
                more = guard.read(rid, path=path, page=page)  # type: ignore[attr-defined]
            except taskloom.InvalidInput:
                break
            seen += "\n" + more
            spent += count(more)  # type: ignore[operator]
            if "page=" not in more.split("\n", 1)[0]:
                break
    return seen, spent


def run_split(payloads: list[Payload], per_kind: int, seed: int) -> Run:
    count = counter("o200k_base")
    rng = random.Random(seed)
    out = Run()
    with tempfile.TemporaryDirectory() as tmp:
        tl = taskloom.connect(f"sqlite:///{tmp}/bench.db")
        guard = tl.guard("bench")
        assert guard.config.llm is None, "the benchmark runs with zero LLM calls"
        for payload in payloads:
            asked = questions(payload.text, per_kind, rng)
            if not asked:
                continue
            out.payloads += 1
            out.sources.add(payload.source)
            raw_tokens = count(payload.text)
            wrapped = guard.stash(payload.name, payload.text)
            views = {
                "raw": (payload.text, raw_tokens),
                "head+tail 10KiB": (ht := head_tail(payload.text), count(ht)),
                "preview-only": (pv := preview_only(payload.text, raw_tokens), count(pv)),
            }
            for strategy, (visible, tokens) in views.items():
                out.scores[strategy].tokens += tokens
                whole = visible == payload.text or (len(payload.text) <= 1500 and strategy != "raw")
                for q in asked:
                    out.scores[strategy].add(q.kind, answered(q, visible, whole))
            ours = out.scores["taskloom"]
            ours.tokens += wrapped.tokens
            for q in asked:
                seen = wrapped.text
                if wrapped.result_id and not answered(q, seen, False):
                    more, spent = _taskloom(guard, wrapped.result_id, q, count)
                    seen += "\n" + more
                    ours.tokens += spent
                hit = answered(q, seen, wrapped.mode == "pass")
                ours.add(q.kind, hit)
                if q.kind == "count":
                    stated = _COUNT.search(seen)
                    verdict = (
                        "exact" if hit else "wrong" if stated is not None else "no count stated"
                    )
                    out.counts[verdict] += 1
                if not hit:
                    out.misses.append(f"{payload.name}: [{q.kind}] {q.text} -> {str(q.gold)[:80]}")
        tl.close()
    return out


def report(name: str, run: Run) -> None:
    raw = run.scores["raw"].tokens
    n = run.scores["raw"].questions
    sources = ", ".join(sorted(run.sources))
    print(f"\n{name} split: {run.payloads} payloads from {sources}; {n} questions")
    print("| strategy | tokens into history | vs raw | recall | 95% CI |")
    print("| --- | ---: | ---: | ---: | --- |")
    for s in STRATEGIES:
        sc = run.scores[s]
        low, high = wilson(sc.hits, sc.questions)
        versus = "—" if s == "raw" else f"{sc.tokens / raw - 1:+.1%}"
        recall = sc.hits / max(sc.questions, 1)
        print(f"| {s} | {sc.tokens:,} | {versus} | {recall:.1%} | {low:.1%}–{high:.1%} |")
    ours = run.scores["taskloom"]
    kinds = ", ".join(f"{k} {ours.by_kind[k]}/{ours.asked[k]}" for k in KINDS if ours.asked[k])
    print(f"taskloom by kind: {kinds}")
    total = sum(run.counts.values())
    print(
        f"counts: {run.counts['exact']} of {total} exact, {run.counts['wrong']} wrong,"
        f" {run.counts['no count stated']} not stated; LLM calls: 0"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--per-kind", type=int, default=3, help="questions per kind per payload")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--split", choices=["dev", "test", "holdout", "all"], default="all")
    parser.add_argument("--verbose", action="store_true", help="list the questions missed")
    args = parser.parse_args()
    if args.per_kind < 1:
        parser.error(f"--per-kind is a whole number of at least 1, not {args.per_kind}")
    install(args.cache)
    payloads = load(args.cache)
    splits = ["dev", "test", "holdout"] if args.split == "all" else [args.split]
    for split in splits:
        run = run_split([p for p in payloads if p.split == split], args.per_kind, args.seed)
        report(split, run)
        if args.verbose:
            for miss in run.misses:
                print("  miss:", miss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
