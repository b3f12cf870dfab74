"""JSON rows written as lists of name/value pairs read as ordinary records.

Some query APIs return each row as ``[{"field": "status", "value": "500"}, …]``. A row is
such a list when every member is an object of exactly two keys, a name key (``field``,
``name`` or ``key``, in any case) holding a string and ``value``, and no name repeats in it.
An array of at least two rows, every one of them such a list, is read as an array of
objects (``{"status": "500", …}``), so a question counts, filters and ranks the rows as it
does any records. A lone list of pairs (a resource's tags) is left as it is: it is one
record's members, not rows.
"""

from __future__ import annotations

import json
from typing import Any

_NAMES = frozenset({"field", "name", "key"})
_PROBE_CHARS = 4096
"""How much of a document's start is looked at for pair keys before it is parsed."""


def _name_key(member: Any) -> str | None:
    if not isinstance(member, dict) or len(member) != 2:
        return None
    keys = {k.lower(): k for k in member}
    if "value" not in keys:
        return None
    name = next((keys[k] for k in keys if k in _NAMES), None)
    return name if name is not None and isinstance(member[name], str) else None


def _row(value: Any) -> dict[str, Any] | None:
    """``value`` as a record when it is a list of name/value pairs, else ``None``."""
    if not isinstance(value, list) or not value:
        return None
    out: dict[str, Any] = {}
    for member in value:
        name = _name_key(member)
        if name is None or member[name] in out:
            return None
        key = next(k for k in member if k != name)
        out[member[name]] = member[key]
    return out


def _unpaired(value: Any) -> tuple[Any, bool]:
    if isinstance(value, dict):
        changed = False
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out[key], moved = _unpaired(inner)
            changed = changed or moved
        return out, changed
    if isinstance(value, list):
        if len(value) >= 2:
            rows = [_row(item) for item in value]
            if all(r is not None for r in rows):
                return rows, True
        pairs = [_unpaired(item) for item in value]
        return [p[0] for p in pairs], any(p[1] for p in pairs)
    return value, False


def paired_rows(content: str) -> str | None:
    """``content`` with its arrays of name/value-pair rows as arrays of records, as JSON;
    ``None`` when it holds no such array (or is no JSON)."""
    head = content[:_PROBE_CHARS].lower()
    if '"value"' not in head or not any(f'"{n}"' in head for n in _NAMES):
        return None
    try:
        doc = json.loads(content)
    except (ValueError, RecursionError):
        return None
    read, changed = _unpaired(doc)
    return json.dumps(read, ensure_ascii=False) if changed else None
