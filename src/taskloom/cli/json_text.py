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
from dataclasses import dataclass, field
from typing import Any

_INDENT = re.compile(r"^([ \t]+)\S", re.M)
_SPACE = " \t\r\n"
_DECODER = json.JSONDecoder()


@dataclass
class _Span:
    """Where a value is in the text; an object's members by key (with where each key
    starts), an array's items in order."""

    start: int
    end: int
    keys: dict[str, int] = field(default_factory=dict)
    members: dict[str, _Span] = field(default_factory=dict)
    items: list[_Span] = field(default_factory=list)


def rewrite(text: str, old: Any, new: Any) -> str:
    """``text``, which holds ``old``, changed to hold ``new``: new keys go at the end of their
    object, in ``new``'s order. A text that is blank becomes ``new`` written out in full, with
    a final newline; so would a text the edits did not turn into one holding ``new``."""
    style = _Style(text)
    if text.strip():
        edits: list[tuple[int, int, str]] = []
        _diff(text, _scan(text, _skip(text, 0)), old, new, style, edits)
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
        for key, value in new.items():
            if key in old:
                _diff(text, span.members[key], old[key], value, style, edits)
        added = {key: value for key, value in new.items() if key not in old}
        if added:
            edits.append(_insert(text, span, added, style))
        return
    if _extends(old, new):
        for item, a, b in zip(span.items, old, new, strict=False):
            _diff(text, item, a, b, style, edits)
        if len(new) > len(old):
            edits.append(_insert(text, span, new[len(old) :], style))
        return
    margin = _margin(text, span.start)
    edits.append((span.start, span.end, style.dump(new, margin, _pretty(text, span))))


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
    """The edit adding ``added`` (members or items) at the end of the container at ``span``."""
    starts = list(span.keys.values()) if span.keys else [s.start for s in span.items]
    ends = [s.end for s in span.members.values()] if span.keys else [s.end for s in span.items]
    pretty = _pretty(text, span)
    if not pretty:
        margin, close = "", ""
    elif starts:
        margin, close = _margin(text, starts[-1]), ""
    else:
        close = style.eol + _margin(text, span.end - 1)
        margin = _margin(text, span.end - 1) + style.unit
    lead = style.eol + margin if pretty else (" " if starts else "")
    rows = [
        (f"{json.dumps(key, ensure_ascii=False)}: " if isinstance(added, dict) else "")
        + style.dump(value, margin, pretty)
        for key, value in (added.items() if isinstance(added, dict) else enumerate(added))
    ]
    fragment = ("," if starts else "") + lead + ("," + lead).join(rows) + close
    if starts:
        return ends[-1], ends[-1], fragment
    return span.start + 1, span.end - 1, fragment


def _pretty(text: str, span: _Span) -> bool:
    """Whether what goes in this container is written over several lines: the container is
    so already, or it is empty in a file not written all on one line."""
    if span.keys or span.items:
        return "\n" in text[span.start : span.end]
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
    if text[at] not in "{[":
        return _Span(at, _DECODER.raw_decode(text, at)[1])
    span, closer = _Span(at, at), "}" if text[at] == "{" else "]"
    at = _skip(text, at + 1)
    while text[at] != closer:
        if closer == "}":
            key, after = _DECODER.raw_decode(text, at)
            span.keys[key] = at
            child = _scan(text, _skip(text, _skip(text, after) + 1))
            span.members[key] = child
        else:
            child = _scan(text, at)
            span.items.append(child)
        at = _skip(text, child.end)
        at = _skip(text, at + 1) if text[at] == "," else at
    span.end = at + 1
    return span
