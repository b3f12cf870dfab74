"""An XML document read as records: the element name that repeats most (``testcase``,
``item``, ``row``) names the records, each one's attributes and leaf children its fields.

A leaf child (no child elements of its own) is a field named by its tag holding its text,
or ``true`` when it has none (``<skipped message="…"/>``: a flag a count can select), and
each of its attributes is a field ``tag_attribute`` (``skipped_message``). A child that
repeats is a list of its texts; a child with children of its own is an object read the
same way, one level deep. An attribute or text that is a plain decimal number is a number.

The document is read with no DTD: a ``<!DOCTYPE`` or ``<!ENTITY`` declaration makes it no
such document (``None``), so no entity is ever expanded or fetched; neither is a text over
:data:`MAX_CHARS`, or one that is not well-formed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

MAX_CHARS = 8_000_000
"""A document longer than this is not parsed for records (the work is bounded)."""
MIN_RECORDS = 2


@dataclass(slots=True)
class _Node:
    tag: str
    attrs: dict[str, str]
    first: int
    last: int = 0
    children: list[_Node] = field(default_factory=list)
    text: list[str] = field(default_factory=list)


def xml_records(
    text: str, cell: Callable[[str], Any]
) -> tuple[str, list[dict[str, Any]], list[tuple[int, int]]] | None:
    """The records' tag, each record and its first and last line (1-based), or ``None``."""
    if len(text) > MAX_CHARS or not text.lstrip().startswith("<"):
        return None
    head = text[:4096]
    if "<!DOCTYPE" in head.upper() or "<!ENTITY" in text:
        return None
    nodes = _parse(text)
    if nodes is None:
        return None
    counts = Counter(n.tag for n in nodes if n.attrs or n.children)
    if not counts:
        return None
    tag, total = counts.most_common(1)[0]
    if total < MIN_RECORDS:
        return None
    chosen = [n for n in nodes if n.tag == tag]
    return tag, [_record(n, cell, 1) for n in chosen], [(n.first, n.last) for n in chosen]


def _parse(text: str) -> list[_Node] | None:
    parser = expat.ParserCreate()
    stack: list[_Node] = []
    nodes: list[_Node] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        node = _Node(tag, attrs, parser.CurrentLineNumber)
        if stack:
            stack[-1].children.append(node)
        stack.append(node)
        nodes.append(node)

    def end(_tag: str) -> None:
        stack.pop().last = parser.CurrentLineNumber

    def data(chunk: str) -> None:
        if stack:
            stack[-1].text.append(chunk)

    def refused(*_args: object) -> None:
        raise expat.ExpatError("declarations are not read")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    parser.EntityDeclHandler = refused
    parser.StartDoctypeDeclHandler = refused
    try:
        parser.Parse(text, True)
    except expat.ExpatError:
        return None
    return nodes


def _record(node: _Node, cell: Callable[[str], Any], depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {k: cell(v) for k, v in node.attrs.items()}
    repeated = {t for t, n in Counter(c.tag for c in node.children).items() if n > 1}
    for child in node.children:
        if child.children:
            inner = _record(child, cell, depth - 1) if depth > 0 else "…"
            _put(out, child.tag, inner, child.tag in repeated)
            continue
        text = "".join(child.text).strip()
        _put(out, child.tag, cell(text) if text else True, child.tag in repeated)
        for key, value in child.attrs.items():
            _put(out, f"{child.tag}_{key}", cell(value), child.tag in repeated)
    return out


def _put(out: dict[str, Any], key: str, value: Any, many: bool) -> None:
    if not many:
        out.setdefault(key, value)
    else:
        out.setdefault(key, []).append(value)
