"""A JSON text read as a value without holding all of it parsed at once.

A parsed JSON value takes three to four times its text in memory, so a 50 MB result parsed
whole, copied for redaction and compaction and pretty-printed for line numbers took about
a gigabyte. :class:`JsonDoc` parses only what is reached: a container whose text is at most
``small`` characters is parsed whole when reached (it is cheap); a larger one is a
:class:`LazyObject` or :class:`LazyArray`, a read-only ``Mapping``/``Sequence`` that knows
where each member's text is and parses a member when it is asked for, keeping nothing.
One scan of the brackets (possessive regex, C speed) finds the large containers first. A
document keeps the indexes of the :data:`KEPT_LAZY` large containers it reached last (where
each member's text is: plain data, which refers to no container and no document), so
reaching member after member of a 200,000-item array does not scan the array each time.

Everything the guard does with a JSON result goes through this: JSONPath
(:mod:`~taskloom.guard.jsonpath` works on any ``Mapping``/``Sequence``), ranking and counting
walk :func:`JsonDoc.walk`, and line numbers come from :func:`pretty_lines`, which writes the
2-space pretty print line by line exactly as ``json.dumps(indent=2)`` would.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

from taskloom.domain.lines import ReadLines

SMALL = 1 << 18
"""Characters of text up to which a container is parsed whole when reached."""

_STRUCT = re.compile(r'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+([\[\]{}])', re.S)
"""Everything up to the next bracket outside a string, and that bracket."""
_WS = re.compile(r"[ \t\n\r]*")
_PLAIN = json.JSONDecoder()
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

Loads = Callable[[str], Any]

KEPT_LAZY = 16
"""Large containers whose index of members a document keeps, the last reached: the root and
the path down to a match stay; a walk through many large objects keeps only a few."""


def _big_spans(text: str, start: int, small: int) -> dict[int, int]:
    """Where each container longer than ``small`` characters starts, and where it ends."""
    big: dict[int, int] = {}
    stack: list[int] = []
    pos = start
    match = _STRUCT.match
    while True:
        found = match(text, pos)
        if found is None:
            break
        pos = found.end()
        if found.group(1) in "[{":
            stack.append(pos - 1)
        else:
            if not stack:
                raise ValueError("a closing bracket with no opening one")
            opened = stack.pop()
            if pos - opened > small:
                big[opened] = pos
            if not stack:
                break
    if stack:
        raise ValueError("an unclosed bracket")
    return big


class JsonDoc:
    """A JSON text (an object or an array) and the way to reach any part of it.

    ``loads`` parses a small container's text (the default: ``json.loads``); the guard
    passes a strict one when it first checks a result (exact numbers, no duplicate key).
    Raises ``ValueError`` for text that is not one JSON value.
    """

    def __init__(self, text: str, *, small: int | None = None, loads: Loads | None = None) -> None:
        self.text = text
        self.small = small = SMALL if small is None else small
        self.loads: Loads = loads or json.loads
        self.start = _WS.match(text).end()  # type: ignore[union-attr]
        self.end = len(text.rstrip(" \t\n\r"))
        if self.start >= self.end:
            raise ValueError("no JSON value")
        self._big = _big_spans(text, self.start, small) if self.end - self.start > small else {}
        if self._big and self._big.get(self.start) != self.end:
            raise ValueError("text after the JSON value")
        self._whole: Any = None
        self._indexes: dict[int, Any] = {}

    @property
    def lazy(self) -> bool:
        """Whether the document is too large to be parsed whole."""
        return bool(self._big)

    def root(self) -> Any:
        """The whole value: parsed once when small, lazy when large."""
        if self._big:
            return self.node(self.start, self.end)
        if self._whole is None:
            self._whole = self.loads(self.text[self.start : self.end])
        return self._whole

    def node(self, start: int, end: int) -> Any:
        """The value whose text is ``text[start:end]``: parsed, or lazy when large (its
        index of members kept while it is among the :data:`KEPT_LAZY` last reached)."""
        stop = self._big.get(start)
        if stop is None:
            return self.loads(self.text[start:end])
        kind = LazyObject if self.text[start] == "{" else LazyArray
        made = kind(self, start, stop, self._indexes.pop(start, None))
        self._indexes[start] = made.offsets  # the last reached last
        if len(self._indexes) > KEPT_LAZY:
            del self._indexes[next(iter(self._indexes))]
        return made

    def is_big(self, start: int) -> bool:
        """Whether the container starting at ``start`` is read lazily."""
        return start in self._big

    def value_end(self, start: int) -> int:
        """Where the value starting at ``start`` ends."""
        stop = self._big.get(start)
        if stop is not None:
            return stop
        return int(_PLAIN.raw_decode(self.text, start)[1])

    def get(self, parts: Sequence[int | str]) -> Any:
        """The value at a path given as its keys and indices."""
        node = self.root()
        for part in parts:
            node = node[part]
        return node

    def walk(self) -> Iterator[tuple[tuple[int | str, ...], Any]]:
        """Every container of the document with its path parts, in document order (a
        container before its members); lazy ones as they are, small ones parsed. Members
        are reached one at a time, so a large array is never held parsed whole."""
        root = self.root()
        yield (), root
        stack: list[tuple[tuple[int | str, ...], Iterator[tuple[int | str, Any]]]] = [
            ((), members(root))
        ]
        while stack:
            parts, pending = stack[-1]
            for key, value in pending:
                if _container(value):
                    here = (*parts, key)
                    yield here, value
                    stack.append((here, members(value)))
                    break
            else:
                stack.pop()


def members(node: Any) -> Iterator[tuple[int | str, Any]]:
    """A container's members as (key or index, value), one at a time."""
    if is_object(node):
        return iter(node.items())
    if is_array(node):
        return enumerate(node)
    return iter(())


