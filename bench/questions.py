"""Questions generated from a payload's own data, as a model would ask them, with gold answers.

The generator knows nothing of the guard: it reads the payload with ``json`` and plain
walks, finds groups of records (the items of an array; the members of an object whose
members are all objects), and asks, with a seeded random choice:

- ``lookup``: the value of a field of the record with a given identifier
  ("What is the status of the license with licenseId MIT?"; for a record keyed by name,
  "What is the type of the shape Bucket?");
- ``keys``: the keys of a named object ("List the keys of the members of the shape Bucket.");
- ``count``: how many records of a group have a field equal to a value
  ("How many records have type C?"), the gold being the exact count;
- ``holder``: which record holds a unique value ("Which currency has numeric 978?"),
  the gold being the record's identifier;
- ``nested``: a field of an object inside a record
  ("What is the login of the user of the item with id 5?");
- ``text``: for a text payload of ``Key: value`` blocks, a field of the block whose first
  field has a given value ("What is the Serial of the entry with Label GlobalSign?").
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

IDENT_NAMES = ("id", "name", "key", "number", "login", "code", "alpha_3", "slug", "title")
KINDS = ("lookup", "keys", "count", "holder", "nested", "text")


@dataclass(frozen=True)
class Question:
    kind: str
    text: str
    gold: str | int | tuple[str, ...]
    """A value's text, an exact count, or every key that must be seen."""


@dataclass
class Group:
    path: tuple[str | None, ...]
    records: list[tuple[str | int, dict[str, Any]]] = field(default_factory=list)
    """(the key or index the record sits at, the record)"""
    keyed: bool = False
    """Whether the records are the members of an object, keyed by name."""

    @property
    def noun(self) -> str:
        names = [p for p in self.path if p and re.fullmatch(r"[A-Za-z][A-Za-z_]*", p)]
        word = names[-1] if names else "item"
        if word.endswith("ies"):
            return word[:-3] + "y"
        return word[:-1] if word.endswith("s") and len(word) > 3 else word

    @property
    def plural(self) -> str:
        names = [p for p in self.path if p and re.fullmatch(r"[A-Za-z][A-Za-z_]*", p)]
        return names[-1] if names and names[-1].endswith("s") else "records"


def _keyed(node: dict[str, Any]) -> bool:
    values = list(node.values())
    return len(values) >= 3 and all(isinstance(v, dict) for v in values)


def records(value: Any) -> list[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """Every object of ``value`` with its concrete path."""
    out = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            out.append((path, node))
            stack.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in enumerate(node))
    return out


def groups(value: Any) -> list[Group]:
    found: dict[tuple[str | None, ...], Group] = {}
    stack: list[tuple[tuple[str | None, ...], str | int, Any, bool]] = [((), "$", value, False)]
    while stack:
        path, at, node, keyed = stack.pop()
        if isinstance(node, dict):
            group = found.setdefault(path, Group(path, keyed=keyed))
            group.records.append((at, node))
            wild = _keyed(node)
            for key, child in node.items():
                if isinstance(child, dict | list):
                    stack.append(((*path, None if wild else key), key, child, wild))
        elif isinstance(node, list):
            for i, child in enumerate(node):
                if isinstance(child, dict | list):
                    stack.append(((*path, None), i, child, False))
    return [g for g in found.values() if len(g.records) >= 2 and None in g.path]


def _under(path: tuple[str | int, ...], pattern: tuple[str | None, ...]) -> bool:
    """Whether a record's path is one the group's pattern (``None``: any key) reaches, as
    the JSONPath with a wildcard for each ``None`` would."""
    return len(path) == len(pattern) and all(
        p is None or p == k for k, p in zip(path, pattern, strict=True)
    )


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _say(value: Any) -> str:
    text = str(value)
    return text if re.fullmatch(r"[\w.:/@+-]+", text) else json.dumps(text, ensure_ascii=False)


def _good_value(value: Any) -> bool:
    if isinstance(value, str):
        return 2 <= len(value) <= 120 and "\n" not in value
    return _scalar(value)


def _identity(group: Group) -> str | None:
    """A field whose values are scalars, present in every record and unique."""
    if group.keyed:
        return None
    for name in (*IDENT_NAMES, *sorted({k for _a, r in group.records for k in r})):
        values = [r.get(name) for _a, r in group.records]
        if all(_scalar(v) for v in values) and len({str(v) for v in values}) == len(values):
            return name
    return None


def _who(group: Group, at: str | int, record: dict[str, Any], ident: str | None) -> str | None:
    if group.keyed:
        return f"the {group.noun} {_say(at)}"
    if ident is None:
        return None
    return f"the {group.noun} with {ident} {_say(record[ident])}"


def _gold_id(group: Group, at: str | int, record: dict[str, Any], ident: str | None) -> str:
    return str(at) if group.keyed or ident is None else str(record[ident])


