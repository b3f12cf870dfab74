"""``GuardConfig``: the guard's knobs, and the bounds that keep each of them meaningful.

A value out of its bounds is refused when the config is made, with the field named: a
negative preview would read "Preview (first -66 …", a TTL of zero would tell the model to read
a result already expired, and a cooldown of a billion days would overflow the date arithmetic
of every later wrap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from taskloom.domain.errors import InvalidInput
from taskloom.guard.slices import MIN_READ_TOKENS
from taskloom.guard.tokens import DEFAULT_ENCODING, ENCODINGS

if TYPE_CHECKING:
    from taskloom.llm.base import ChatModel

MIN_TTL = timedelta(minutes=1)
"""The shortest TTL: a result must live long enough for the model to read it back."""
MAX_DURATION = timedelta(days=3650)
"""The longest TTL or breaker cooldown (ten years): a date that far ahead is still a date."""


@dataclass(frozen=True)
class GuardConfig:
    """Knobs of the guard. Sizes are in tokens of ``encoding`` unless named ``_bytes``.

    ``threshold_tokens`` defaults to 3,000 (about 10 KiB of JSON); nothing is lost above it,
    so it can be low. A JSON output whose compacted form fits in ``compacted_max_tokens`` is
    shown compacted instead of as a placeholder.
    ``chunk_tokens`` is larger than the threshold so the single-call LLM path is reachable;
    ``max_chunks`` bounds the calls of one map-reduce (a result over it gets a message saying
    how to narrow the query, not a call per chunk).
    ``concurrency`` bounds the LLM calls in flight per endpoint in this process, summaries
    and every extract together; ``extract_timeout`` bounds one extract's map-reduce.

    ``turn_budget_tokens`` bounds what all tool results of one turn put in history together
    (:meth:`Guard.wrap_turn`): 50,000 tokens, about 200,000 characters of text.

    ``redact`` (on by default) replaces credentials by ``[redacted]`` in every output the
    guard stashes or compacts, before it is stored, previewed, summarized or read back
    (:mod:`~taskloom.domain.redact`). An output small enough to pass through is handed on as
    the tool returned it, unless ``redact_pass_through``: a coding agent that reads a config
    file to change one line and is shown ``[redacted]`` writes ``[redacted]`` back.

    Bounds (anything else is refused with :class:`InvalidInput`): ``ttl`` from
    :data:`MIN_TTL` to :data:`MAX_DURATION`, ``breaker_cooldown`` from zero (no breaker) to
    :data:`MAX_DURATION`, ``extract_timeout`` positive; ``preview_chars``,
    ``compacted_max_tokens`` and ``summary_max_tokens`` at least 0; ``threshold_tokens``,
    ``chunk_tokens``, ``quota_bytes``, ``max_entries``, ``max_chunks``, ``concurrency``,
    ``breaker_trips_after`` and ``turn_budget_tokens`` at least 1; the two caps at least
    ``MIN_READ_TOKENS``.
    """

    threshold_tokens: int = 3_000
    compacted_max_tokens: int = 1_500
    encoding: str = DEFAULT_ENCODING
    ttl: timedelta = timedelta(days=7)
    quota_bytes: int = 64 * 1024 * 1024
    max_entries: int = 200
    preview_chars: int = 1_500
    read_cap_tokens: int = 4_000
    extract_cap_tokens: int = 1_500
    llm: ChatModel | None = field(default=None, repr=False)
    summarize: bool = False
    summary_max_tokens: int = 100_000
    chunk_tokens: int = 12_000
    max_chunks: int = 32
    concurrency: int = 3
    extract_timeout: timedelta = timedelta(minutes=5)
    breaker_trips_after: int = 3
    breaker_cooldown: timedelta = timedelta(minutes=15)
    redact: bool = True
    redact_pass_through: bool = False
    turn_budget_tokens: int = 50_000

    def __post_init__(self) -> None:
        if self.threshold_tokens < 1 or self.read_cap_tokens < 1 or self.chunk_tokens < 1:
            raise InvalidInput("guard token limits must be positive")
        for name in ("read_cap_tokens", "extract_cap_tokens"):
            if getattr(self, name) < MIN_READ_TOKENS:
                raise InvalidInput(
                    f"{name} must be at least {MIN_READ_TOKENS}: a reply needs room for its header"
                )
        if self.concurrency < 1 or self.max_chunks < 1:
            raise InvalidInput("guard concurrency and max_chunks must be at least 1")
        if self.encoding not in ENCODINGS:  # its estimate would be shown as an exact count
            raise InvalidInput(
                f"unknown encoding {self.encoding!r}: use one of {', '.join(ENCODINGS)}"
            )
        self._check_counts()
        self._check_durations()

    def _check_counts(self) -> None:
        """Sizes and counts that mean nothing below their minimum."""
        for name, least in (
            ("preview_chars", 0),
            ("compacted_max_tokens", 0),
            ("summary_max_tokens", 0),
            ("quota_bytes", 1),
            ("max_entries", 1),
            ("breaker_trips_after", 1),
            ("turn_budget_tokens", 1),
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < least:
                raise InvalidInput(f"{name} must be an integer of at least {least} (got {value!r})")

    def _check_durations(self) -> None:
        """Durations are ``timedelta`` within the bounds the store's dates can hold."""
        for name in ("ttl", "extract_timeout", "breaker_cooldown"):
            if not isinstance(getattr(self, name), timedelta):
                raise InvalidInput(
                    f"{name} must be a datetime.timedelta, e.g. {name}=timedelta(minutes=5)"
                    f" (got {type(getattr(self, name)).__name__} {getattr(self, name)!r})"
                )
        if self.extract_timeout <= timedelta(0):
            raise InvalidInput("extract_timeout must be positive")
        if not MIN_TTL <= self.ttl <= MAX_DURATION:
            raise InvalidInput(
                f"ttl must be from 1 minute (time to read a result back) to"
                f" {MAX_DURATION.days:,} days (got {self.ttl})"
            )
        if not timedelta(0) <= self.breaker_cooldown <= MAX_DURATION:
            raise InvalidInput(
                f"breaker_cooldown must be from 0 to {MAX_DURATION.days:,} days"
                f" (got {self.breaker_cooldown})"
            )
