"""``tl.guard(thread)``: keep oversized tool results out of the context window, losslessly.

``wrap(tool_name, output)`` decides once, when a result first enters history:

1. JSON is minified, an HTML document is cleaned of markup (:mod:`~taskloom.guard.clean`);
   if that fits under ``threshold_tokens`` (real BPE tokens) it passes through, but for a
   document that cleaning changed much, which is stashed and shown cleaned under a header
   naming it (what is stashed is always the output exactly as returned);
2. JSON that fits once compacted (:mod:`~taskloom.guard.compact`) is shown compacted, with
   the list of what was dropped and the id of the stashed original;
3. anything else is stashed and replaced by a deterministic placeholder (id, size, shape,
   preview, how to read more), optionally with an LLM summary when one is configured.

The stash is per thread with a TTL and a byte/entry quota; ``read``/``extract`` answer the
retrieval tools. Decisions never depend on the clock or on call order, so the same output
always produces the same text.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import re
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from taskloom.domain.common import parse_iso, storable_size
from taskloom.domain.errors import InvalidInput, NotFound, ProviderError
from taskloom.domain.stash import StashFacts, json_shape, placeholder, result_id, text_shape
from taskloom.domain.threads import check_thread_id
from taskloom.guard.clean import clean
from taskloom.guard.compact import compact, deep_text, dumps, too_deep
from taskloom.guard.config import GuardConfig as GuardConfig
from taskloom.guard.redact import REDACTED, redact_json_text, redact_text, redact_value
from taskloom.guard.retrieve import (
    HEADER_TOKENS,
    MAX_QUERY_CHARS,
    Extraction,
    cap_text,
    extract_local,
    read_slice,
    split_lines,
    view_text,
)
from taskloom.guard.search import echo
from taskloom.guard.summarize import (
    MapReduceResult,
    cache_key,
    chunk_lines,
    map_reduce,
    shared_attempt,
    summarize,
)
from taskloom.guard.tokens import Counter, counter
from taskloom.store import stash as sql

if TYPE_CHECKING:
    from taskloom.client import Taskloom
    from taskloom.llm.base import ChatModel

log = logging.getLogger("taskloom.guard")

CLAIM_POLL_SECONDS = 0.2
CLAIM_WAIT_SECONDS = 120.0
"""How long a wrap waits for another process's summary when its model names no timeout."""


def _text_preview(shown: str, chars: int) -> tuple[str, str]:
    """The preview of a text result and what it is: the first two thirds of ``chars`` and
    the last third (where a log ends, a build fails, a command sums up), or only the start
    of a text too short for both (label ``""``: "first N chars" is true)."""
    tail = chars // 3
    if len(shown) <= chars or not tail:
        return shown[:chars], ""
    head = chars - tail
    preview = shown[:head] + "\n…\n" + shown[-tail:]
    return preview, f"first {head:,} and last {tail:,} chars, … between them"


def _client_timeout(llm: ChatModel) -> float:
    """How long one call of ``llm`` may take: its ``timeout``, else ``CLAIM_WAIT_SECONDS``."""
    timeout = getattr(llm, "timeout", None)
    return float(timeout) if isinstance(timeout, int | float) else CLAIM_WAIT_SECONDS


NO_MATCH = {
    "jsonpath": "The JSONPath matches nothing in this result; check the keys with"
    " read_result(path=...) or ask a plain question.",
    "regex": "The regex matches no line of this result; try another pattern or a plain question.",
    "ranking": "Nothing matched; try other words, a JSONPath or /regex/.",
}
NO_WORDS = (
    "the query has no word to search for (only punctuation, or words such as 'the' or"
    " 'list'), so it can match nothing: name the ids, fields or values you need, or ask with"
    " a JSONPath ($..login) or a /regex/"
)
"""An error, not a miss: no result could answer such a query, so the call must change."""


@dataclass(frozen=True, slots=True)
class Wrapped:
    """What :meth:`Guard.stash` decided: ``text`` is what enters the model's history."""

    text: str
    mode: str  # "pass" | "cleaned" | "compacted" | "stashed"
    tokens: int
    result_id: str | None = None
    summarized: bool = False


def _mode(stored: str) -> str:
    """The decision a stored placeholder records: the first wrap's, whatever this one's."""
    for mode in ("compacted", "cleaned"):
        if stored.startswith(f"[{mode} tool output"):
            return mode
    return "stashed"


