"""A tally of the files a question names by the shape of their values: "which file has the
most results?" over SARIF results, whose file is
``locations[*].physicalLocation.artifactLocation.uri``.

The noun after "which" or "what" is ``file`` or ``path`` (either number), and no field of
the records is named so; the question says ``most``, ``least``, ``fewest``, ``distinct``…
and names no number field to rank the records by ("which file has the most missed
statements?" ranks them by ``Miss``).
The field it names is then the one whose values are all file paths (text with no space
and no scheme ending in a dot and an extension of one to five letters, ``app/db.py``; for
``path``, one holding a ``/`` is one too): a field of the records, or a key of the member
objects of an array field of theirs, each distinct value counted once per record. No such
field, or several, make no tally.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from taskloom.guard.groups import Field, Group
from taskloom.guard.jsondoc import is_array, is_object
from taskloom.guard.question import Tok
from taskloom.guard.rank import STOPWORDS, parts_of
from taskloom.guard.stems import stem
from taskloom.guard.tally import Tally

_NOUNS = frozenset({stem("file"), stem("path")})
_ASKING = frozenset({"which", "what"})
_FILE = re.compile(r"(?![a-z][\w+.-]*://)[^\s:]+\.[A-Za-z]{1,5}")
_PATH = re.compile(r"(?![a-z][\w+.-]*://)[^\s:]+(?:/[^\s/]+|\.[A-Za-z]{1,5})")


def _asked(tokens: list[Tok]) -> str:
    for i, tok in enumerate(tokens):
        if tok.text.lower() in _ASKING:
            rest = [t for t in tokens[i + 1 :] if t.text.lower() not in STOPWORDS]
            return stem(rest[0].text) if rest else ""
    return ""


def _paths(stats: Field, shape: re.Pattern[str]) -> bool:
    values = list(stats.values)
    return bool(values) and all(
        kind == "string" and shape.fullmatch(str(value)) for kind, value in values
    )


def file_field(group: Group, tokens: list[Tok]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The field of ``group``'s records the question names as its files (see the module
    docs): ``(name, ())`` for a field of the records, ``(array, key)`` for a key of the
    members of an array field; else ``None``."""
    asked = _asked(tokens)
    if asked not in _NOUNS:
        return None
    if asked in {stem(p) for name in group.fields for p in parts_of(name[-1])}:
        return None  # a field is named so: the question's own words read it
    shape = _FILE if asked == stem("file") else _PATH
    found: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for name, stats in group.fields.items():
        if stats.kinds - {"null"} == {"string"} and _paths(stats, shape):
            found.append((name, ()))
        for key, member in stats.members.items():
            if key and "array" in stats.kinds and _paths(member, shape):
                found.append((name, key))
    return found[0] if len(found) == 1 else None


def _get(value: Any, keys: Iterable[str]) -> Any:
    for key in keys:
        value = value.get(key) if is_object(value) else None
    return value


def tally_files(
    matches: Iterable[tuple[str, Any]], name: tuple[str, ...], key: tuple[str, ...]
) -> Tally:
    """The tally of the file field over ``matches`` ((path, record) pairs)."""
    label = ".".join(name) + (f"[*].{'.'.join(key)}" if key else "")
    out = Tally(key or name, label=label)
    for _path, record in matches:
        out.records += 1
        value = _get(record, name)
        if key:
            members = value if is_array(value) else []
            held = {v for m in members if isinstance(v := _get(m, key), str)}
        else:
            held = {value} if isinstance(value, str) else set()
        if not held:
            out.missing += 1
        for one in held:
            out.counts[one] += 1
    return out
