"""Stashed tool results: ids, JSON paths, shape digests and the placeholder text (pure).

The placeholder is what the model sees instead of an oversized tool output. It is a function
of the output alone (no timestamps, no counters), so the same output always yields the same
text and a prompt cache built on it is never invalidated. The result id is a content hash for
the same reason: it survives restarts and is the same in every process.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from taskloom.domain.lines import line_total, longest_line
from taskloom.domain.text import counted

RESULT_ID_PREFIX = "res_"
_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_SHAPE_KEYS = 24


def result_id(tool_name: str, content: str) -> str:
    """``res_`` + 16 hex chars of sha256 over the length-prefixed tool name and content."""
    digest = hashlib.sha256(f"{len(tool_name)}:{tool_name}\0".encode())
    for start in range(0, len(content), _HASH_PIECE):  # a 50 MB result is not copied at once
        digest.update(content[start : start + _HASH_PIECE].encode("utf-8", "surrogatepass"))
    return RESULT_ID_PREFIX + digest.hexdigest()[:16]


_HASH_PIECE = 1 << 20


def child_path(path: str, key: str | int) -> str:
    """JSONPath of a child: ``$.items[3].user`` (bracket-quoted when a key is not an identifier)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _SIMPLE_KEY.match(key):
        return f"{path}.{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"{path}['{escaped}']"


def _type_name(value: Any) -> str:
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return f"array[{len(value)}]"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "string" if isinstance(value, str) else "null"


def _object_keys(obj: Mapping[str, Any], depth: int) -> str:
    """The first keys of ``obj`` (only those are read: ``obj`` may be a view of a large
    object, whose other members are never reached)."""
    parts = []
    for key in itertools.islice(obj, MAX_SHAPE_KEYS):
        value = obj[key]
        if isinstance(value, Mapping) and depth > 0:
            parts.append(f"{key}{{{_object_keys(value, depth - 1)}}}")
        elif isinstance(value, list):
            parts.append(f"{key}[{len(value)}]")
        else:
            parts.append(key)
    if len(obj) > MAX_SHAPE_KEYS:
        parts.append(f"… +{counted(len(obj) - MAX_SHAPE_KEYS, 'key')}")
    return ", ".join(parts)


def json_shape(value: Any) -> str:
    """One or two lines: the top-level type, keys (one level deeper) and array lengths.
    An object may be any ``Mapping``."""
    if isinstance(value, Mapping):
        return f"JSON object with {counted(len(value), 'key')}: {_object_keys(value, 1)}"
    if isinstance(value, list):
        kinds = sorted({_type_name(v).split("[")[0] for v in value})
        line = f"JSON array of {counted(len(value), 'item')} ({', '.join(kinds) or 'empty'})"
        first = next((v for v in value if isinstance(v, Mapping)), None)
        if first is not None:
            line += f"; item keys: {_object_keys(first, 0)}"
        return line
    return f"JSON {_type_name(value)}"


def text_shape(text: str) -> str:
    """The text's line count and longest line, its lines those of
    :mod:`~taskloom.domain.lines` (the header's and ``read_result``'s)."""
    count = line_total(text) if text else 0
    return f"text, {counted(count, 'line')} (longest {counted(longest_line(text), 'char')})"


@dataclass(frozen=True, slots=True)
class StashFacts:
    """What the placeholder says about one stashed output."""

    result_id: str
    tool_name: str
    tokens: int
    encoding: str
    bytes: int
    lines: int
    shape: str
    preview: str
    is_json: bool
    notes: tuple[str, ...] = ()
    preview_label: str = ""
    """What the preview is, when not simply the first characters (a text's head and tail)."""
    tokens_exact: bool = True
    """Whether ``tokens`` is the exact count, else an estimate written as ``about N``."""

    def token_count(self) -> str:
        """``tokens`` as the placeholder writes it: ``N tokens``, or ``about N tokens``."""
        return ("" if self.tokens_exact else "about ") + counted(self.tokens, "token")


def placeholder(facts: StashFacts) -> str:
    """The text that enters history in place of the output. Deterministic in ``facts``."""
    rid = facts.result_id
    head = (
        f'[stashed tool output: result_id="{rid}" · tool {facts.tool_name} · '
        f"{facts.token_count()} ({facts.encoding}) · {counted(facts.bytes, 'byte')}"
        f" · {counted(facts.lines, 'line')}]"
    )
    label = facts.preview_label or f"first {counted(len(facts.preview), 'char')}"
    out = [head, f"Shape: {facts.shape}"]
    out.extend(facts.notes)
    out.append(f"Preview ({label}):")
    out.append(facts.preview)
    out.append("")
    out.append("The full output is stored. To see more, call:")
    if facts.is_json:
        out.append(f'  read_result(result_id="{rid}", path="$.some.key")  exact JSON at a path')
    out.append(f'  read_result(result_id="{rid}", lines="1-200")  or page=2  exact lines')
    out.append(
        f'  extract_from_result(result_id="{rid}", query="...")  name the ids/fields you need; '
        "JSONPath ($..login), /regex/ and plain questions work"
    )
    return "\n".join(out)