def _redact_output(text: str) -> tuple[str, int]:
    """A text output redacted: by key when it is JSON kept as text (a number beyond a
    double must not cost it every key's redaction), then by the text rules."""
    text, by_key = redact_json_text(text)
    text, by_text = redact_text(text)
    return text, by_key + by_text


CLEANED_HEADER_TOKENS = 80
"""About what the header of a cleaned output costs: cleaning that saves less is not worth
a stashed copy, and a document that fits goes as it is."""


def _exact_int(text: str) -> int:
    value = int(text)
    if not -(2**63) <= value < 2**64:
        raise ValueError("an integer beyond 64 bits")
    if str(value) != text:  # "-0" would come back as 0
        raise ValueError(f"{text} would be written back as {value}")
    return value


def _exact_float(text: str) -> float:
    """``text`` as a float, if the float holds exactly the value ``text`` writes.

    Finiteness is not enough: ``12345678901234567890.5`` would be shown, read and extracted
    as ``1.2345678901234567e+19`` and ``0.30000000000000000001`` as ``0.3``. Requiring the
    encoders to write the text back verbatim is too strict (``1e-05``, ``1e3``, ``1.50``
    would become text, and JSONPath fail on them): a spelling may change, a value may
    not. The shortest round-trip writers (``repr``, orjson) all give the same decimal value,
    so comparing that value with the text's is enough.
    """
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("a number beyond a double")
    if Decimal(repr(value)) != Decimal(text):
        raise ValueError(f"{text} would be written back as {value!r}")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are distinct: of ``{"a": 1, "a": 2}`` a dict keeps only the last
    value, and the first could no longer be read."""
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a duplicate key")
    return value


def _parse_json(text: str) -> Any:
    """The JSON object or array ``text`` holds, if the guard can re-encode it exactly; else
    ``None``, and the output is kept as text, which loses nothing. Integers beyond 64 bits
    (token amounts, say) fail the encoder, ``NaN``, ``Infinity`` or ``1e400`` would come out
    as ``null``, and a number with more digits than a double holds would come out changed:
    the model would be shown other values. A number only spelled otherwise (``1E5``, ``1.50``)
    keeps its value and stays JSON. An object with a duplicate key is text too: parsed, all
    but its last value would be lost."""
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return None
    try:
        value = json.loads(
            text,
            parse_int=_exact_int,
            parse_float=_exact_float,
            parse_constant=_no_constant,
            object_pairs_hook=_unique_keys,
        )
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict | list) or too_deep(value):  # past orjson and the walks
        return None
    return value


_SURROGATES = re.compile("[\udc80-\udcff]+|[\ud800-\udfff]")
"""A run of escaped bytes (``surrogateescape`` maps byte 0xNN to U+DCNN), or any other lone
surrogate."""


def _replace_surrogates(match: re.Match[str]) -> str:
    run = match.group(0)
    if "\udc80" <= run[0] <= "\udcff":  # the original bytes, decoded as a UTF-8 decoder would
        return run.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return "\ufffd"


def valid_text(text: str) -> str:
    """``text`` as valid UTF-8: an undecodable byte of a subprocess's output (a lone surrogate
    with ``surrogateescape``) becomes one U+FFFD, as no backend stores it (re-encoding with
    ``surrogatepass`` would make three of each, inflating the stored size and the token
    count). A NUL becomes U+FFFD too, on every backend: PostgreSQL cannot store one, and an
    output stashed on SQLite must move to PostgreSQL (``migrate-db``) as it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _SURROGATES.sub(_replace_surrogates, text)
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def _check_length(what: str, text: str | None) -> None:
    """Refuse a query or path longer than any real one: it would be echoed in the answer
    (whole, past the answer's token cap) and searched for.
    """
    if text is not None and len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(
            f"{what} is {len(text):,} characters; at most {MAX_QUERY_CHARS:,} are accepted:"
            f" name only the ids or fields you need ({what} starts {echo(text, 60)!r})"
        )


