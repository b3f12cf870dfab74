"""JSON written back as its author wrote it: only the values that change are rewritten.

:func:`rewrite` takes a JSON document's text and the data it is to hold now, and returns
the text with each changed value written over the old one where it stands, each new key
added after the last one of its object, and every other byte (key order, spacing, compact
arrays, the final newline or its absence) as it was. New values follow the file's indent
(a tab, or a number of spaces) and line endings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

_INDENT = re.compile(r"^([ \t]+)\S", re.M)
_SPACE = " \t\r\n"
_DECODER = json.JSONDecoder()


@dataclass
class _Span:
    """Where a value is in the text."""

    start: int
    end: int
    inner: dict[Any, _Span] | None = None
    """Once opened (:func:`_open`): an object's members by key, an array's items by index."""


def rewrite(text: str, old: Any, new: Any) -> str:
    """``text``, which holds ``old``, changed to hold ``new``: new keys go at the end of their
    object, in ``new``'s order. A text that is blank becomes ``new`` written out in full, with
    a final newline; so would a text the edits did not turn into one holding ``new``."""
    style = _Style(text)
    if text.strip():
        edits: list[tuple[int, int, str]] = []
        whole = _Span(_skip(text, 0), len(text.rstrip(_SPACE)))
        _diff(text, whole, old, new, style, edits)
        edited = text
        for start, end, fragment in sorted(edits, reverse=True):
            edited = edited[:start] + fragment + edited[end:]
        if json.loads(edited) == new:
            return edited
    return style.dump(new, "", pretty=True) + style.eol


class _Style:
    """The file's indent unit (two spaces when it shows none) and line ending."""

    def __init__(self, text: str) -> None:
        found = _INDENT.search(text)
        self.unit: str = found.group(1) if found else "  "
        self.eol = "\r\n" if "\r\n" in text else "\n"

    def dump(self, value: Any, margin: str, pretty: bool) -> str:
        """``value`` as JSON, its lines after the first indented by ``margin``."""
        if not pretty:
            return json.dumps(value, ensure_ascii=False)
        text = json.dumps(value, indent=self.unit, ensure_ascii=False)
        return text.replace("\n", self.eol + margin)


def _diff(
    text: str, span: _Span, old: Any, new: Any, style: _Style, edits: list[tuple[int, int, str]]
) -> None:
    """Record the edits that turn the value at ``span`` from ``old`` into ``new``."""
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() <= new.keys():
        shared: Iterable[tuple[Any, Any, Any]] = ((key, old[key], new[key]) for key in old)
        added: dict[str, Any] | list[Any] = {k: v for k, v in new.items() if k not in old}
    elif _extends(old, new):
        shared, added = zip(range(len(old)), old, new, strict=False), new[len(old) :]
    else:
        margin = _margin(text, span.start)
        edits.append((span.start, span.end, style.dump(new, margin, _pretty(text, span))))
        return
    for key, a, b in shared:
        if a != b:
            _diff(text, _open(text, span)[key], a, b, style, edits)
    if added:
        edits.append(_insert(text, span, added, style))


def _extends(old: Any, new: Any) -> bool:
    """Whether array ``new`` is array ``old`` with items added at its end, and each of the
    items they share unchanged or a container still (edited in place)."""
    if not (isinstance(old, list) and isinstance(new, list) and len(old) <= len(new)):
        return False
    return all(
        a == b or (type(a) is type(b) and isinstance(a, dict | list))
        for a, b in zip(old, new, strict=False)
    )


def _insert(
    text: str, span: _Span, added: dict[str, Any] | list[Any], style: _Style
) -> tuple[int, int, str]:
    """The edit adding ``added`` (members or items) at the end of the container at ``span``,
    each on a line of its own indented as the first one there, if that is on a line of its
    own."""
    inside = text[span.start + 1 : span.end - 1]
    full = bool(inside.strip())
    pretty = _pretty(text, span)
    if not pretty:
        margin, close = "", ""
    elif full:
        margin, close = _margin(text, _skip(text, span.start + 1)), ""
    else:
        close = style.eol + _margin(text, span.end - 1)
        margin = _margin(text, span.end - 1) + style.unit
    lead = style.eol + margin if pretty else (" " if full else "")
    rows = [
        (f"{json.dumps(key, ensure_ascii=False)}: " if isinstance(added, dict) else "")
        + style.dump(value, margin, pretty)
        for key, value in (added.items() if isinstance(added, dict) else enumerate(added))
    ]
    fragment = ("," if full else "") + lead + ("," + lead).join(rows) + close
    if full:
        at = span.start + 1 + len(inside.rstrip(_SPACE))  # just past the last value
        return at, at, fragment
    return span.start + 1, span.end - 1, fragment


def _pretty(text: str, span: _Span) -> bool:
    """Whether what is written at ``span`` goes over several lines: the object or array
    there does already, or it is empty or no container in a file not written all on one
    line."""
    inner = text[span.start : span.end]
    if inner[0] in "{[" and inner[1:-1].strip():
        return "\n" in inner
    return "\n" in text.strip() or text.strip() in ("{}", "[]")


def _margin(text: str, at: int) -> str:
    """The whitespace that starts the line ``at`` is on."""
    before = text[text.rfind("\n", 0, at) + 1 : at]
    return before[: len(before) - len(before.lstrip(" \t"))]


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _scan(text: str, at: int) -> _Span:
    """The span of the JSON value at ``at`` (``text`` is known to be valid JSON)."""
    return _Span(at, _DECODER.raw_decode(text, at)[1])


def _open(text: str, span: _Span) -> dict[Any, _Span]:
    """The members or items of the object or array at ``span``, found once: only the
    containers on the way to a change are opened, so the rest of a large file is read at
    the speed of the JSON decoder."""
    if span.inner is not None:
        return span.inner
    span.inner, at = {}, _skip(text, span.start + 1)
    while at < span.end - 1:
        if text[span.start] == "{":
            key, after = _DECODER.raw_decode(text, at)
            at = _skip(text, _skip(text, after) + 1)
        else:
            key = len(span.inner)
        child = span.inner[key] = _scan(text, at)
        at = _skip(text, child.end)
        at = _skip(text, at + 1) if text[at] == "," else at
    return span.inner
