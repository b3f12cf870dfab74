"""The LLM side of the guard: an identifier-preserving summary and a chunked map-reduce extract.

Both are last resorts. The guard stashes and answers locally first; an LLM runs only when one
is configured, and then:

- the summary prompt states the exact original size (counted, not guessed: the seed's model
  invented ``<original_bytes>``) and the caller's task hint (the seed passed ``None``);
- the map stage runs at most ``concurrency`` calls at once (3 by default: fully parallel
  calls caused 504 storms in the seed), each fragment keeps its chunk label and line range,
  and a reduce call reconciles the partials (top-N and ordering questions need it). A chunk
  that failed is listed as failed, never folded into "nothing found".

The chunk budget is larger than the stash threshold, so a result just over the threshold is
answered in one call (the seed's single-shot path was unreachable).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from taskloom.domain.errors import ProviderError
from taskloom.llm.base import ChatModel

SUMMARY_SYSTEM = """\
You compress one oversized tool output for another AI agent that cannot see it.
Contract:
- Preserve identifiers exactly: ids, numbers, hashes, URLs, paths, emails, usernames, names.
- Lead with any error text, verbatim.
- Give 3-5 key facts, most relevant to the task hint first.
- Give structure: item counts, pagination, sections, line counts.
- Drop markup, repeated fields and provider metadata. Note base64/hex blobs, do not decode.
- Never invent facts or sizes; the exact size is given to you.
- At most 1,500 tokens. Output markdown only, in this shape:
[Tool output summary — <tool>]
<one-line overview>
## Key facts
## Identifiers preserved
## Original size
"""

EXTRACT_SYSTEM = """\
You extract facts from a slice of a tool output for another AI agent.
Return ONLY items in this slice that answer the query, copying identifiers verbatim
(ids, urls, emails, timestamps, names). No preamble. If nothing in the slice is relevant,
reply with exactly: NONE"""

REDUCE_SYSTEM = """\
You merge partial answers extracted from numbered chunks of one tool output.
Answer the query from them only: deduplicate, order as the query asks, keep identifiers verbatim,
and keep the [chunk N] label of every fact you use. No preamble."""


def cache_key(thread_id: str, tool_name: str, hint: str | None, content: str) -> str:
    """sha256 over length-prefixed (thread, tool, hint, content): no two inputs collide."""
    digest = hashlib.sha256()
    for part in (thread_id, tool_name, hint or "", content):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(f"{len(data)}:".encode())
        digest.update(data)
    return digest.hexdigest()


def summary_prompt(
    tool_name: str, hint: str | None, content: str, *, tokens: int, size: int, lines: int
) -> str:
    hint_line = f"Task hint from the user: {hint}\n" if hint else "Task hint: (none given)\n"
    return (
        f"Tool: {tool_name}\n{hint_line}"
        f"Exact original size: {tokens:,} tokens, {size:,} bytes, {lines:,} lines. "
        "The output below is complete.\n\n--- BEGIN ---\n"
        f"{content}\n--- END ---"
    )


def summarize(
    llm: ChatModel,
    tool_name: str,
    hint: str | None,
    content: str,
    *,
    tokens: int,
    size: int,
    lines: int,
) -> str:
    """One summary call. An empty answer or one no shorter than the input is a failure."""
    prompt = summary_prompt(tool_name, hint, content, tokens=tokens, size=size, lines=lines)
    text = llm.complete(SUMMARY_SYSTEM, prompt, max_tokens=2000).strip()
    if not text:
        raise ProviderError(f"{llm.name} returned an empty summary")
    if len(text) >= len(content):
        raise ProviderError(f"{llm.name} returned a summary no shorter than the output")
    return text


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    first_line: int
    last_line: int
    text: str


def chunk_lines(text: str, budget: int, count: Callable[[str], int]) -> list[Chunk]:
    """Split on line boundaries into pieces of at most ``budget`` tokens.

    A single line over the budget is cut into budget-sized pieces of characters (a
    minified JSON document is one line).
    """
    chunks: list[Chunk] = []
    current: list[str] = []
    used, start = 0, 1

    def flush(last: int) -> None:
        nonlocal current, used, start
        if current:
            chunks.append(Chunk(len(chunks) + 1, start, last, "\n".join(current)))
        current, used, start = [], 0, last + 1

    for number, line in enumerate(text.split("\n"), start=1):
        cost = count(line) + 1
        if cost > budget:
            flush(number - 1)
            step = max(1, len(line) * budget // cost)
            for i in range(0, len(line), step):
                chunks.append(Chunk(len(chunks) + 1, number, number, line[i : i + step]))
            start = number + 1
            continue
        if used + cost > budget:
            flush(number - 1)
        current.append(line)
        used += cost
    flush(start + len(current) - 1)
    return chunks


@dataclass(slots=True)
class MapReduceResult:
    answer: str
    partials: list[tuple[Chunk, str]] = field(default_factory=list)
    failed: list[tuple[Chunk, str]] = field(default_factory=list)
    chunks: int = 0
    calls: int = 0


def _label(chunk: Chunk, total: int) -> str:
    return f"[chunk {chunk.index}/{total} · lines {chunk.first_line}-{chunk.last_line}]"


def map_reduce(
    llm: ChatModel,
    tool_name: str,
    query: str,
    text: str,
    *,
    chunk_tokens: int,
    concurrency: int,
    count: Callable[[str], int],
) -> MapReduceResult:
    """Ask every chunk, at most ``concurrency`` at a time, then reduce the partials."""
    chunks = chunk_lines(text, chunk_tokens, count)
    total = len(chunks)
    result = MapReduceResult(answer="", chunks=total)

    def ask(chunk: Chunk) -> tuple[Chunk, str | None, str | None]:
        prompt = (
            f"Tool: {tool_name}\nChunk {chunk.index} of {total} "
            f"(lines {chunk.first_line}-{chunk.last_line})\nQuery: {query}\n\n"
            f"--- BEGIN SLICE ---\n{chunk.text}\n--- END SLICE ---"
        )
        try:
            return chunk, llm.complete(EXTRACT_SYSTEM, prompt).strip(), None
        except ProviderError as exc:
            return chunk, None, exc.message

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        outcomes = list(pool.map(ask, chunks))
    result.calls = total
    for chunk, answer, error in outcomes:
        if error is not None:
            result.failed.append((chunk, error))
        elif answer and answer.upper() != "NONE":
            result.partials.append((chunk, answer))
    labelled = "\n\n".join(f"{_label(c, total)}\n{a}" for c, a in result.partials)
    if len(result.partials) <= 1:
        result.answer = labelled
        return result
    try:
        result.calls += 1
        merged = llm.complete(REDUCE_SYSTEM, f"Query: {query}\n\n{labelled}").strip()
        result.answer = merged or labelled
    except ProviderError as exc:
        result.answer = f"(reduce step failed: {exc.message}; partial answers follow)\n{labelled}"
    return result
