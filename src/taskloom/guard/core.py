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

JSON text over :data:`~taskloom.guard.bulk.LARGE_JSON` characters is checked, redacted,
measured and previewed in place (:mod:`~taskloom.guard.bulk`), never parsed whole. A result
larger than the thread's whole byte quota is stored cut to the quota, as text, and its
placeholder says so. ``wrap_turn`` (:mod:`~taskloom.guard.budget`) places all results of one
turn under a combined budget.

The stash is per thread with a TTL and a byte/entry quota; ``read``/``extract`` answer the
retrieval tools. Decisions never depend on the clock or on call order, so the same output
always produces the same text.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from taskloom._runtime import Runtime
from taskloom.domain.common import storable_size
from taskloom.domain.errors import InvalidInput, NotFound
from taskloom.domain.lines import line_total
from taskloom.domain.redact import REDACTED, redact_text
from taskloom.domain.stash import StashFacts, json_shape, placeholder, result_id, text_shape
from taskloom.domain.text import counted
from taskloom.domain.threads import check_thread_id
from taskloom.guard.answer import NO_WORDS, Answers
from taskloom.guard.bulk import LARGE_JSON, fit_bytes, head_value, redact_large, skeleton, utf8_size
from taskloom.guard.clean import clean
from taskloom.guard.compact import compact, deep_text, dumps, holds_non_finite, too_deep
from taskloom.guard.config import GuardConfig as GuardConfig
from taskloom.guard.extract import extract_local
from taskloom.guard.jsondoc import JsonDoc, line_count
from taskloom.guard.jsontext import parse_json, parse_large, valid_text
from taskloom.guard.redact_json import redact_json_output, redact_value
from taskloom.guard.search import echo
from taskloom.guard.slices import MAX_QUERY_CHARS, read_slice, view_text
from taskloom.guard.summaries import Summaries
from taskloom.guard.summarize import chunk_lines, map_reduce
from taskloom.guard.tokens import Counter, counter
from taskloom.guard.wrapped import Wrapped
from taskloom.store import stash as sql

if TYPE_CHECKING:
    from taskloom.guard.budget import TurnResult


def _text_preview(shown: str, chars: int) -> tuple[str, str]:
    """The preview of a text result and what it is: the first two thirds of ``chars`` and
    the last third (where a log ends, a build fails, a command sums up), or only the start
    of a text too short for both (label ``""``: "first N chars" is true)."""
    tail = chars // 3
    if len(shown) <= chars or not tail:
        return shown[:chars], ""
    head = chars - tail
    preview = shown[:head] + "\n…\n" + shown[-tail:]
    return preview, f"first {head:,} and last {counted(tail, 'char')}, … between them"


def _mode(stored: str) -> str:
    """The decision a stored placeholder records: the first wrap's, whatever this one's."""
    for mode in ("compacted", "cleaned"):
        if stored.startswith(f"[{mode} tool output"):
            return mode
    return "stashed"


def _redact_output(text: str) -> tuple[str, int]:
    """A text output redacted: by key when it is JSON kept as text (a number beyond a
    double lost every key's redaction) or JSON Lines, then by the text rules."""
    text, by_key = redact_json_output(text)
    text, by_text = redact_text(text)
    return text, by_key + by_text


CLEANED_HEADER_TOKENS = 80
"""About what the header of a cleaned output costs: cleaning that saves less is not worth
a stashed copy, and a document that fits goes as it is."""
BOM = "\ufeff"
"""The byte order mark some tools write first (PowerShell, .NET, Windows editors): JSON
after it is JSON, kept without it; text keeps it."""
SHOWN_ANYWAY = 2**62
"""The threshold of :meth:`Guard.force_show`: no output is that large."""


MAX_HISTORY = 2**63 - 1
"""The largest ``limit`` of :meth:`Guard.history`: the databases' integers stop at 64 bits."""


def _text(name: str, value: object, *, optional: bool = False) -> None:
    """Refuse an argument that is not text (``None`` too, unless ``optional``), naming it:
    a number or bytes reached string methods deep inside and failed there."""
    if not isinstance(value, str) and not (optional and value is None):
        raise InvalidInput(f"{name} must be text, not {type(value).__name__}")


def _whole(name: str, value: object) -> None:
    """Refuse a value that is neither a whole number nor ``None`` (a bool, a float or a
    text is not one); its range is checked where it is used."""
    if value is not None and type(value) is not int:
        raise InvalidInput(f"{name} must be a whole number, not {value!r}")


def _check_length(what: str, text: str | None) -> None:
    """Refuse a query or path longer than any real one: it would be echoed in the answer
    (a 120,000-character query came back whole, past the answer's token cap) and searched for.
    """
    if text is not None and len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(
            f"{what} is {len(text):,} characters; at most {MAX_QUERY_CHARS:,} are accepted:"
            f" name only the ids or fields you need ({what} starts {echo(text, 60)!r})"
        )


