"""The LLM side of the guard: an identifier-preserving summary and a chunked map-reduce extract.

Both are last resorts. The guard stashes and answers locally first; an LLM runs only when one
is configured, and then:

- the summary prompt states the exact original size (counted, so the model need not guess
  it) and the caller's task hint;
- at most ``concurrency`` calls run at once per endpoint in this process (3 by default: fully
  parallel calls bring on 504s), across every extract and summary, not per call (per call,
  four extracts at once would have twelve requests in flight);
- each map fragment keeps its chunk label and line range, and a reduce call reconciles the
  partials (top-N and ordering questions need it). A chunk that failed is listed as failed,
  never folded into "nothing found";
- one extract has an overall deadline: chunks not answered by then are listed as failed, so
  a slow provider costs minutes, not a full timeout for every chunk.

The chunk budget is larger than the stash threshold, so a result just over the threshold is
answered in one call.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from taskloom.domain.errors import ProviderError
from taskloom.domain.lines import TextLines
from taskloom.domain.redact import redact_text
from taskloom.guard.slices import cap_text
from taskloom.llm.base import Answer, ChatModel, is_truncated

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

SUMMARY_MAX_TOKENS = 2_000
"""The longest summary kept, and the ``max_tokens`` it is asked with (the prompt asks 1,500)."""
MAP_ANSWER_TOKENS = 1_024
"""The ``max_tokens`` of a map call; a longer answer is cut here before the reduce."""

REDUCE_SYSTEM = """\
You merge partial answers extracted from numbered chunks of one tool output.
Answer the query from them only: deduplicate, order as the query asks, keep identifiers verbatim,
and keep the [chunk N] label of every fact you use. No preamble."""


T = TypeVar("T")


class _Endpoint:
    """The LLM calls of one endpoint in flight in this process, and the callers waiting for
    one, first come first served."""

    def __init__(self) -> None:
        self.busy = 0
        self.queue: deque[object] = deque()
        self.changed = threading.Condition()


_ENDPOINTS: dict[str, _Endpoint] = {}
_ENDPOINTS_LOCK = threading.Lock()


def _endpoint(llm: ChatModel) -> _Endpoint:
    """The shared count of ``llm``'s endpoint: its ``base_url``, else the client object."""
    base = getattr(llm, "base_url", None)
    key = base if isinstance(base, str) and base else f"{type(llm).__qualname__}@{id(llm):x}"
    with _ENDPOINTS_LOCK:
        return _ENDPOINTS.setdefault(key, _Endpoint())


def wait_left(deadline: float) -> float:
    """Seconds until ``deadline`` (``time.monotonic()``), within what a thread can wait: a
    ``GuardConfig(extract_timeout=timedelta(days=365000))`` must not overflow ``Condition.wait``."""
    return min(max(0.0, deadline - time.monotonic()), threading.TIMEOUT_MAX)


@contextmanager
def llm_slot(
    llm: ChatModel, limit: int, deadline: float, note: str | None = None
) -> Iterator[None]:
    """Hold one of ``limit`` call slots of ``llm``'s endpoint, waiting at most until
    ``deadline`` (``time.monotonic()``); a wait past it is a ``ProviderError`` (``note``
    says whose deadline it was).

    Callers are served in the order they come: were each to wait for ``busy < limit`` alone,
    a caller with ``concurrency=1`` on an endpoint that a ``concurrency=6`` config keeps busy
    would get no slot until the endpoint is idle, which it might never be.
    """
    endpoint = _endpoint(llm)
    ticket = object()
    with endpoint.changed:
        endpoint.queue.append(ticket)
        try:
            started = endpoint.changed.wait_for(
                lambda: endpoint.queue[0] is ticket and endpoint.busy < limit,
                timeout=wait_left(deadline),
            )
        finally:
            endpoint.queue.remove(ticket)
            endpoint.changed.notify_all()
        if not started:
            raise ProviderError(f"not started: {note or DEADLINE_NOTE}")
        endpoint.busy += 1
    try:
        yield
    finally:
        with endpoint.changed:
            endpoint.busy -= 1
            endpoint.changed.notify_all()


DEADLINE_NOTE = "the extract's deadline (extract_timeout) passed first"
SUMMARY_DEADLINE_NOTE = "every call slot of the endpoint stayed busy for the client's timeout"


