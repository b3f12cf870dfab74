"""A YAML document's mapping of named mappings read as records: a workflow's ``jobs:``, a
compose file's ``services:``, each child mapping one record under its key.

The text is plain block YAML (:func:`~taskloom.guard.yamllist.yaml_mapping`). Of its
top-level keys, the one whose value maps the most names (at least :data:`MIN_RECORDS`) to
mappings, and only mappings, holds the records; a tie between two such keys makes none.
Each record is its mapping with its name first, under the singular of the key (``job`` for
``jobs``, ``service`` for ``services``), or under ``key`` when the key is no plural or a
record has a field of that name. A record's lines run from its name's line to the line
before the next name at its indent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from taskloom.guard.yamllist import yaml_mapping

MIN_RECORDS = 3
"""The fewest named mappings that make records."""


def keyed_records(
    lines: list[str], cell: Callable[[str], Any]
) -> tuple[str, list[dict[str, Any]], list[tuple[int, int]]] | None:
    """The top-level key the records sit under, the records and each one's first and last
    line (1-based), or ``None``."""
    doc = yaml_mapping(lines, cell)
    if doc is None:
        return None
    sizes = sorted(((len(v), k) for k, v in doc.items() if _named_mappings(v)), reverse=True)
    if not sizes or (len(sizes) > 1 and sizes[0][0] == sizes[1][0]):
        return None
    parent = sizes[0][1]
    children: dict[str, dict[str, Any]] = doc[parent]
    field = parent[:-1] if len(parent) > 3 and parent.endswith("s") else "key"
    if any(field in child for child in children.values()):
        field = "key"
    if any(field in child for child in children.values()):
        return None
    spans = _spans(lines, parent)
    if spans is None or len(spans) != len(children):
        return None
    records = [{field: name, **child} for name, child in children.items()]
    return parent, records, spans


def _named_mappings(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and len(value) >= MIN_RECORDS
        and all(isinstance(v, dict) for v in value.values())
    )


def _spans(lines: list[str], parent: str) -> list[tuple[int, int]] | None:
    """The first and last line of each child of the top-level ``parent:`` block."""
    start = next((i for i, line in enumerate(lines) if line.rstrip() == f"{parent}:"), None)
    if start is None:
        return None
    indent = -1
    firsts: list[int] = []
    last = start
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        depth = len(line) - len(line.lstrip(" "))
        if depth == 0:
            break
        if indent < 0:
            indent = depth
        if depth == indent:
            firsts.append(i)
        last = i
    ends = [*(f - 1 for f in firsts[1:]), last]
    out = []
    for first, end in zip(firsts, ends, strict=True):
        while end > first and (not lines[end].strip() or lines[end].lstrip().startswith("#")):
            end -= 1
        out.append((first + 1, end + 1))
    return out