def _container(value: Any) -> bool:
    kind = type(value)
    return kind is dict or kind is list or kind is LazyObject or kind is LazyArray


def _skip(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()  # type: ignore[union-attr]


class LazyObject(Mapping[str, Any]):
    """A large JSON object read in place: keys known, values parsed when asked for."""

    def __init__(
        self,
        doc: JsonDoc,
        start: int,
        end: int,
        offsets: dict[str, tuple[int, int]] | None = None,
    ) -> None:
        self._doc = doc
        self.span = (start, end)
        self._members: dict[str, tuple[int, int]] = {} if offsets is None else offsets
        text, pos = doc.text, _skip(doc.text, start + 1)
        if offsets is not None or text[pos] == "}":
            return
        while True:
            if text[pos] != '"':
                raise ValueError(f"a key expected at {pos}")
            key, pos = _scanstring(text, pos + 1)
            pos = _skip(text, pos)
            if text[pos] != ":":
                raise ValueError(f"':' expected at {pos}")
            value = _skip(text, pos + 1)
            stop = doc.value_end(value)
            if key in self._members:
                raise ValueError(f"a duplicate key {key!r}")
            self._members[key] = (value, stop)
            pos = _skip(text, stop)
            if text[pos] == "}":
                break
            if text[pos] != ",":
                raise ValueError(f"',' expected at {pos}")
            pos = _skip(text, pos + 1)

    @property
    def offsets(self) -> dict[str, tuple[int, int]]:
        """Where each member's value is: what a document keeps to make this object again."""
        return self._members

    def __getitem__(self, key: str) -> Any:
        start, end = self._members[key]
        return self._doc.node(start, end)

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, key: object) -> bool:
        return key in self._members

    def spans(self) -> Iterator[tuple[str | None, tuple[int, int]]]:
        """Each member's key and where its value's text starts and ends."""
        return iter(self._members.items())

    def all_objects(self) -> bool:
        """Whether every member is an object, read off where each starts, none parsed."""
        text = self._doc.text
        return all(text[start] == "{" for start, _end in self._members.values())

    def __repr__(self) -> str:
        return f"<JSON object of {len(self)} keys>"