class _Flight:
    """One attempt at a value in this process, and what it came to."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: str | None = None
        self.waiters = 0


_FLIGHTS: dict[Hashable, _Flight] = {}
_FLIGHTS_LOCK = threading.Lock()


def shared_attempt(key: Hashable, make: Callable[[], str | None]) -> str | None:
    """``make()``, run once for every caller in this process that asks for ``key`` while it
    runs: they wait for that one attempt and share its result (``None`` if it raised).

    Nothing is held across ``make``: a striped lock held across the summary call would make
    four wraps of one payload wait out the timeout one after another (and a failing provider be
    called once per wrap), and unrelated payloads on the same stripe wait for each other.
    """
    with _FLIGHTS_LOCK:
        flight = _FLIGHTS.get(key)
        leader = flight is None
        if flight is None:
            flight = _FLIGHTS[key] = _Flight()
        else:
            flight.waiters += 1
    if not leader:
        flight.done.wait()
        return flight.result
    try:
        flight.result = make()
    finally:
        with _FLIGHTS_LOCK:
            del _FLIGHTS[key]
        flight.done.set()
    return flight.result


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
    count: Callable[[str], int],
    concurrency: int,
    deadline: float,
) -> str:
    """One summary call, in one of the endpoint's ``concurrency`` slots if one frees before
    ``deadline``. An empty answer, one
    no shorter than the input, one the model cut at its token limit, or one over
    ``SUMMARY_MAX_TOKENS`` is a failure: a provider that ignores ``max_tokens`` would
    otherwise make a 200,000-character "summary" a 13,000-token placeholder."""
    prompt = summary_prompt(tool_name, hint, content, tokens=tokens, size=size, lines=lines)
    with llm_slot(llm, concurrency, deadline, SUMMARY_DEADLINE_NOTE):
        answer = ask(llm, SUMMARY_SYSTEM, prompt, max_tokens=SUMMARY_MAX_TOKENS)
    text = answer.strip()
    if not text:
        raise ProviderError(f"{llm.name} returned an empty summary")
    if len(text) >= len(content):
        raise ProviderError(f"{llm.name} returned a summary no shorter than the output")
    if is_truncated(answer):
        raise ProviderError(f"{llm.name} stopped the summary at its token limit")
    size_now = count(text)
    if size_now > SUMMARY_MAX_TOKENS:
        raise ProviderError(
            f"{llm.name} returned a summary of {size_now:,} tokens, over {SUMMARY_MAX_TOKENS:,}"
        )
    return text


LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def ask(llm: ChatModel, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
    """``llm.complete``, with an answer that is not text, or any exception, counted as the
    provider's failure (any ``ChatModel`` may be plugged in, not only the two clients: a
    custom one's ``ConnectionResetError`` must not make a wrap raise and lose its tool result,
    nor an extract lose every chunk's answer). A lone surrogate in the answer (a JSON reply's
    ``"\\ud83d"``: an emoji cut in half) becomes U+FFFD, as no database stores it."""
    try:
        answer = llm.complete(system, prompt, max_tokens=max_tokens)
    except ProviderError:
        raise
    except Exception as exc:
        detail = redact_text(str(exc))[0]
        raise ProviderError(f"{llm.name} failed: {type(exc).__name__}: {detail}"[:500]) from exc
    if not isinstance(answer, str):
        raise ProviderError(f"{llm.name} returned a {type(answer).__name__}, not text")
    if LONE_SURROGATE.search(answer):
        answer = Answer(LONE_SURROGATE.sub("\ufffd", answer), truncated=is_truncated(answer))
    return answer


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

    for number, line in enumerate(TextLines(text), start=1):
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


_CHUNK_LABEL = re.compile(r"\[chunk \d+")
CUT_NOTE = "…(answer cut at the model's token limit: read these lines with read_result)"


def _label(chunk: Chunk, total: int) -> str:
    return f"[chunk {chunk.index}/{total} · lines {chunk.first_line}-{chunk.last_line}]"


def map_reduce(
    llm: ChatModel,
    tool_name: str,
    query: str,
    chunks: list[Chunk],
    *,
    concurrency: int,
    count: Callable[[str], int],
    deadline: float,
) -> MapReduceResult:
    """Ask every chunk, at most ``concurrency`` calls of the endpoint at a time, then reduce
    the partials; whatever has not answered by ``deadline`` (``time.monotonic()``) fails.

    A chunk whose call failed, was refused or came back empty is a failed chunk, never
    "nothing found" (only an explicit ``NONE`` is); an answer cut at the model's token limit
    is kept and marked as cut.
    """
    total = len(chunks)
    result = MapReduceResult(answer="", chunks=total)
    started = threading.Lock()

    def one(chunk: Chunk) -> str:
        prompt = (
            f"Tool: {tool_name}\nChunk {chunk.index} of {total} "
            f"(lines {chunk.first_line}-{chunk.last_line})\nQuery: {query}\n\n"
            f"--- BEGIN SLICE ---\n{chunk.text}\n--- END SLICE ---"
        )
        with llm_slot(llm, concurrency, deadline):
            with started:
                result.calls += 1
            answer = ask(llm, EXTRACT_SYSTEM, prompt, max_tokens=MAP_ANSWER_TOKENS)
        return _partial(llm, answer, count)

    for chunk, answer, error in _run_by(deadline, concurrency, one, chunks):
        if error is not None:
            result.failed.append((chunk, error))
        elif answer and answer.upper() != "NONE":
            result.partials.append((chunk, answer))
    labelled = "\n\n".join(f"{_label(c, total)}\n{a}" for c, a in result.partials)
    result.answer = labelled
    if len(result.partials) > 1:
        result.answer = _reduce(llm, query, labelled, concurrency, deadline, result)
    return result


def _run_by(
    deadline: float, workers: int, task: Callable[[T], str], items: list[T]
) -> Iterator[tuple[T, str | None, str | None]]:
    """``(item, answer, error)`` for each item, in order; one with no answer by ``deadline``
    fails. The pool is left without waiting: a call still running ends within
    its client's own timeout, holding its endpoint slot until then."""
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        futures = [pool.submit(task, item) for item in items]
        done, _late = wait(futures, timeout=wait_left(deadline))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    for item, future in zip(items, futures, strict=True):
        yield (item, *_outcome(future, done))


