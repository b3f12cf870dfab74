"""Whatever a model sends, every text a tool returns encodes as UTF-8.

A model's JSON may carry a lone surrogate (``"\\ud800"``); a result that echoed one back (an
unknown id, an unknown tool's name) could not be encoded, and the host's next request to the
model failed. The arguments here are generated from each tool's own schema, deterministically:
a hostile string in every string field, in nested lists and objects, as keys, as tool names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.tools import BUILTIN_TOOLS, ToolContext, ToolResult

HOSTILE = ["\ud800", "a\udfffb", "\udc80\udc81", "id-\ud83d", "\ude00x", "$.\ud800[0]", "1-\udbff"]
"""Lone surrogates alone, inside text, in pairs the wrong way round, at either end."""
CTX = ToolContext(thread_id="hostile", agent_id="agent-1")


def _options(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema's alternatives (``anyOf``), null left out."""
    found = schema.get("anyOf", [schema])
    return [s for s in found if s.get("type") != "null"] or [schema]


def plain(schema: dict[str, Any]) -> Any:
    """A value the schema takes, as small as it gets."""
    schema = _options(schema)[0]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "string":
        return "x"
    if kind in ("integer", "number"):
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return True
    if kind == "array":
        return [plain(schema.get("items", {"type": "string"}))]
    if kind == "object":
        props = schema.get("properties", {})
        return {name: plain(props[name]) for name in schema.get("required", [])}
    return None


def hostile(schema: dict[str, Any], depth: int = 0) -> Iterator[Any]:
    """Values of the schema's shape with a lone surrogate in each place a string can go."""
    for option in _options(schema):
        kind = option.get("type")
        if kind == "string" or "enum" in option:
            yield from HOSTILE
        elif kind == "array":
            for item in hostile(option.get("items", {"type": "string"}), depth + 1):
                yield [item]
            yield [plain(option.get("items", {})), "\ud800", {"\udc00": ["\ud800"]}]
        elif kind == "object":
            yield from _objects(option, depth)


def _objects(schema: dict[str, Any], depth: int) -> Iterator[dict[str, Any]]:
    props: dict[str, Any] = schema.get("properties", {})
    bases = [plain(schema)]
    for name, prop in props.items():  # every operation of a tool with an `op`
        for value in prop.get("enum", [])[1:] if depth == 0 else []:
            bases.append({**bases[0], name: value})
    for base in bases:
        for name, prop in props.items():
            for value in hostile(prop, depth + 1):
                yield {**base, name: value}
        yield {**base, "\ud800": "x"}
        yield {**base, "x\udfff": {"\ud800": ["\udc00", {"\udbff": "\ud800"}]}}


def names() -> Iterator[object]:
    """Tool names a model may make up: every real one with a surrogate in it, and others."""
    for spec in BUILTIN_TOOLS:
        yield spec.name + "\ud800"
        yield "\udfff" + spec.name
    yield from HOSTILE
    yield ["\ud800"]
    yield {"\ud800": "todo"}


def _check(result: ToolResult, what: str) -> None:
    try:
        result.content.encode("utf-8")
        json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        pytest.fail(f"{what} returned text that is not UTF-8 ({exc}): {result.content!r}")


def _seed(tl: Taskloom) -> None:
    """Something for every tool to find: a card, a goal, a task, a stashed result."""
    tl.board(CTX.thread_id or "").add("a card")
    tl.goal(CTX.thread_id or "").set("an objective")
    tl.queue.add("a task")
    tl.guard(CTX.thread_id or "").stash("tool", json.dumps({"items": list(range(5000))}))


def test_every_tool_answers_hostile_arguments_in_utf8(tl: Taskloom) -> None:
    _seed(tl)
    calls = 0
    for spec in BUILTIN_TOOLS:
        for args in hostile(spec.input_schema()):
            for sent in (args, json.dumps(args)):  # as an object, and as JSON text with \u escapes
                result = tl.tools.dispatch(spec.name, sent, CTX, allow_host=True)
                _check(result, f"{spec.name}({sent!a})")
                calls += 1
    assert calls > 1000  # every tool, every field: not a handful of cases


def test_unknown_tool_names_with_surrogates_are_answered_in_utf8(tl: Taskloom) -> None:
    for name in names():
        result = tl.tools.dispatch(name, {}, CTX)  # type: ignore[arg-type]
        assert result.is_error
        _check(result, f"tool {name!a}")
    got = tl.tools.dispatch("x\ud800", {}, CTX)
    assert got.content.startswith("error: unknown tool 'x\ufffd'")


def test_an_unknown_id_with_a_surrogate_comes_back_replaced(tl: Taskloom) -> None:
    result = tl.tools.dispatch("todo", {"op": "remove", "id": "\ud800"}, CTX)
    assert result.is_error
    assert "'\ufffd'" in result.content
    result.content.encode("utf-8")