class Guard:
    """The guard of one thread. Cheap to create; all state lives in the store."""

    def __init__(self, tl: Taskloom, thread_id: str, config: GuardConfig | None = None) -> None:
        self._tl = tl
        self.thread_id = check_thread_id(thread_id)
        self.config = config or tl.guard_config or GuardConfig()

    @property
    def count(self) -> Counter:
        return counter(self.config.encoding)

    def __repr__(self) -> str:
        return f"Guard(thread_id={self.thread_id!r})"

    # --- ingest ---------------------------------------------------------------------------

    def wrap(self, tool_name: str, output: Any, *, hint: str | None = None) -> str:
        """The text to put in history for ``output`` (a string, or a JSON-able value)."""
        return self.stash(tool_name, output, hint=hint).text

    def stash(self, tool_name: str, output: Any, *, hint: str | None = None) -> Wrapped:
        """Like :meth:`wrap`, with the decision and the result id."""
        if not tool_name or not tool_name.strip():
            raise InvalidInput("tool_name is required")
        storable_size(tool_name, "tool_name")
        value = output if isinstance(output, dict | list) else None
        if value is not None and too_deep(value):  # the encoders would recurse past a limit
            output, value = deep_text(value), None
        if value is not None:  # a value the encoder takes exactly goes as JSON, else as text
            try:
                dumps(value)
            except TypeError:
                output = json.dumps(value, ensure_ascii=False, default=repr)
                value = None
        if value is not None:
            return self._stash_json(tool_name, value, output, hint)
        text = valid_text(output if isinstance(output, str) else str(output))
        value = _parse_json(text)
        if value is not None:
            return self._stash_json(tool_name, value, text, hint)
        return self._stash_text(tool_name, text, hint)

    def _passed(self, text: str, tokens: int, value: Any = None) -> Wrapped:
        """An output small enough to hand on (``value``: the JSON it is), as it is unless
        ``redact_pass_through``."""
        if self.config.redact and self.config.redact_pass_through:
            if value is not None:
                value, redacted = redact_value(value)
                text = dumps(value) if redacted else text
            else:
                text, redacted = _redact_output(text)
            if redacted:
                return Wrapped(text, "pass", self.count(text))
        return Wrapped(text, "pass", tokens)

    @staticmethod
    def _redaction_note(redacted: int) -> tuple[str, ...]:
        if not redacted:
            return ()
        return (
            f"{redacted:,} credential-like value(s) replaced by {REDACTED} (in the stored copy"
            " too).",
        )

    def _stash_json(self, tool: str, value: Any, output: Any, hint: str | None) -> Wrapped:
        minified = dumps(value)
        tokens = self.count(minified)
        if tokens <= self.config.threshold_tokens:
            return self._passed(minified, tokens, value)
        redacted = 0
        if self.config.redact:  # before anything is stored, shown or summarized
            value, redacted = redact_value(value)
            if redacted:  # stored as the redacted value says, not the text redacted apart
                minified = dumps(value)
                tokens = self.count(minified)
                output = value
        original = output if isinstance(output, str) else minified
        rid = result_id(tool, original)
        lines = len(split_lines(view_text(original, True)))  # as read_result numbers them
        comp = compact(value)
        comp_tokens = self.count(comp.text)
        if comp_tokens <= self.config.compacted_max_tokens:
            shown = (
                f'[compacted tool output: result_id="{rid}" · tool {tool} · {tokens:,} tokens '
                f"→ {comp_tokens:,}; {comp.report()}; the exact original: "
                f'read_result(result_id="{rid}", path="$…")]\n{comp.text}'
            )
            if redacted:
                shown += "\n" + self._redaction_note(redacted)[0]
            if len(original.encode()) > self.config.quota_bytes:
                shown += "\n" + self._over_quota(len(original.encode()))
            text = self._put(tool, rid, original, True, tokens, shown, lines=lines)
            return Wrapped(text, _mode(text), self.count(text), rid)
        facts = StashFacts(
            result_id=rid,
            tool_name=tool,
            tokens=self.count(original) if original is not minified else tokens,
            encoding=self.config.encoding,
            bytes=len(original.encode()),
            lines=lines,
            shape=json_shape(value),
            preview=comp.text[: self.config.preview_chars],
            is_json=True,
            notes=(
                f"Preview is compacted JSON ({comp.report()}).",
                *self._redaction_note(redacted),
            ),
        )
        return self._stash_placeholder(facts, original, hint)

    def _stash_text(self, tool: str, text: str, hint: str | None) -> Wrapped:
        """Text over the threshold is stored exactly as the tool returned it: reading it back
        must give the exact lines (source code keeps its ``<vector>``, its indentation and
        its blank lines). Only what the model is shown, the preview, is cleaned of markup."""
        cleaned = clean(text)
        tokens = self.count(cleaned.text)
        if tokens <= self.config.threshold_tokens:
            if cleaned.text == text:
                return self._passed(text, tokens)
            original = self.count(text)
            if original <= min(self.config.threshold_tokens, tokens + CLEANED_HEADER_TOKENS):
                return self._passed(text, original)
            return self._stash_cleaned(tool, text)
        redacted = 0
        if self.config.redact:  # before anything is stored, shown or summarized
            text, redacted = _redact_output(text)
            if redacted:
                cleaned = clean(text)
        preview, label = _text_preview(cleaned.text, self.config.preview_chars)
        notes = (
            f"Markup removed from the preview: {', '.join(cleaned.removed)};"
            " read_result returns the output exactly.",
        )
        facts = StashFacts(
            result_id=result_id(tool, text),
            tool_name=tool,
            tokens=self.count(text),  # cleaning also collapses whitespace: count the original
            encoding=self.config.encoding,
            bytes=len(text.encode()),
            lines=len(split_lines(text)),
            shape=text_shape(text),
            preview=preview,
            is_json=False,
            notes=(notes if cleaned.removed else ()) + self._redaction_note(redacted),
            preview_label=label,
        )
        return self._stash_placeholder(facts, text, hint)

    def _stash_cleaned(self, tool: str, text: str) -> Wrapped:
        """An HTML document that fits once cleaned: shown cleaned, under a header naming the
        stored original, so a template that cleaning takes for HTML loses nothing: the
        model can read back what it was not shown."""
        redacted = 0
        if self.config.redact:  # the stored copy, and so what is shown of it
            text, redacted = _redact_output(text)
        cleaned = clean(text)
        rid = result_id(tool, text)
        tokens = self.count(text)
        shown = (
            f'[cleaned tool output: result_id="{rid}" · tool {tool} · {tokens:,} tokens → '
            f"{self.count(cleaned.text):,}; markup removed: {', '.join(cleaned.removed)}; the"
            f' exact original: read_result(result_id="{rid}", page=1)]\n{cleaned.text}'
        )
        notes = self._redaction_note(redacted)
        if len(text.encode()) > self.config.quota_bytes:
            notes += (self._over_quota(len(text.encode())),)
        stored = self._put(tool, rid, text, False, tokens, "\n".join((shown, *notes)))
        return Wrapped(stored, _mode(stored), self.count(stored), rid)

    def _stash_placeholder(self, facts: StashFacts, content: str, hint: str | None) -> Wrapped:
        with self._tl.store.read() as tx:
            existing = sql.get(tx, self.thread_id, facts.result_id, self._tl.now())
        summary = None if existing is not None else self._summary(facts, content, hint)
        if summary:
            note = f"LLM summary (may omit details; exact data via read_result):\n{summary}"
            facts = dataclasses.replace(facts, notes=(*facts.notes, note))
        if facts.bytes > self.config.quota_bytes:
            facts = dataclasses.replace(facts, notes=(*facts.notes, self._over_quota(facts.bytes)))
        text = self._put(
            facts.tool_name,
            facts.result_id,
            content,
            facts.is_json,
            facts.tokens,
            placeholder(facts),
            lines=facts.lines,
        )
        return Wrapped(text, _mode(text), self.count(text), facts.result_id, bool(summary))

    def _over_quota(self, size: int) -> str:
        """Said in the placeholder of a result larger than the whole byte quota, which the
        stash keeps only until the next result is stored (see ``stash._evict``)."""
        return (
            f"This output ({size:,} bytes) is larger than this thread's stash quota "
            f"({self.config.quota_bytes:,} bytes): it is kept only until the next result is "
            "stashed, so read what you need from it now."
        )

    def _put(
        self,
        tool: str,
        rid: str,
        content: str,
        is_json: bool,
        tokens: int,
        shown: str,
        *,
        lines: int | None = None,
    ) -> str:
        row = {
            "thread_id": self.thread_id,
            "result_id": rid,
            "tool_name": tool,
            "content": content,
            "is_json": 1 if is_json else 0,
            "tokens": tokens,
            "bytes": len(content.encode()),
            "lines": lines if lines is not None else len(split_lines(content)),
            "encoding": self.config.encoding,
            "placeholder": shown,
        }
        limits = sql.Limits(self.config.ttl, self.config.quota_bytes, self.config.max_entries)
        with self._tl.store.write() as tx:
            return sql.put(tx, row, self._tl.now(), limits)

    # --- summarizer with a persisted breaker and cache ------------------------------------------

    def breaker(self) -> dict[str, Any]:
        """The summarizer breaker of this thread: failures, opened_at, last_error, open."""
        with self._tl.store.read() as tx:
            row = sql.breaker(tx, self.thread_id)
        state = dict(row) if row else {"failures": 0, "opened_at": None, "last_error": None}
        state["open"] = self._is_open(state)
        return state

    def _is_open(self, state: dict[str, Any]) -> bool:
        if not state.get("opened_at"):
            return False
        opened = parse_iso(str(state["opened_at"]))
        return bool(self._tl.now() < opened + self.config.breaker_cooldown)

    def _summary(self, facts: StashFacts, content: str, hint: str | None) -> str | None:
        llm = self.config.llm
        if llm is None or not self.config.summarize:
            return None
        if facts.tokens > self.config.summary_max_tokens:
            log.info("%s is too large to summarize (%s tokens)", facts.result_id, facts.tokens)
            return None
        key = cache_key(self.thread_id, facts.tool_name, hint, content)
        return shared_attempt(
            (id(self._tl.store), key), lambda: self._summary_once(llm, key, facts, content, hint)
        )

    def _summary_once(
        self, llm: ChatModel, key: str, facts: StashFacts, content: str, hint: str | None
    ) -> str | None:
        """The cached summary, or one made here under a claim in the store, so neither a
        thread nor another process that wraps the same payload meanwhile asks again: one that
        finds the claim waits for its summary (see :meth:`_await_summary`)."""
        with self._tl.store.read() as tx:
            cached = sql.cached_summary(tx, key)
        if cached is not None:
            return cached
        if self.breaker()["open"]:
            log.info("summarizer breaker open for %s; placeholder only", self.thread_id)
            return None
        with self._tl.store.write() as tx:
            claimed, cached = sql.claim_summary(tx, key, self.thread_id, self._tl.now())
        if not claimed:
            return cached if cached is not None else self._await_summary(llm, key)
        summary: str | None = None
        error: str | None = None
        try:
            summary = self._make_summary(llm, facts, content, hint)
        except ProviderError as exc:
            error = exc.message
        except Exception as exc:  # any ChatModel may be plugged in: its failure is a failure
            error = f"{type(exc).__name__}: {redact_text(str(exc))[0]}"[:500]
        finally:
            self._settle(key, summary, error)
        return summary

    def _make_summary(
        self, llm: ChatModel, facts: StashFacts, content: str, hint: str | None
    ) -> str:
        """One summary from ``llm``, with the exact size (counted here) appended."""
        summary = summarize(
            llm,
            facts.tool_name,
            hint,
            content,
            tokens=facts.tokens,
            size=facts.bytes,
            lines=facts.lines,
            count=self.count,
            concurrency=self.config.concurrency,
            deadline=time.monotonic() + _client_timeout(llm),
        )
        return summary + (
            f"\n(Exact original size, counted by taskloom: {facts.tokens:,} tokens, "
            f"{facts.bytes:,} bytes.)"
        )

    def _settle(self, key: str, summary: str | None, error: str | None) -> None:
        """End this process's claim on ``key``: store the summary or give the claim up, so a
        later wrap of the payload asks again rather than waiting on an orphaned claim; and
        count the outcome for the breaker (nothing is counted when neither comes, as when
        the wrap is interrupted)."""
        if error is not None:
            log.warning("summarizer failed for %s: %s", self.thread_id, error)
        with self._tl.store.write() as tx:
            if summary is not None or error is not None:
                trips = self.config.breaker_trips_after
                now = self._tl.now()
                sql.record_outcome(tx, self.thread_id, now, error=error, trip_after=trips)
            sql.settle_summary(tx, key, summary, self._tl.now())

    def _await_summary(self, llm: ChatModel, key: str) -> str | None:
        """The summary another process is making, polled for as long as one call of ``llm``
        may take (its ``timeout``); ``None`` if it failed or is not done by then, and the
        placeholder goes without a summary."""
        limit = time.monotonic() + _client_timeout(llm)
        while time.monotonic() < limit:
            time.sleep(CLAIM_POLL_SECONDS)
            with self._tl.store.read() as tx:
                summary = sql.cached_summary(tx, key)
                if summary is not None or not sql.summary_claimed(tx, key):
                    return summary
        log.info("summary %s still being made elsewhere; placeholder only", key[:16])
        return None

    # --- retrieval ------------------------------------------------------------------------------

    def _row(self, rid: str) -> dict[str, Any]:
        rid = (rid or "").strip()
        if not rid:
            raise InvalidInput("result_id is required")
        if len(rid) > 64 or not (rid.isascii() and rid.isprintable()):  # none is; PostgreSQL
            raise NotFound(f"no stashed result {rid[:64]!r} in this thread")  # refuses a NUL
        with self._tl.store.read() as tx:
            row = sql.get(tx, self.thread_id, rid, self._tl.now())
            expired = None if row is not None else sql.expired_at(tx, self.thread_id, rid)
            gone = None if row is not None else sql.last_event(tx, self.thread_id, rid)
        if row is None:
            why = ""
            if expired is not None:
                why = f" It expired at {expired} (TTL reached)."
            elif gone is not None and gone["action"] in ("evicted", "expired"):
                why = f" It was {gone['action']} at {gone['created_at']} ({gone['detail']})."
            raise NotFound(
                f"no stashed result '{rid}' in this thread.{why} "
                "Re-run the original tool to get a fresh result id."
            )
        return row

    def read(
        self,
        rid: str,
        *,
        path: str | None = None,
        lines: str | None = None,
        page: int | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """An exact slice of a stashed result (JSON path, line range or page)."""
        _check_length("path", path)
        row = self._row(rid)
        cap = min(max_tokens or self.config.read_cap_tokens, self.config.read_cap_tokens)
        return read_slice(
            row["content"],
            bool(row["is_json"]),
            path=path,
            lines=lines,
            page=page,
            cap=cap,
            count=self.count,
        )

    def extract(self, rid: str, query: str) -> str:
        """Answer ``query`` from a stashed result: locally first, then the LLM if configured.

        A JSONPath or a /regex/ is exact, so a miss is answered here ("matches nothing"),
        not by a map-reduce spending a call per chunk to learn the same. A query with no word to
        search for ("???", "the") and a JSONPath on text are errors, not words for the LLM:
        they could match nothing in any result. A result over ``max_chunks`` chunks is not
        map-reduced either; the answer says why.
        """
        if not query or not query.strip():
            raise InvalidInput("query is required")
        _check_length("query", query)
        row = self._row(rid)
        is_json = bool(row["is_json"])
        local = extract_local(row["content"], is_json, query)
        if not local.searchable:
            raise InvalidInput(NO_WORDS)
        llm = self.config.llm
        if local.useful() or llm is None or local.method != "ranking":
            return self._render_local(rid, query, local)
        content = row["content"]
        if is_json:
            content = view_text(content, True)  # chunk line numbers are read_result's
        chunks = chunk_lines(content, self.config.chunk_tokens, self.count)
        if len(chunks) > self.config.max_chunks:
            return self._render_local(rid, query, local, too_big=len(chunks))
        result = map_reduce(
            llm,
            row["tool_name"],
            query,
            chunks,
            concurrency=self.config.concurrency,
            count=self.count,
            deadline=time.monotonic() + self.config.extract_timeout.total_seconds(),
        )
        return self._render_llm(rid, query, result, local)

    def _render_llm(self, rid: str, query: str, result: MapReduceResult, local: Extraction) -> str:
        """The map-reduce answer under ``extract_cap_tokens``, like a local one, even from a
        provider that ignores ``max_tokens``. When no chunk
        answered (all failed, or found nothing) the local ranking's fragments follow,
        labelled as the weaker match they are, rather than being thrown away."""
        head = (
            f'[extract from {rid} · query "{echo(query)}" · method: LLM map-reduce · '
            f"{result.chunks} chunk(s), {result.calls} call(s), "
            f"{len(result.failed)} failed]"
        )
        answer = result.answer or "(no chunk that answered had matching content)"
        cap = self.config.extract_cap_tokens
        failed = [
            f"FAILED chunk {chunk.index} (lines {chunk.first_line}-{chunk.last_line}): "
            f"{error} — read it with read_result(lines=...)"
            for chunk, error in result.failed
        ]
        weak = self._weak_local(local) if not result.partials else ""
        room = cap - self.count("\n".join([head, *failed, weak])) - HEADER_TOKENS // 2
        shown = cap_text(answer, max(room, 1), self.count)
        out = [head, shown]
        if shown != answer:
            out.append(
                f"…(answer cut at {cap:,} of its {self.count(answer):,} tokens: ask a narrower"
                " query, or read the chunks' lines with read_result(lines=...))"
            )
        return self._capped("\n".join([*out, weak, *failed] if weak else out + failed))

    def _weak_local(self, local: Extraction) -> str:
        """The local ranking's fragments, as the weaker match, within half the answer cap."""
        pieces = self._fit_fragments(local, self.config.extract_cap_tokens // 2)
        if not pieces:
            return ""
        return (
            f"Local ranking (weak match: few of the query's words found; {len(pieces)} of"
            f" {local.total_matches} record(s)):\n" + "\n".join(pieces)
        )

    def _capped(self, text: str) -> str:
        """``text`` within ``extract_cap_tokens``, header included: the last guarantee when
        the parts around an answer (failed chunks, a long header) crowd it."""
        cap = self.config.extract_cap_tokens
        return text if self.count(text) <= cap else cap_text(text, cap - 8, self.count) + " …(cut)"

    def _render_local(
        self, rid: str, query: str, found: Extraction, *, too_big: int | None = None
    ) -> str:
        method = {"jsonpath": "JSONPath", "regex": "regex", "ranking": "local ranking"}
        head = f'[extract from {rid} · query "{echo(query)}" · method: {method[found.method]} · '
        why = "" if too_big is None else "\n" + self._too_big(too_big)
        budget = self.config.extract_cap_tokens - self.count(head + why) - HEADER_TOKENS
        out = self._fit_fragments(found, budget)
        shown = len(out)
        if not out:
            return self._capped(head + "no match]" + why + "\n" + NO_MATCH[found.method])
        total = f"{found.total_matches:,}{'+' if found.at_least else ''}"
        head += f"{shown} of {total} match(es) shown]"
        if found.method == "ranking" and not found.useful():
            head += (
                why
                or "\n(weak match: few query words found; no LLM configured for a deeper search)"
            )
        if shown < found.total_matches and found.method != "ranking":
            more = f"{'at least ' if found.at_least else ''}{found.total_matches - shown:,}"
            head += f"\n({more} more: narrow the query or use read_result)"
        return self._capped(head + "\n" + "\n".join(out))

    def _fit_fragments(self, found: Extraction, budget: int) -> list[str]:
        """The labelled fragments that fit in ``budget`` tokens; the first is cut to fit."""
        used, out = 0, list[str]()
        for where, body in found.fragments:
            piece = f"--- {where}\n{body}"
            cost = self.count(piece)
            if out and used + cost > budget:
                break
            if cost > budget:
                piece = (
                    cap_text(piece, max(budget - 10, 1), self.count) + " …(cut; use read_result)"
                )
                cost = self.count(piece)
            out.append(piece)
            used += cost
        return out

    def _too_big(self, chunks: int) -> str:
        return (
            f"(no LLM map-reduce: this result is {chunks:,} chunks of up to "
            f"{self.config.chunk_tokens:,} tokens, over max_chunks={self.config.max_chunks}; "
            "ask with a JSONPath or a /regex/, or read it with read_result)"
        )

    # --- listing --------------------------------------------------------------------------------

    def results(self) -> list[dict[str, Any]]:
        """Live stashed results of this thread, oldest first (metadata, not content)."""
        with self._tl.store.read() as tx:
            return sql.list_results(tx, self.thread_id, self._tl.now())

    def show(self, rid: str) -> dict[str, Any]:
        """One result's metadata and its placeholder text."""
        row = self._row(rid)
        return {k: v for k, v in row.items() if k != "content"}

    def history(self, limit: int = 50) -> list[dict[str, Any]]:
        """The stash log of this thread (stored, evicted, expired), newest first."""
        with self._tl.store.read() as tx:
            return sql.history(tx, self.thread_id, limit=limit)