def json_questions(text: str, per_kind: int, rng: random.Random) -> list[Question]:
    value = json.loads(text)
    pool: dict[str, list[Question]] = {k: [] for k in KINDS}
    found = groups(value)
    pairs = Counter(
        (k, v)
        for group in found
        for (k, v) in {
            (k, v) for _a, r in group.records for k, v in r.items() if isinstance(v, str)
        }
    )
    everything = records(value)
    for group in found:
        ident = _identity(group)
        for at, record in group.records:
            who = _who(group, at, record, ident)
            if who is None:
                continue
            for key, inner in record.items():
                if key == ident:
                    continue
                if _good_value(inner):
                    pool["lookup"].append(
                        Question("lookup", f"What is the {key} of {who}?", str(inner))
                    )
                elif isinstance(inner, dict) and 2 <= len(inner) <= 40:
                    keys = tuple(inner)
                    pool["keys"].append(
                        Question("keys", f"List the keys of the {key} of {who}.", keys)
                    )
                    for sub, leaf in inner.items():
                        if _good_value(leaf):
                            q = f"What is the {sub} of the {key} of {who}?"
                            pool["nested"].append(Question("nested", q, str(leaf)))
        reached = [r for path, r in everything if _under(path, group.path)]
        _counts(group, reached, pool["count"], pairs)
        _holders(group, ident, pool["holder"])
    return _sample(pool, per_kind, rng)


def _counts(
    group: Group,
    reached: list[dict[str, Any]],
    out: list[Question],
    pairs: Counter[tuple[str, str]],
) -> None:
    """Count questions whose field and value only this group holds: "how many records
    have shape X" has no single answer when records of several kinds have it. The gold
    counts every record the group's path reaches (``reached``)."""
    if len(group.records) < 8:
        return
    fields = Counter(k for _a, r in group.records for k, v in r.items() if isinstance(v, str))
    for name in fields:
        values = Counter(r[name] for r in reached if isinstance(r.get(name), str))
        if 2 <= len(values) <= 20:
            for value, n in values.items():
                if 1 <= len(value) <= 40 and pairs[(name, value)] == 1:
                    q = f"How many {group.plural} have {name} {_say(value)}?"
                    out.append(Question("count", q, n))


def _holders(group: Group, ident: str | None, out: list[Question]) -> None:
    fields = Counter(k for _a, r in group.records for k in r)
    for name in fields:
        if name == ident:
            continue
        values = Counter(str(r[name]) for _a, r in group.records if _good_value(r.get(name)))
        for at, record in group.records:
            inner = record.get(name)
            unique = isinstance(inner, str) and values[inner] == 1 and 3 <= len(inner) <= 80
            if unique and (group.keyed or ident is not None):
                q = f"Which {group.noun} has {name} {_say(inner)}?"
                out.append(Question("holder", q, _gold_id(group, at, record, ident)))


_FIELD = re.compile(r"^(?:#\s*)?([A-Za-z][\w ]{0,40}?):\s+(.+?)\s*$")


def text_questions(text: str, per_kind: int, rng: random.Random) -> list[Question]:
    """Blocks of ``Key: value`` lines (split at blank lines or at a repeated first key)."""
    blocks: list[list[tuple[str, str]]] = [[]]
    for line in text.split("\n"):
        found = _FIELD.match(line)
        if not found:
            if not line.strip() and blocks[-1]:
                blocks.append([])
            continue
        key, value = found.group(1), found.group(2).strip('"')
        if blocks[-1] and key == blocks[-1][0][0]:
            blocks.append([])
        blocks[-1].append((key, value))
    blocks = [b for b in blocks if len(b) >= 2]
    firsts = Counter(b[0] for b in blocks)
    pool: dict[str, list[Question]] = {k: [] for k in KINDS}
    for block in blocks:
        if firsts[block[0]] != 1:
            continue
        key, ident = block[0]
        for name, value in block[1:]:
            if 2 <= len(value) <= 120:
                q = f"What is the {name} of the entry with {key} {_say(ident)}?"
                pool["text"].append(Question("text", q, value))
    return _sample(pool, per_kind, rng)


def _sample(pool: dict[str, list[Question]], per_kind: int, rng: random.Random) -> list[Question]:
    out: list[Question] = []
    for kind in KINDS:
        dupes = Counter(q.text for q in pool[kind])
        unique = [q for q in pool[kind] if dupes[q.text] == 1]  # an ambiguous one has no gold
        rng.shuffle(unique)
        out.extend(unique[:per_kind])
    return out


def questions(text: str, per_kind: int, rng: random.Random) -> list[Question]:
    stripped = text.lstrip()
    if stripped[:1] in "{[":
        try:
            return json_questions(text, per_kind, rng)
        except ValueError:
            pass
    return text_questions(text, per_kind, rng)
