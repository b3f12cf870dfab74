"""A tool call's arguments as a model sends them: read into an object, and each refusal said
so the model can send them right the next time.

Models send arguments as an object or as its JSON text, send ``null`` (or nothing at all) for
a tool without arguments, and send ``"5"`` where a schema says a number. The first two are
read; the last is refused, naming what was sent and what to send instead.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from taskloom.domain.common import parse_json_object
from taskloom.domain.errors import InvalidInput
from taskloom.domain.text import shown_id

BOUND_BY_HOST = {
    "threadid": "thread",
    "thread": "thread",
    "agentid": "agent",
    "agent": "agent",
}
"""Arguments a model may send for what the host binds, and what each names; a name is
looked up in lower case without ``_`` and ``-`` (``thread_id``, ``threadId``, ``thread-id``)."""

_EXPECTED: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "string_type": ("text", str),
    "int_type": ("an integer", int),
    "float_type": ("a number", (int, float)),
    "bool_type": ("true or false", bool),
    "list_type": ("a list", list),
    "dict_type": ("an object", dict),
    "model_type": ("an object", dict),
    "model_attributes_type": ("an object", dict),
}
"""Pydantic's type errors: what the schema wants, in a model's words, and its JSON type."""


def read(args: object, tool: str) -> dict[str, Any]:
    """The arguments object of a call of ``tool``: ``args`` itself, or the object its JSON
    text holds; nothing (``None``, ``""``, ``"null"``) is an empty object. Raises
    :class:`InvalidInput` for text that is not a JSON object, or another value."""
    if isinstance(args, str):
        text = args.strip()
        if not text or text == "null":
            return {}
        return parse_json_object(text, f"the arguments object of tool '{tool}'")
    if args is None:
        return {}
    if not isinstance(args, dict):
        raise InvalidInput(f"arguments for tool '{tool}' must be a JSON object")
    return args


def refusal(tool: str, exc: ValidationError) -> str:
    """Why ``tool``'s arguments were refused: each wrong argument, and what to send."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: {_why(err)}")
    return f"invalid arguments for tool '{tool}': " + "; ".join(parts)


def _why(err: ErrorDetails) -> str:
    kind, given = err["type"], err.get("input")
    if kind == "extra_forbidden":
        name = str(err["loc"][-1]).lower().replace("_", "").replace("-", "")
        bound = BOUND_BY_HOST.get(name) if len(err["loc"]) == 1 else None
        if bound is not None:
            return f"unknown argument (the {bound} is bound by the host; do not pass it)"
        return "unknown argument"
    if kind == "missing":
        return "required"
    if kind in _EXPECTED:
        return _wrong_type(kind, given)
    return str(err["msg"])


def _wrong_type(kind: str, given: object) -> str:
    """``expected a number, got text "5": send 5, without quotes`` and the like."""
    expected, json_type = _EXPECTED[kind]
    if given is None:
        return f"expected {expected}, got null (leave an optional argument out instead)"
    said = f"expected {expected}, got {_kind(given)}"
    if json_type is str and isinstance(given, int | float) and not isinstance(given, bool):
        return f'{said}: send "{given}", in quotes'
    if isinstance(given, str) and json_type is not str:
        try:
            meant = json.loads(given)
        except ValueError:
            return said
        if isinstance(meant, json_type) and (json_type is bool or not isinstance(meant, bool)):
            shown = shown_id(json.dumps(meant, ensure_ascii=False))
            return f"{said} {json.dumps(shown_id(given))}: send {shown}, without quotes"
    return said


def _kind(value: object) -> str:
    """A JSON value's kind, as a model's author names it."""
    names = {bool: "true or false", str: "text", list: "a list", dict: "an object"}
    return names.get(type(value), "a number")