def _outcome(future: Future[str], done: set[Future[str]]) -> tuple[str | None, str | None]:
    if future not in done:
        return None, f"no answer: {DEADLINE_NOTE}"
    try:
        return future.result(), None
    except ProviderError as exc:
        return None, exc.message


def _partial(llm: ChatModel, answer: str, count: Callable[[str], int]) -> str:
    """One chunk's answer: an empty one is a failure; one cut by the model, or longer than a
    map call may be (a provider that ignores ``max_tokens``), is kept and marked as cut."""
    text = answer.strip()
    if not text:
        raise ProviderError(f"{llm.name} returned an empty answer")
    kept = cap_text(text, 2 * MAP_ANSWER_TOKENS, count)
    if kept != text or is_truncated(answer):
        kept += f"\n{CUT_NOTE}"
    return kept


def _reduce(
    llm: ChatModel,
    query: str,
    labelled: str,
    concurrency: int,
    deadline: float,
    result: MapReduceResult,
) -> str:
    """The merged answer, or the labelled partials when the merge failed, was cut, missed
    the deadline, or lost the ``[chunk N]`` labels that say where each fact came from. The
    call is counted in ``result`` once it has a slot, so a reduce that never starts is not
    counted as a call made."""

    def merge(prompt: str) -> str:
        with llm_slot(llm, concurrency, deadline):
            result.calls += 1
            return ask(llm, REDUCE_SYSTEM, prompt)

    [(_prompt, answer, error)] = _run_by(deadline, 1, merge, [f"Query: {query}\n\n{labelled}"])
    if error is not None or answer is None:
        return f"(reduce step failed: {error}; partial answers follow)\n{labelled}"
    merged = answer.strip()
    if is_truncated(answer):
        why = "the merged answer was cut at the model's token limit"
    elif not _CHUNK_LABEL.search(merged):
        why = "the merged answer named no [chunk N] source"
    else:
        return merged
    return f"({why}; the labelled partial answers follow)\n{labelled}"
