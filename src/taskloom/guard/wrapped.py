"""What the guard decided for one tool result."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Wrapped:
    """What :meth:`Guard.stash` decided: ``text`` is what enters the model's history."""

    text: str
    mode: str  # "pass" | "cleaned" | "compacted" | "stashed"
    tokens: int
    result_id: str | None = None
    summarized: bool = False
