"""One budget for all tool results of a turn, with each placement frozen by its call id.

A model that calls ten tools at once gets ten results back in one message; each may pass
the single-result threshold and all of them together still flood the context.
:func:`wrap_turn` wraps each result as :meth:`~taskloom.guard.core.Guard.stash` would,
then, while what enters history costs more than the budget, stashes the largest result
still shown in full (ties: the earlier in the turn), until the rest fits.

Each call's placement (shown, or stashed) is recorded in the store under its call id, with
a fingerprint of its output, the first time it is decided, and never decided again:
wrapping the turn again, or with more results of the same turn, gives every result placed
before the same text, byte for byte, so a prompt cache over the history stays valid. Only
results not placed yet share what the placed ones leave of the budget. A call id recorded
for another output (a server that sends ``call_0`` on every turn) is placed afresh.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from taskloom.domain.errors import InvalidInput
from taskloom.domain.stash import RESULT_ID_PREFIX, result_id
from taskloom.guard.compact import deep_text
from taskloom.guard.wrapped import Wrapped
from taskloom.store import stash as sql

if TYPE_CHECKING:
    from taskloom._runtime import Runtime
    from taskloom.guard.config import GuardConfig

SHOWN, STASHED = "shown", "stashed"
MAX_CALL_ID = 200


class Guard(Protocol):
    """What a turn's placement needs of :class:`~taskloom.guard.core.Guard`."""

    @property
    def config(self) -> GuardConfig: ...

    @property
    def runtime(self) -> Runtime: ...

    @property
    def thread_id(self) -> str: ...

    def stash(self, tool_name: str, output: Any, *, hint: str | None = None) -> Wrapped: ...

    def force_stash(self, tool_name: str, output: Any, *, hint: str | None = None) -> Wrapped: ...

    def force_show(self, tool_name: str, output: Any, *, hint: str | None = None) -> Wrapped: ...


@dataclass(frozen=True, slots=True)
class TurnResult:
    """One tool result of a turn: the provider's call id, the tool, its output."""

    call_id: str
    tool_name: str
    output: Any
    hint: str | None = None


def wrap_turn(
    guard: Guard, results: Sequence[TurnResult], *, budget_tokens: int | None = None
) -> list[Wrapped]:
    """What enters history for each of ``results``, in order, within ``budget_tokens``
    (``guard.config.turn_budget_tokens`` by default) for the results placed now."""
    budget = guard.config.turn_budget_tokens if budget_tokens is None else budget_tokens
    if type(budget) is not int or budget < 1:
        raise InvalidInput(f"budget_tokens must be a whole number of at least 1 (got {budget!r})")
    listed = list(results) if isinstance(results, Iterable) else None
    if (
        isinstance(results, str)
        or listed is None
        or not all(isinstance(r, TurnResult) for r in listed)
    ):
        raise InvalidInput("wrap_turn takes a list of TurnResult (call_id, tool_name, output)")
    results = listed
    ids = [r.call_id for r in results]
    for call_id in ids:
        if not call_id or len(call_id) > MAX_CALL_ID:
            raise InvalidInput(f"every result needs a call id of 1 to {MAX_CALL_ID} characters")
    if len(set(ids)) != len(ids):
        raise InvalidInput("two results of one turn have the same call id")
    with guard.runtime.store.read() as tx:
        recorded = sql.placements(tx, guard.thread_id, ids)
    prints = [fingerprint(r) for r in results]
    frozen = {
        r.call_id: placement
        for r, mark in zip(results, prints, strict=True)
        if (placement := _same_result(recorded.get(r.call_id), mark)) is not None
    }
    out = [_placed(guard, r, frozen.get(r.call_id)) for r in results]
    total = sum(w.tokens for w in out)
    movable = sorted(
        (i for i, r in enumerate(results) if r.call_id not in frozen and out[i].mode != "stashed"),
        key=lambda i: (-out[i].tokens, i),
    )
    for i in movable:
        if total <= budget:
            break
        forced = guard.force_stash(results[i].tool_name, results[i].output, hint=results[i].hint)
        total += forced.tokens - out[i].tokens
        out[i] = forced
    decided = {
        r.call_id: f"{STASHED if w.mode == 'stashed' else SHOWN} {mark}"
        for r, w, mark in zip(results, out, prints, strict=True)
        if r.call_id not in recorded
    }
    if decided:
        with guard.runtime.store.write() as tx:
            sql.place(tx, guard.thread_id, decided, guard.runtime.now())
    return out


def fingerprint(result: TurnResult) -> str:
    """16 hex chars of sha256 over the result's tool and output: what its placement is
    recorded with, so an id a server sends again (``call_0`` on every turn) for another
    output does not give that output the first one's placement."""
    output = result.output
    if isinstance(output, bytes | bytearray | memoryview):
        text = bytes(output).decode("utf-8", "surrogateescape")
    elif isinstance(output, str):
        text = output
    else:
        try:
            text = json.dumps(output, ensure_ascii=False, default=repr)
        except (TypeError, ValueError, RecursionError):  # odd keys, a cycle, too deep
            text = deep_text(output)
    return result_id(result.tool_name, text).removeprefix(RESULT_ID_PREFIX)


def _same_result(detail: str | None, mark: str) -> str | None:
    """The placement a recorded ``detail`` ("shown <fingerprint>") gives a result with
    fingerprint ``mark``: none when it was recorded for another output. A placement
    recorded without a fingerprint holds for any output under its call id."""
    if detail is None:
        return None
    placement, _, recorded = detail.partition(" ")
    return placement if not recorded or recorded == mark else None


def _placed(guard: Guard, result: TurnResult, placement: str | None) -> Wrapped:
    """``result`` wrapped as its frozen ``placement`` says (``None``: not placed yet, as
    :meth:`~taskloom.guard.core.Guard.stash` decides)."""
    if placement == STASHED:
        return guard.force_stash(result.tool_name, result.output, hint=result.hint)
    wrapped = guard.stash(result.tool_name, result.output, hint=result.hint)
    if placement == SHOWN and wrapped.mode == "stashed":  # the configuration changed since
        return guard.force_show(result.tool_name, result.output, hint=result.hint)
    return wrapped
