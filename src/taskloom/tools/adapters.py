"""Provider adapters: tool calls out of a model response, tool results back as messages.

Each provider wraps the same idea differently: OpenAI chat-completions puts ``tool_calls`` on
the assistant message and wants one ``role: tool`` message per call; the Responses API emits
``function_call`` output items and wants ``function_call_output`` items; Anthropic emits
``tool_use`` content blocks and wants ``tool_result`` blocks in the next user message. These
helpers read plain dicts (the JSON the APIs return, or an SDK object's ``model_dump()``), so
they work with any client library or none. The thread and agent come from the caller's
:class:`ToolContext`, never from the response.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from taskloom.domain.errors import InvalidInput
from taskloom.tools.registry import Choice, Toolbox
from taskloom.tools.spec import ToolContext, ToolResult
from taskloom.tools.stash import TOOLS as RETRIEVAL_TOOLS

if TYPE_CHECKING:
    from taskloom.guard.core import Guard

FORMATS = ("openai", "openai-responses", "anthropic")
UNGUARDED = frozenset(spec.name for spec in RETRIEVAL_TOOLS)
"""The tools that read the stash back: their answers are capped already (``read_cap_tokens``,
``extract_cap_tokens``), and stashing one again would answer a read with one more result
to read."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for: the provider's call id, the tool name, raw arguments."""

    id: str
    name: str
    arguments: str | dict[str, Any]


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def _items(value: Any, what: str) -> list[Any]:
    """A response's list of calls or blocks (none if absent). Anything else is a malformed
    response, said as such (a string is not read character by character, as calls)."""
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise InvalidInput(f"malformed response: its {what} is {type(value).__name__}, not a list")
    return list(value)


def tool_calls(response: Any, format: str) -> list[ToolCall]:
    """The tool calls in a provider response (a whole response or just its message/items).

    - ``openai``: a chat-completions response, a choice, or the assistant message.
    - ``openai-responses``: a Responses API response (its ``output`` list) or that list.
    - ``anthropic``: a Messages API response (its ``content`` blocks) or that list.
    """
    if format == "openai":
        message = response
        choices = _items(_field(response, "choices"), "choices")
        if choices:
            if not isinstance(choices[0], Mapping) and not hasattr(choices[0], "message"):
                kind = type(choices[0]).__name__
                raise InvalidInput(f"malformed response: its choices[0] is {kind}, not an object")
            message = _field(choices[0], "message")
        elif _field(response, "message") is not None:
            message = _field(response, "message")
        calls = _items(_field(message, "tool_calls"), "tool_calls")
        return [
            ToolCall(
                _field(c, "id"),
                _field(_field(c, "function"), "name"),
                _arguments(_field(_field(c, "function"), "arguments"), "{}"),
            )
            for c in calls
        ]
    if format == "openai-responses":
        items = _items(
            response if isinstance(response, list) else _field(response, "output"), "output"
        )
        return [
            ToolCall(
                _field(i, "call_id"), _field(i, "name"), _arguments(_field(i, "arguments"), "{}")
            )
            for i in items
            if _field(i, "type") == "function_call"
        ]
    if format == "anthropic":
        blocks = _items(
            response if isinstance(response, list) else _field(response, "content"), "content"
        )
        return [
            ToolCall(_field(b, "id"), _field(b, "name"), _arguments(_field(b, "input"), {}))
            for b in blocks
            if _field(b, "type") == "tool_use"
        ]
    raise InvalidInput(f"unknown format '{format}' (use one of: {', '.join(FORMATS)})")


def _arguments(given: Any, none: Any) -> Any:
    """A call's arguments as sent; only missing ones (``None``, OpenAI's ``""``) mean none.
    Any other value goes to dispatch as it is, so ``[]`` or ``false`` is an argument error
    there, not an empty object that runs the tool."""
    return none if given is None or given == "" else given


def result_messages(
    results: list[tuple[ToolCall, ToolResult]], format: str
) -> list[dict[str, Any]]:
    """What to append to the conversation so the model sees each result (errors flagged)."""
    if format == "openai":
        return [
            # No error flag on OpenAI tool messages: dispatch's "error: …" text says it.
            {"role": "tool", "tool_call_id": call.id, "content": result.content}
            for call, result in results
        ]
    if format == "openai-responses":
        return [
            {"type": "function_call_output", "call_id": call.id, "output": result.content}
            for call, result in results
        ]
    if format == "anthropic":
        if not results:
            return []
        blocks = [
            {
                "type": "tool_result",
                "tool_use_id": call.id,
                "content": result.content,
                **({"is_error": True} if result.is_error else {}),
            }
            for call, result in results
        ]
        return [{"role": "user", "content": blocks}]
    raise InvalidInput(f"unknown format '{format}' (use one of: {', '.join(FORMATS)})")


def run_tool_calls(
    tools: Toolbox,
    response: Any,
    format: str,
    ctx: ToolContext,
    *,
    guard: Guard | None = None,
    profile: Choice = None,
) -> list[dict[str, Any]]:
    """Dispatch every tool call in ``response`` under ``ctx``; return the result messages
    (empty when the model asked for no tools: its turn is over). ``profile``: the tools the
    model was given (``tl.tools.schemas(format, profile=…)``, the default profile unless
    given); a call of any other tool is answered as an unknown tool. With ``guard``, the
    results that are not errors (nor :data:`UNGUARDED` tools') go through
    :meth:`Guard.wrap_turn` first: one budget for the turn, each placement frozen by its
    call id."""
    calls = tool_calls(response, format)
    results = [(c, tools.dispatch(c.name, c.arguments, ctx, profile=profile)) for c in calls]
    if guard is not None:
        results = guard_results(guard, results)
    return result_messages(results, format)


def guard_results(
    guard: Guard, results: list[tuple[ToolCall, ToolResult]]
) -> list[tuple[ToolCall, ToolResult]]:
    """``results`` with each successful one's content as the guard places it: by
    ``guard.wrap_turn`` (one budget, placement frozen by call id) when its call id names it
    alone, else by ``guard.stash`` on its own. A call with no id, an id not a string or too
    long, or an id another call of the response repeats (compatible servers send all of
    these) is still guarded, and nothing raises once the tools have run. The answers of
    :data:`UNGUARDED` tools go in as they are."""
    from taskloom.guard.budget import MAX_CALL_ID, TurnResult

    ok = [i for i, (c, r) in enumerate(results) if not r.is_error and c.name not in UNGUARDED]
    ids = [results[i][0].id for i in ok]
    usable = Counter(c for c in ids if isinstance(c, str) and 0 < len(c) <= MAX_CALL_ID)
    keyed = [i for i, c in zip(ok, ids, strict=True) if isinstance(c, str) and usable[c] == 1]
    turn = [TurnResult(results[i][0].id, results[i][0].name, results[i][1].content) for i in keyed]
    placed = {i: w.text for i, w in zip(keyed, guard.wrap_turn(turn), strict=True)}
    for i in ok:
        if i not in placed:
            call, result = results[i]
            placed[i] = guard.stash(call.name, result.content).text
    return [
        (c, replace(r, content=placed[i]) if i in placed else r) for i, (c, r) in enumerate(results)
    ]
