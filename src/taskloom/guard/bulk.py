"""What the guard needs of a large result without copying it whole: sizes, a shape, a
preview, redaction part by part, and the cut that keeps one result within the quota.

A large JSON result (over :data:`LARGE_JSON` characters) is never parsed whole: it is read
as a :class:`~taskloom.guard.jsondoc.JsonDoc`, its credentials are redacted member by member
in place (every other character stays as the tool wrote it), its shape is read from a
skeleton of its first levels and its preview is the compacted JSON of its first members.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from taskloom.domain.redact import redact_text
from taskloom.guard.jsondoc import JsonDoc, LazyArray, LazyObject, is_array, is_object
from taskloom.guard.redact_json import redact_json_text

LARGE_JSON = 4 << 20
"""Characters of JSON text over which a result is read in place rather than parsed whole."""
_PIECE = 1 << 20


def utf8_size(text: str) -> int:
    """``len(text.encode())`` without making the bytes of a large text at once."""
    if text.isascii():
        return len(text)
    return sum(len(text[i : i + _PIECE].encode()) for i in range(0, len(text), _PIECE))


def fit_bytes(text: str, limit: int) -> str:
    """The longest start of ``text`` whose UTF-8 takes at most ``limit`` bytes, ending at a
    line break when one is in its last quarter."""
    if utf8_size(text) <= limit:
        return text
    cut = text[:limit] if text.isascii() else text.encode()[:limit].decode("utf-8", "ignore")
    quarter = len(cut) - len(cut) // 4
    newline = max(cut.rfind("\n", quarter), cut.rfind("\r", quarter))
    return cut[: newline + 1] if newline > 0 else cut


def skeleton(value: Any, depth: int = 3) -> Any:
    """The first levels of a value as mappings and lists, enough for
    :func:`~taskloom.domain.stash.json_shape`: keys two levels down, the length of each
    list, the type of each top-level item. An object is a view (:class:`_Skeleton`) whose
    members are reached only when the shape reads them, its first keys; an array's items
    but its first object are shared stand-ins of their type (:func:`_stand_in`), so the
    skeleton of a long array costs a pointer an item, not a copy of each."""
    if is_object(value):
        if depth <= 0:
            return _EMPTY_OBJECT
        return _Skeleton(value, depth - 1)
    if is_array(value):
        if depth <= 0:
            return [None] * len(value)
        out: list[Any] = []
        first = True
        for item in value:
            if is_object(item) and first:
                out.append(skeleton(item, depth - 1))
                first = False
            else:
                out.append(_stand_in(item))
        return out
    return value


_EMPTY_OBJECT: dict[str, Any] = {}
_EMPTY_ARRAY: list[Any] = []


class _Skeleton(Mapping[str, Any]):
    """An object's skeleton, made a member at a time as it is read."""

    def __init__(self, node: Mapping[str, Any], depth: int) -> None:
        self._node, self._depth = node, depth

    def __getitem__(self, key: str) -> Any:
        return skeleton(self._node[key], self._depth)

    def __iter__(self) -> Iterator[str]:
        return iter(self._node)

    def __len__(self) -> int:
        return len(self._node)


def _stand_in(item: Any) -> Any:
    """One shared value of ``item``'s JSON type (never written to): what a shape says of
    an item but the first object of an array."""
    if is_object(item):
        return _EMPTY_OBJECT
    if is_array(item):
        return _EMPTY_ARRAY
    if isinstance(item, str):
        return ""
    if isinstance(item, bool) or item is None:
        return item
    return 0


def head_value(value: Any, chars: int) -> Any:
    """A plain value holding the first members of ``value`` (in order), about ``chars``
    characters of JSON: what a preview of a large value shows."""
    if not isinstance(value, LazyObject | LazyArray):
        return value
    budget = chars
    if isinstance(value, LazyObject):
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out[key] = head_value(inner, budget)
            budget -= len(key) + _size(out[key])
            if budget <= 0:
                break
        return out
    items: list[Any] = []
    for inner in value:
        items.append(head_value(inner, budget))
        budget -= _size(items[-1])
        if budget <= 0:
            break
    return items


def _size(value: Any) -> int:
    return len(orjson.dumps(value))


def redact_large(doc: JsonDoc) -> tuple[str, int]:
    """The text of a large document with its credentials redacted: each member of a large
    container as :func:`~taskloom.guard.redact_json.redact_json_text` redacts a document, under
    the key it sits at, then every part by the text rules. Only redacted tokens change."""
    text = doc.text
    pieces: list[str] = []
    last = count = 0
    stack: list[Any] = [doc.root()]
    while stack:
        node = stack.pop()
        if not isinstance(node, LazyObject | LazyArray):
            continue
        members = node.spans()
        big: list[Any] = []
        for key, (start, end) in members:
            if doc.is_big(start):
                big.append(doc.node(start, end))
                continue
            new, n = _redact_member(text[start:end], key)
            if n:
                pieces.append(text[last:start] + new)
                last, count = end, count + n
        stack.extend(reversed(big))
    if pieces:
        text = "".join([*pieces, text[last:]])
    changed: list[tuple[int, str]] = []
    for i in range(0, len(text), _PIECE):
        piece, n = redact_text(text[i : i + _PIECE])
        if n:
            changed.append((i, piece))
            count += n
    if changed:
        parts, last = [], 0
        for i, piece in changed:
            parts += [text[last:i], piece]
            last = i + _PIECE
        text = "".join([*parts, text[last:]])
    return text, count


def _redact_member(member: str, key: str | None) -> tuple[str, int]:
    """A member's text redacted by key, with the key it sits under as context."""
    if key is None:
        return redact_json_text(member)
    prefix = "{" + json.dumps(key, ensure_ascii=False) + ":"
    new, n = redact_json_text(prefix + member + "}")
    return (new[len(prefix) : -1], n) if n else (member, 0)
