"""JSON compaction that drops only derivable bulk and says exactly what it dropped.

Real API payloads are mostly navigation and repetition: GitHub objects carry a dozen
``*_url`` hypermedia links that are the object's own ``url`` plus a suffix, ``null`` fields,
and the same ``repository``/``owner``/``sender`` object repeated in every item. Dropping those
keeps every identifier, count and distinct value, and on GitHub's webhook payloads removes
about three quarters of the tokens. Nothing is sampled and nothing is summarised: the
original stays in the stash, and the report lists every kind of thing removed.

Rules:
- ``null`` values are dropped;
- a ``*_url`` field (other than ``url`` and ``html_url``) is dropped when it is a URL template
  (``{/name}``) or lives on the same host as the object's own ``url`` (it is a link the API
  can rebuild);
- an object (or array) with more than ``MIN_REPEAT_CHARS`` of JSON that is identical to one
  already emitted is replaced by ``{"$same_as": "<path of the first copy>"}``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson

from taskloom.domain.stash import child_path
from taskloom.domain.text import counted

MIN_REPEAT_CHARS = 120
KEEP_URL_KEYS = frozenset({"url", "html_url"})
MAX_DEPTH = 128
"""The deepest JSON the guard handles as JSON. orjson refuses 255 levels and the recursive
walks of compaction and retrieval would near Python's recursion limit well before 1,000, so
deeper output is kept as text, which loses nothing. Real API payloads stay far below it."""


def dumps(value: Any) -> str:
    """Minified JSON with non-ASCII kept (the form counted in tokens)."""
    return orjson.dumps(value).decode()


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests more than ``limit`` containers deep (a cycle always does).
    Iterative: this is what protects the recursive code from a deep value."""
    stack = [(value, 1)] if isinstance(value, dict | list | tuple) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list | tuple))
    return False


def holds_non_finite(value: Any) -> bool:
    """Whether ``value`` holds a float that is ``nan`` or infinite, which orjson writes as
    ``null``: a value the guard would show, read and extract changed."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, float):
            if not math.isfinite(node):
                return True
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
    return False


def deep_text(value: Any) -> str:
    """JSON text for a value too deep (or cyclic) for the encoders, built without recursion:
    the guard keeps it as text. Other objects are written as their ``repr``; a container met
    again inside itself becomes ``"[circular]"``."""
    out: list[str] = []
    stack: list[Any] = [value]
    open_ids: list[int] = []  # the containers being written, innermost last
    inside: set[int] = set()
    while stack:
        item = stack.pop()
        if isinstance(item, _Close):
            out.append(item.text)
            inside.discard(open_ids.pop())
            continue
        if isinstance(item, _Raw):
            out.append(item.text)
            continue
        if isinstance(item, dict | list | tuple) and id(item) in inside:
            out.append('"[circular]"')
            continue
        if isinstance(item, dict | list | tuple):
            open_ids.append(id(item))
            inside.add(id(item))
        if isinstance(item, dict):
            parts: list[Any] = [_Raw("{")]
            for i, (key, child) in enumerate(item.items()):
                sep = "," if i else ""
                parts += [_Raw(sep + json.dumps(str(key), ensure_ascii=False) + ":"), child]
            stack.extend(reversed([*parts, _Close("}")]))
        elif isinstance(item, list | tuple):
            parts = [_Raw("[")]
            for i, child in enumerate(item):
                parts += [_Raw(","), child] if i else [child]
            stack.extend(reversed([*parts, _Close("]")]))
        else:
            out.append(json.dumps(item, ensure_ascii=False, default=repr))
    return "".join(out)


@dataclass(frozen=True, slots=True)
class _Raw:
    text: str


@dataclass(frozen=True, slots=True)
class _Close:
    text: str


_ONE = {
    "nulls": "null",
    "derivable *_url fields": "derivable *_url field",
    "repeated sub-objects": "repeated sub-object",
}
"""Each kind of dropped thing, as the report names one of it."""


@dataclass(frozen=True, slots=True)
class Compacted:
    value: Any
    text: str
    dropped: dict[str, int]

    def report(self) -> str:
        """``"dropped: 412 derivable *_url fields, 96 nulls, 17 repeated sub-objects"``."""
        if not self.dropped:
            return "nothing dropped"
        return "dropped: " + ", ".join(counted(n, _ONE[what]) for what, n in self.dropped.items())


def _netloc(url: str) -> str | None:
    """``url``'s host part; ``None`` for text ``urlsplit`` refuses (``http://[x/``, or a
    password redacted to ``https://user:[redacted]@host``, read as a bad IPv6 address)."""
    try:
        return urlsplit(url).netloc
    except ValueError:
        return None


class _Compactor:
    def __init__(self) -> None:
        self.dropped: Counter[str] = Counter()
        self.seen: dict[str, str] = {}

    def strip(self, value: Any) -> Any:
        """First pass: drop nulls and derivable links, everywhere."""
        if isinstance(value, dict):
            own = value.get("url")
            host = _netloc(own) if isinstance(own, str) else None
            out: dict[str, Any] = {}
            for key, child in value.items():
                if child is None:
                    self.dropped["nulls"] += 1
                elif self._derivable_url(key, child, host):
                    self.dropped["derivable *_url fields"] += 1
                else:
                    out[key] = self.strip(child)
            return out
        if isinstance(value, list):
            return [self.strip(v) for v in value]
        return value

    @staticmethod
    def _derivable_url(key: str, value: Any, host: str | None) -> bool:
        if not key.endswith("_url") or key in KEEP_URL_KEYS or not isinstance(value, str):
            return False
        if "{" in value and "}" in value:
            return True
        return host is not None and _netloc(value) == host

    def dedupe(self, value: Any, path: str) -> Any:
        """Second pass, top-down in document order: the first copy stays whole."""
        if not isinstance(value, dict | list) or not value:
            return value
        text = dumps(value)
        if len(text) >= MIN_REPEAT_CHARS:
            first = self.seen.get(text)
            if first is not None:
                self.dropped["repeated sub-objects"] += 1
                return {"$same_as": first}
            self.seen[text] = path
        if isinstance(value, dict):
            return {k: self.dedupe(v, child_path(path, k)) for k, v in value.items()}
        return [self.dedupe(v, child_path(path, i)) for i, v in enumerate(value)]


def compact(value: Any) -> Compacted:
    """Compact a parsed JSON value (see module docs); the input is not modified."""
    worker = _Compactor()
    out = worker.dedupe(worker.strip(value), "$")
    return Compacted(out, dumps(out), dict(worker.dropped))
