"""The guard's LLM summaries: made once per payload, shared, and behind a breaker.

A summary is cached in the store by a hash of (thread, tool, hint, content), so the same
payload is never summarized twice: in one process, wraps of one payload share the first
one's attempt; across processes the first writes a claim and the others poll for its
summary as long as one call may take. Failures count for the thread's breaker, a row in
the store that holds across turns, processes and restarts.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from taskloom._runtime import Runtime
from taskloom.domain.common import parse_iso
from taskloom.domain.errors import ProviderError
from taskloom.domain.redact import redact_text
from taskloom.domain.stash import StashFacts
from taskloom.domain.text import counted
from taskloom.guard.config import GuardConfig
from taskloom.guard.summarize import cache_key, shared_attempt, summarize
from taskloom.guard.tokens import Counter, counter
from taskloom.store import stash as sql

if TYPE_CHECKING:
    from taskloom.llm.base import ChatModel

log = logging.getLogger("taskloom.guard")

CLAIM_POLL_SECONDS = 0.2
CLAIM_WAIT_SECONDS = 120.0
"""How long a wrap waits for another process's summary when its model names no timeout."""


def _client_timeout(llm: ChatModel) -> float:
    """How long one call of ``llm`` may take: its ``timeout``, else ``CLAIM_WAIT_SECONDS``."""
    timeout = getattr(llm, "timeout", None)
    return float(timeout) if isinstance(timeout, int | float) else CLAIM_WAIT_SECONDS


class Summaries:
    """The summaries and the breaker of one thread."""

    def __init__(self, runtime: Runtime, thread_id: str, config: GuardConfig) -> None:
        self._rt = runtime
        self.thread_id = thread_id
        self.config = config

    @property
    def count(self) -> Counter:
        return counter(self.config.encoding)

    def breaker(self) -> dict[str, Any]:
        """The summarizer breaker of this thread: failures, opened_at, last_error, open."""
        with self._rt.store.read() as tx:
            row = sql.breaker(tx, self.thread_id)
        state = dict(row) if row else {"failures": 0, "opened_at": None, "last_error": None}
        state["open"] = self._is_open(state)
        return state

    def _is_open(self, state: dict[str, Any]) -> bool:
        if not state.get("opened_at"):
            return False
        opened = parse_iso(str(state["opened_at"]))
        return bool(self._rt.now() < opened + self.config.breaker_cooldown)

    def summary(self, facts: StashFacts, content: str, hint: str | None) -> str | None:
        llm = self.config.llm
        if llm is None or not self.config.summarize:
            return None
        if facts.tokens > self.config.summary_max_tokens:
            log.info("%s is too large to summarize (%s tokens)", facts.result_id, facts.tokens)
            return None
        key = cache_key(self.thread_id, facts.tool_name, hint, content)
        return shared_attempt(
            (id(self._rt.store), key), lambda: self._summary_once(llm, key, facts, content, hint)
        )

    def _summary_once(
        self, llm: ChatModel, key: str, facts: StashFacts, content: str, hint: str | None
    ) -> str | None:
        """The cached summary, or one made here under a claim in the store, so neither a
        thread nor another process that wraps the same payload meanwhile asks again: one that
        finds the claim waits for its summary (see :meth:`_await_summary`)."""
        with self._rt.store.read() as tx:
            cached = sql.cached_summary(tx, key)
        if cached is not None:
            return cached
        if self.breaker()["open"]:
            log.info("summarizer breaker open for %s; placeholder only", self.thread_id)
            return None
        with self._rt.store.write() as tx:
            claimed, cached = sql.claim_summary(tx, key, self.thread_id, self._rt.now())
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
            f"\n({'Exact o' if facts.tokens_exact else 'O'}riginal size, counted by taskloom:"
            f" {facts.token_count()}, "
            f"{counted(facts.bytes, 'byte')}.)"
        )

    def _settle(self, key: str, summary: str | None, error: str | None) -> None:
        """End this process's claim on ``key``: store the summary or give the claim up, so a
        later wrap of the payload asks again rather than waiting on an orphaned claim; and
        count the outcome for the breaker (nothing is counted when neither came, as when
        the wrap was interrupted)."""
        if error is not None:
            log.warning("summarizer failed for %s: %s", self.thread_id, error)
        with self._rt.store.write() as tx:
            if summary is not None or error is not None:
                trips = self.config.breaker_trips_after
                now = self._rt.now()
                sql.record_outcome(tx, self.thread_id, now, error=error, trip_after=trips)
            sql.settle_summary(tx, key, summary, self._rt.now())

    def _await_summary(self, llm: ChatModel, key: str) -> str | None:
        """The summary another process is making, polled for as long as one call of ``llm``
        may take (its ``timeout``); ``None`` if it failed or is not done by then, and the
        placeholder goes without a summary."""
        limit = time.monotonic() + _client_timeout(llm)
        while time.monotonic() < limit:
            time.sleep(CLAIM_POLL_SECONDS)
            with self._rt.store.read() as tx:
                summary = sql.cached_summary(tx, key)
                if summary is not None or not sql.summary_claimed(tx, key):
                    return summary
        log.info("summary %s still being made elsewhere; placeholder only", key[:16])
        return None