class LazyArray(Sequence[Any]):
    """A large JSON array read in place: items parsed when asked for."""

    def __init__(
        self,
        doc: JsonDoc,
        start: int,
        end: int,
        offsets: tuple[array[int], array[int]] | None = None,
    ) -> None:
        self._doc = doc
        self.span = (start, end)
        self._starts, self._ends = (array("q"), array("q")) if offsets is None else offsets
        text, pos = doc.text, _skip(doc.text, start + 1)
        if offsets is not None or text[pos] == "]":
            return
        while True:
            stop = doc.value_end(pos)
            self._starts.append(pos)
            self._ends.append(stop)
            pos = _skip(text, stop)
            if text[pos] == "]":
                break
            if text[pos] != ",":
                raise ValueError(f"',' expected at {pos}")
            pos = _skip(text, pos + 1)

    @property
    def offsets(self) -> tuple[array[int], array[int]]:
        """Where each item is: what a document keeps to make this array again."""
        return self._starts, self._ends

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._doc.node(self._starts[index], self._ends[index])

    def __iter__(self) -> Iterator[Any]:
        for start, end in zip(self._starts, self._ends, strict=True):
            yield self._doc.node(start, end)

    def __len__(self) -> int:
        return len(self._starts)

    def spans(self) -> Iterator[tuple[str | None, tuple[int, int]]]:
        """Each item (no key) and where its text starts and ends."""
        return ((None, span) for span in zip(self._starts, self._ends, strict=True))

    def __repr__(self) -> str:
        return f"<JSON array of {len(self)} items>"


def is_object(value: Any) -> bool:
    """Whether ``value`` is a JSON object, parsed or lazy (by exact type: these are called
    for every value of a large result, and an ``isinstance`` against an ABC is slow)."""
    kind = type(value)
    return kind is dict or kind is LazyObject


def is_array(value: Any) -> bool:
    kind = type(value)
    return kind is list or kind is LazyArray


# --- the pretty print, line by line ------------------------------------------------------------


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def pretty_lines(value: Any, indent: str = "") -> Iterator[str]:
    """The lines of ``json.dumps(value, indent=2, ensure_ascii=False)``, made one at a time,
    each prefixed by ``indent`` but the first."""
    if not isinstance(value, LazyObject | LazyArray):
        text = json.dumps(value, indent=2, ensure_ascii=False)
        first, *rest = text.split("\n")
        yield first
        for line in rest:
            yield indent + line
        return
    inner = indent + "  "
    yield "{" if isinstance(value, LazyObject) else "["
    members: Iterator[tuple[str, Any]] = (
        (((_dump(k) + ": "), v) for k, v in value.items())
        if isinstance(value, LazyObject)
        else (("", v) for v in value)
    )
    last = len(value) - 1
    for i, (label, member) in enumerate(members):
        lines = pretty_lines(member, inner)
        held = inner + label + next(lines)
        for line in lines:
            yield held
            held = line
        yield held + ("," if i < last else "")
    yield indent + ("}" if isinstance(value, LazyObject) else "]")


def line_count(value: Any) -> int:
    """How many lines :func:`pretty_lines` makes for ``value``, counted without making them
    (the members of a lazy container are parsed one at a time)."""
    if isinstance(value, LazyObject | LazyArray):
        return 2 + sum(line_count(member) for _key, member in members(value))
    total = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict | list) and node:
            total += 2
            stack.extend(node.values() if isinstance(node, dict) else node)
        else:
            total += 1
    return total


class LazyLines(ReadLines):
    """Lines made by a generator, read forwards as a page is cut: ``lines[i]`` runs the
    generator on to ``i`` (or again from the start to go back past what is kept)."""

    KEEP = 50_000

    def __init__(self, make: Callable[[], Iterator[str]], total: int) -> None:
        self._make = make
        self._total = total
        self._source: Iterator[str] = make()
        self._next = 0
        self._kept: dict[int, str] = {}

    def __len__(self) -> int:
        return self._total

    def line(self, index: int) -> str:
        if index in self._kept:
            return self._kept[index]
        if index < self._next:
            self._source, self._next, self._kept = self._make(), 0, {}
        for line in self._source:
            self._kept[self._next] = line
            self._next += 1
            if len(self._kept) > self.KEEP:
                self._kept.pop(next(iter(self._kept)))
            if self._next > index:
                return line
        raise IndexError(index)