class Guard:
    """The guard of one thread. Cheap to create; all state lives in the store."""

    def __init__(self, runtime: Runtime, thread_id: str, config: GuardConfig | None = None) -> None:
        self._rt = runtime
        self.thread_id = check_thread_id(thread_id)
        if config is not None and not isinstance(config, GuardConfig):
            raise InvalidInput(f"a guard's config is a GuardConfig, not {type(config).__name__}")
        self.config = config or GuardConfig()
        self._summaries = Summaries(runtime, self.thread_id, self.config)
        self._answers = Answers(self.config)

    @property
    def runtime(self) -> Runtime:
        return self._rt

    @property
    def count(self) -> Counter:
        return counter(self.config.encoding)

    def __repr__(self) -> str:
        return f"Guard(thread_id={self.thread_id!r})"

    # --- ingest ---------------------------------------------------------------------------

    def wrap(self, tool_name: str, output: Any, *, hint: str | None = None) -> str:
        """The text to put in history for ``output`` (a string, bytes read as UTF-8, or a
        JSON-able value)."""
        return self.stash(tool_name, output, hint=hint).text

    def wrap_turn(
        self, results: Sequence[TurnResult], *, budget_tokens: int | None = None
    ) -> list[Wrapped]:
        """All tool results of one turn under one combined budget (see
        :func:`taskloom.guard.budget.wrap_turn`)."""
        from taskloom.guard.budget import wrap_turn

        return wrap_turn(self, results, budget_tokens=budget_tokens)

    def breaker(self) -> dict[str, Any]:
        """The summarizer breaker of this thread: failures, opened_at, last_error, open."""
        return self._summaries.breaker()

    def stash(self, tool_name: str, output: Any, *, hint: str | None = None) -> Wrapped:
        """Like :meth:`wrap`, with the decision and the result id."""
        _text("tool_name", tool_name, optional=True)
        _text("hint", hint, optional=True)
        if not tool_name or not tool_name.strip():
            raise InvalidInput("tool_name is required")
        storable_size(tool_name, "tool_name")
        if isinstance(output, bytes | bytearray | memoryview):  # a subprocess's stdout
            # Read as UTF-8; each undecodable byte becomes one U+FFFD (valid_text), never the
            # Python repr ``b'…\\n…'``, which holds no line break.
            output = bytes(output).decode("utf-8", "surrogateescape")
        value = output if isinstance(output, dict | list) else None
        if value is not None and too_deep(value):  # the encoders would recurse past a limit
            output, value = deep_text(value), None
        if value is not None:  # a value the encoder takes exactly goes as JSON, else as text
            try:
                dumps(value)
                exact = not holds_non_finite(value)  # orjson writes nan as null
            except TypeError:
                exact = False
            if not exact:
                output = json.dumps(value, ensure_ascii=False, default=repr)
                value = None
        if value is not None:
            return self._stash_json(tool_name, value, output, hint)
        text = valid_text(output if isinstance(output, str) else str(output))
        body = text.removeprefix(BOM)  # a byte order mark starts no JSON value
        if len(body) > LARGE_JSON:
            checked = parse_large(body)
            if checked is not None:
                return self._stash_large(tool_name, *checked, hint)
            return self._stash_text(tool_name, text, hint)
        value = parse_json(body)
        if value is not None:
            return self._stash_json(tool_name, value, body, hint)
        return self._stash_text(tool_name, text, hint)

    def force_stash(self, tool_name: str, output: Any, *, hint: str | None = None) -> Wrapped:
        """Like :meth:`stash`, but an output small enough to pass is stashed all the same
        (a per-turn budget decided so): stored, and shown as its placeholder."""
        config = dataclasses.replace(self.config, threshold_tokens=1, compacted_max_tokens=0)
        return Guard(self._rt, self.thread_id, config).stash(tool_name, output, hint=hint)

    def force_show(self, tool_name: str, output: Any, *, hint: str | None = None) -> Wrapped:
        """Like :meth:`stash`, but an output under any threshold: a turn placed it as shown,
        and a placement never changes, even once a lower threshold would stash it."""
        config = dataclasses.replace(self.config, threshold_tokens=SHOWN_ANYWAY)
        return Guard(self._rt, self.thread_id, config).stash(tool_name, output, hint=hint)

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
            f"{counted(redacted, 'credential-like value')} replaced by {REDACTED} (in the"
            " stored copy too).",
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
        lines = line_count(value)  # of the pretty print, as read_result numbers them
        comp = compact(value)
        comp_tokens = self.count(comp.text)
        if comp_tokens <= self.config.compacted_max_tokens:
            shown = (
                f'[compacted tool output: result_id="{rid}" · tool {tool} · '
                f"{counted(tokens, 'token')} → {comp_tokens:,}; {comp.report()}; the exact"
                " original: "
                f'read_result(result_id="{rid}", path="$…")]\n{comp.text}'
            )
            if redacted:
                shown += "\n" + self._redaction_note(redacted)[0]
            if utf8_size(original) > self.config.quota_bytes:
                shown += "\n" + self._over_quota(utf8_size(original))
            text = self._put(tool, rid, original, True, tokens, shown, lines=lines)
            return Wrapped(text, _mode(text), self.count(text), rid)
        facts = StashFacts(
            result_id=rid,
            tool_name=tool,
            tokens=self.count(original) if original is not minified else tokens,
            encoding=self.config.encoding,
            bytes=utf8_size(original),
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

    def _stash_large(self, tool: str, doc: JsonDoc, lines: int, hint: str | None) -> Wrapped:
        """A JSON result too large to parse whole, stashed as it was written (redacted in
        place): its size, shape and preview read from the document part by part."""
        redacted = 0
        if self.config.redact:
            text, redacted = redact_large(doc)
            if redacted:
                doc = JsonDoc(text)
        root = doc.root()
        tally = self.count.about(doc.text)
        preview = compact(head_value(root, 4 * self.config.preview_chars))
        facts = StashFacts(
            result_id=result_id(tool, doc.text),
            tool_name=tool,
            tokens=tally.tokens,
            tokens_exact=tally.exact,
            encoding=self.config.encoding,
            bytes=utf8_size(doc.text),
            lines=lines,
            shape=json_shape(skeleton(root)),
            preview=preview.text[: self.config.preview_chars],
            is_json=True,
            notes=(
                f"Preview is compacted JSON of its first part ({preview.report()}).",
                *self._redaction_note(redacted),
            ),
        )
        return self._stash_placeholder(facts, doc.text, hint)

    def _stash_text(self, tool: str, text: str, hint: str | None) -> Wrapped:
        """Text over the threshold is stored exactly as the tool returned it: reading it back
        must give the exact lines (source code keeps its ``<vector>``, its indentation and
        its blank lines). Only what the model is shown, the preview, is cleaned of markup."""
        cleaned = clean(text)
        tally = self.count.about(cleaned.text, self.config.threshold_tokens)
        tokens = tally.tokens
        if tokens <= self.config.threshold_tokens:
            if cleaned.text == text:
                return self._passed(text, tokens)
            exact = self.count(text)
            if exact <= min(self.config.threshold_tokens, tokens + CLEANED_HEADER_TOKENS):
                return self._passed(text, exact)
            return self._stash_cleaned(tool, text)
        redacted = 0
        if self.config.redact:  # before anything is stored, shown or summarized
            text, redacted = _redact_output(text)
            if redacted:
                cleaned = clean(text)
        # cleaning also collapses whitespace: the count is the original's, counted again
        # only when it differs from what was counted
        original = tally if not redacted and cleaned.text == text else self.count.about(text)
        preview, label = _text_preview(cleaned.text, self.config.preview_chars)
        notes = (
            f"Markup removed from the preview: {', '.join(cleaned.removed)};"
            " read_result returns the output exactly.",
        )
        facts = StashFacts(
            result_id=result_id(tool, text),
            tool_name=tool,
            tokens=original.tokens,
            tokens_exact=original.exact,
            encoding=self.config.encoding,
            bytes=utf8_size(text),
            lines=line_total(text),
            shape=text_shape(text),
            preview=preview,
            is_json=False,
            notes=(notes if cleaned.removed else ()) + self._redaction_note(redacted),
            preview_label=label,
        )
        return self._stash_placeholder(facts, text, hint)

    def _stash_cleaned(self, tool: str, text: str) -> Wrapped:
        """An HTML document that fits once cleaned: shown cleaned, under a header naming the
        stored original. A cleaned text passed on with no way back was all the model had:
        a template that cleaning took for HTML lost its code, and nothing was stored."""
        redacted = 0
        if self.config.redact:  # the stored copy, and so what is shown of it
            text, redacted = _redact_output(text)
        cleaned = clean(text)
        rid = result_id(tool, text)
        tokens = self.count(text)
        shown = (
            f'[cleaned tool output: result_id="{rid}" · tool {tool} · '
            f"{counted(tokens, 'token')} → {self.count(cleaned.text):,}; markup removed:"
            f" {', '.join(cleaned.removed)}; the"
            f' exact original: read_result(result_id="{rid}", page=1)]\n{cleaned.text}'
        )
        notes = self._redaction_note(redacted)
        if utf8_size(text) > self.config.quota_bytes:
            notes += (self._over_quota(utf8_size(text)),)
        stored = self._put(tool, rid, text, False, tokens, "\n".join((shown, *notes)))
        return Wrapped(stored, _mode(stored), self.count(stored), rid)

    def _stash_placeholder(self, facts: StashFacts, content: str, hint: str | None) -> Wrapped:
        with self._rt.store.read() as tx:
            existing = sql.get(tx, self.thread_id, facts.result_id, self._rt.now())
        summary = None if existing is not None else self._summaries.summary(facts, content, hint)
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
        """Said in the placeholder of a result larger than the whole byte quota, of which
        :meth:`_put` stores only the start."""
        quota = self.config.quota_bytes
        return (
            f"This output ({counted(size, 'byte')}) is larger than this thread's stash quota "
            f"({counted(quota, 'byte')}): only its first {counted(quota, 'byte')}"
            f" {'is' if quota == 1 else 'are'} stored, as text; read_result and"
            " extract_from_result see that part only."
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
        if utf8_size(content) > self.config.quota_bytes:  # never stored past the quota
            content, is_json, lines = fit_bytes(content, self.config.quota_bytes), False, None
        row = {
            "thread_id": self.thread_id,
            "result_id": rid,
            "tool_name": tool,
            "content": content,
            "is_json": 1 if is_json else 0,
            "tokens": tokens,
            "bytes": utf8_size(content),
            "lines": lines if lines is not None else line_total(content),
            "encoding": self.config.encoding,
            "placeholder": shown,
        }
        limits = sql.Limits(self.config.ttl, self.config.quota_bytes, self.config.max_entries)
        with self._rt.store.write() as tx:
            return sql.put(tx, row, self._rt.now(), limits)

    # --- retrieval ------------------------------------------------------------------------------

    # --- retrieval ------------------------------------------------------------------------------

    def _row(self, rid: str) -> dict[str, Any]:
        _text("result_id", rid, optional=True)
        rid = (rid or "").strip()
        if not rid:
            raise InvalidInput("result_id is required")
        if len(rid) > 64 or not (rid.isascii() and rid.isprintable()):  # none is; PostgreSQL
            raise NotFound(f"no stashed result {rid[:64]!r} in this thread")  # refuses a NUL
        with self._rt.store.read() as tx:
            row = sql.get(tx, self.thread_id, rid, self._rt.now())
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
        _text("`path`", path, optional=True)
        _text("`lines`", lines, optional=True)
        _whole("`page`", page)
        _whole("`max_tokens`", max_tokens)
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
            total_lines=int(row["lines"]),
        )

    def extract(self, rid: str, query: str) -> str:
        """Answer ``query`` from a stashed result: locally first, then the LLM if configured.

        A JSONPath, a /regex/ or an exact count or list is exact, so a miss is answered
        here ("matches nothing"): sending it to the map-reduce cost 89 calls to learn the
        same. A query with no word to search for ("???", "the") and a JSONPath on text are
        errors, not words for the LLM: they could match nothing in any result. A result over
        ``max_chunks`` chunks is not map-reduced either; the answer says why.
        """
        _text("query", query, optional=True)
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
            return self._answers.local(rid, query, local)
        content = row["content"]
        if is_json:
            content = view_text(content, True)  # chunk line numbers are read_result's
        chunks = chunk_lines(content, self.config.chunk_tokens, self.count)
        if len(chunks) > self.config.max_chunks:
            return self._answers.local(rid, query, local, too_big=len(chunks))
        result = map_reduce(
            llm,
            row["tool_name"],
            query,
            chunks,
            concurrency=self.config.concurrency,
            count=self.count,
            deadline=time.monotonic() + self.config.extract_timeout.total_seconds(),
        )
        return self._answers.llm(rid, query, result, local)

    # --- listing --------------------------------------------------------------------------------

    def results(self) -> list[dict[str, Any]]:
        """Live stashed results of this thread, oldest first (metadata, not content;
        ``is_json`` true or false)."""
        with self._rt.store.read() as tx:
            rows = sql.list_results(tx, self.thread_id, self._rt.now())
        return [{**row, "is_json": bool(row["is_json"])} for row in rows]

    def show(self, rid: str) -> dict[str, Any]:
        """One result's metadata and its placeholder text (``is_json`` true or false)."""
        row = self._row(rid)
        return {k: bool(v) if k == "is_json" else v for k, v in row.items() if k != "content"}

    def history(self, limit: int = 50) -> list[dict[str, Any]]:
        """The stash log of this thread (stored, evicted, expired), newest first: at most
        ``limit`` entries."""
        if type(limit) is not int or not 0 <= limit <= MAX_HISTORY:
            raise InvalidInput(f"limit must be a whole number from 0 to {MAX_HISTORY}")
        with self._rt.store.read() as tx:
            return sql.history(tx, self.thread_id, limit=limit)
