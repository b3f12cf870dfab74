"""Free, deterministic retrieval from a stashed result: exact slices and local extraction.

``read_slice`` returns exactly what was asked for (a JSON path, a line range or a page) under a
token cap, and says what remains. ``extract_local`` answers a query with verbatim fragments,
each labelled with its JSON path or line range, trying in order:

1. a JSONPath expression (``$.items[?(@.state=='open')].number``, ``$..login``);
2. a ``/regex/`` over lines;
3. ranking of whole records (every JSON object; for text, blocks of lines) with BM25 over
   field names and values, plus a bonus for exact identifier and field-name matches.

Ranking runs in Python rather than SQLite FTS5 so that SQLite and PostgreSQL stores answer
alike, and so a record is scored with its field names, which FTS over lines loses.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from taskloom.domain.errors import InvalidInput
from taskloom.domain.stash import child_path
from taskloom.guard.compact import compact, dumps

IDENTITY_KEYS = (
    "id",
    "number",
    "name",
    "full_name",
    "login",
    "title",
    "key",
    "sha",
    "ref",
    "email",
    "slug",
    "state",
    "status",
    "action",
)
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "how",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whose",
        "why",
        "with",
        "does",
        "did",
        "do",
        "many",
        "much",
        "value",
        "field",
        "me",
        "show",
        "give",
        "find",
        "list",
        "tell",
        "there",
        "their",
    ]
)
_WORD = re.compile(r"[A-Za-z0-9]+(?:[._@/-][A-Za-z0-9]+)*")
_LINES_ARG = re.compile(r"^\s*(\d+)\s*(?:[-:]\s*(\d+)?)?\s*$")
MAX_FRAGMENTS = 3
MAX_FIELDS = 14
MAX_SCALAR_CHARS = 300


def view_text(content: str, is_json: bool) -> str:
    """The text that line numbers and pages refer to: pretty JSON (2-space indent) or the text."""
    if not is_json:
        return content
    return json.dumps(json.loads(content), indent=2, ensure_ascii=False)


# --- exact reads --------------------------------------------------------------------------------


def _cut_lines(lines: list[str], start: int, cap: int, count: Callable[[str], int]) -> int:
    """How many lines from ``start`` fit under ``cap`` tokens (at least one)."""
    used, end = 0, start
    while end < len(lines):
        cost = count(lines[end]) + 1
        if end > start and used + cost > cap:
            break
        used += cost
        end += 1
    return end


def read_slice(
    content: str,
    is_json: bool,
    *,
    path: str | None,
    lines: str | None,
    page: int | None,
    cap: int,
    count: Callable[[str], int],
) -> str:
    """An exact slice with a header naming it and what remains."""
    chosen = [name for name, v in (("path", path), ("lines", lines), ("page", page)) if v]
    if len(chosen) > 1:
        raise InvalidInput(f"give one of path, lines or page (got {', '.join(chosen)})")
    if path:
        if not is_json:
            raise InvalidInput("`path` works on JSON results; this one is text: use `lines`")
        matches = json_path(json.loads(content), path)
        if not matches:
            raise InvalidInput(f"JSONPath {path!r} matches nothing in this result")
        body = "\n".join(f"{p}: {json.dumps(v, indent=2, ensure_ascii=False)}" for p, v in matches)
        text_lines = body.split("\n")
        end = _cut_lines(text_lines, 0, cap, count)
        head = f"[{path} · {len(matches)} match(es)]"
        if end < len(text_lines):
            head += (
                f" — first {end} of {len(text_lines)} lines shown (token cap {cap}); "
                "narrow the path to see the rest"
            )
        return head + "\n" + "\n".join(text_lines[:end])
    all_lines = view_text(content, is_json).split("\n")
    total = len(all_lines)
    if page:
        start = 0
        for _ in range(page - 1):
            start = _cut_lines(all_lines, start, cap, count)
            if start >= total:
                raise InvalidInput(f"page {page} is past the end ({total} lines)")
        end = _cut_lines(all_lines, start, cap, count)
    else:
        first, last = _parse_lines(lines or "1", total)
        start = first - 1
        end = min(_cut_lines(all_lines, start, cap, count), last)
    note = f"lines {start + 1}-{end} of {total}"
    if is_json:
        note += " (of the JSON pretty-printed with 2-space indent)"
    if end < total:
        nxt = f"page={page + 1}" if page else f'lines="{end + 1}-{min(total, end + end - start)}"'
        note += f"; {total - end} more lines: read_result(..., {nxt})"
    return f"[{note}]\n" + "\n".join(all_lines[start:end])


def _parse_lines(spec: str, total: int) -> tuple[int, int]:
    match = _LINES_ARG.match(spec)
    if not match:
        raise InvalidInput(f"`lines` must look like '120-180' or '120-' (got {spec!r})")
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else total
    if first < 1 or last < first:
        raise InvalidInput(f"`lines` range {spec!r} is empty or starts before line 1")
    if first > total:
        raise InvalidInput(f"line {first} is past the end ({total} lines)")
    return first, min(last, total)


# --- JSONPath (the useful subset) ---------------------------------------------------------------

_PATH_TOKEN = re.compile(
    r"\.\.(?P<deep>[A-Za-z_][\w-]*|\*)"
    r"|\.(?P<key>[A-Za-z_][\w-]*|\*)"
    r"|\[(?P<index>-?\d+)\]"
    r"|\[(?P<star>\*)\]"
    r"|\[\s*'(?P<quoted>(?:[^'\\]|\\.)*)'\s*\]"
    r"|\[\?\(@\.(?P<fkey>[\w-]+)\s*(?P<op>==|!=|>=|<=|>|<)\s*(?P<fval>[^)]+)\)\]"
)


def _descend(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _descend(v, child_path(path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _descend(v, child_path(path, i))


def _children(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield child_path(path, k), v
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield child_path(path, i), v


def _compare(left: Any, op: str, raw: str) -> bool:
    raw = raw.strip()
    right: Any = raw[1:-1] if raw[:1] in "'\"" and raw[-1:] == raw[:1] else json.loads(raw)
    try:
        return bool(
            {
                "==": left == right,
                "!=": left != right,
                ">": left > right,
                "<": left < right,
                ">=": left >= right,
                "<=": left <= right,
            }[op]
        )
    except TypeError:
        return False


def json_path(value: Any, expr: str) -> list[tuple[str, Any]]:
    """Evaluate a JSONPath subset: ``.key``, ``['key']``, ``[n]``, ``[*]``, ``.*``, ``..key``
    and filters ``[?(@.key op value)]``. Returns ``(concrete path, value)`` pairs."""
    expr = expr.strip()
    if not expr.startswith("$"):
        raise InvalidInput(f"a JSONPath starts with '$' (got {expr!r})")
    current: list[tuple[str, Any]] = [("$", value)]
    pos = 1
    while pos < len(expr):
        m = _PATH_TOKEN.match(expr, pos)
        if m is None:
            raise InvalidInput(f"cannot parse JSONPath {expr!r} at {expr[pos:]!r}")
        pos = m.end()
        nxt: list[tuple[str, Any]] = []
        for path, node in current:
            if m.group("deep") is not None:
                key = m.group("deep")
                for p, v in _descend(node, path):
                    if key == "*":
                        nxt.extend(_children(v, p))
                    elif isinstance(v, dict) and key in v:
                        nxt.append((child_path(p, key), v[key]))
            elif m.group("key") is not None or m.group("quoted") is not None:
                key = m.group("key") if m.group("key") is not None else m.group("quoted")
                if key == "*" and m.group("key") is not None:
                    nxt.extend(_children(node, path))
                elif isinstance(node, dict) and key in node:
                    nxt.append((child_path(path, key), node[key]))
            elif m.group("index") is not None:
                i = int(m.group("index"))
                if isinstance(node, list) and -len(node) <= i < len(node):
                    nxt.append((child_path(path, i % len(node)), node[i]))
            elif m.group("star") is not None:
                nxt.extend(_children(node, path))
            else:
                fkey, op, fval = m.group("fkey"), m.group("op"), m.group("fval")
                nxt.extend(
                    (p, v)
                    for p, v in _children(node, path)
                    if isinstance(v, dict) and fkey in v and _compare(v[fkey], op, fval)
                )
        current = nxt
    return current


# --- local extraction ---------------------------------------------------------------------------


def terms(text: str) -> list[str]:
    """Lower-cased words, numbers and dotted/slashed identifiers, plus their parts."""
    out: list[str] = []
    for match in _WORD.finditer(text.lower()):
        word = match.group(0)
        out.append(word)
        parts = re.split(r"[._@/-]", word)
        if len(parts) > 1:
            out.extend(p for p in parts if p)
    return out


@dataclass(slots=True)
class Record:
    where: str
    text: str
    tokens: Counter[str]
    exact: frozenset[str]
    keys: frozenset[str]
    node: Any = None
    ident: frozenset[str] = frozenset()
    name: str = ""


@dataclass(slots=True)
class Extraction:
    method: str
    fragments: list[tuple[str, str]] = field(default_factory=list)
    total_matches: int = 0
    coverage: float = 0.0
    notes: list[str] = field(default_factory=list)

    def useful(self) -> bool:
        return bool(self.fragments) and self.coverage >= 0.5


def _scalar_text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= MAX_SCALAR_CHARS else text[:MAX_SCALAR_CHARS] + "…"


def _json_records(value: Any) -> list[Record]:
    records = []
    for path, node in _descend(value, "$"):
        if not isinstance(node, dict):
            continue
        scalars = {k: v for k, v in node.items() if not isinstance(v, dict | list)}
        nested = {k: v for k, v in node.items() if isinstance(v, dict)}
        words: list[str] = terms(" ".join(re.findall(r"[A-Za-z0-9]+", path.split("[")[-1])))
        exact = set()
        for k, v in scalars.items():
            words.extend(terms(k.replace("_", " ")))
            if v is not None:
                words.extend(terms(str(v)))
                exact.add(str(v).lower())
        for k, v in nested.items():
            words.extend(terms(k.replace("_", " ")))
            for ik in IDENTITY_KEYS:
                if ik in v and not isinstance(v[ik], dict | list) and v[ik] is not None:
                    words.extend(terms(str(v[ik])))
        keys = frozenset(k.lower() for k in node) | frozenset(
            part for k in node for part in k.lower().split("_")
        )
        ident = frozenset(str(scalars[k]).lower() for k in IDENTITY_KEYS if k in scalars)
        name = re.sub(r"\[.*?\]", "", path.rsplit(".", 1)[-1]).lower()
        records.append(Record(path, "", Counter(words), frozenset(exact), keys, node, ident, name))
    return records


def _text_records(text: str, block: int = 30) -> list[Record]:
    lines = text.split("\n")
    records, start = [], 0
    while start < len(lines):
        end = start
        while end < len(lines) and end - start < block and (end == start or lines[end].strip()):
            end += 1
        chunk = "\n".join(lines[start:end])
        if chunk.strip():
            words = terms(chunk)
            exact = frozenset(w for w in words)
            records.append(
                Record(f"lines {start + 1}-{end}", chunk, Counter(words), exact, frozenset())
            )
        start = end if end > start else start + 1
    return records


def _render_record(node: dict[str, Any], wanted: set[str]) -> str:
    """A record's identity fields, the fields the query names, nested identities inline."""
    shown: dict[str, Any] = {}
    hidden = 0
    for key, value in compact(node).value.items():
        key_terms = set(terms(key.replace("_", " "))) | {key.lower()}
        relevant = key in IDENTITY_KEYS or key_terms & wanted
        if isinstance(value, dict):
            ident = {k: value[k] for k in IDENTITY_KEYS if k in value}
            if relevant or ident:
                shown[key] = ident or "{…}"
            else:
                hidden += 1
        elif isinstance(value, list):
            shown[key] = value if relevant and len(dumps(value)) < 400 else f"[{len(value)} items]"
        elif relevant or (isinstance(value, str | int | float) and set(terms(str(value))) & wanted):
            shown[key] = value if not isinstance(value, str) else _scalar_text(value)
        else:
            hidden += 1
        if len(shown) >= MAX_FIELDS:
            hidden += len(node) - len(shown) - hidden
            break
    text = dumps(shown)
    return text + (f"  (+{hidden} more fields)" if hidden > 0 else "")


def _bm25(records: list[Record], query: list[str]) -> list[tuple[float, float, Record]]:
    if not records or not query:
        return []
    n = len(records)
    avg = sum(sum(r.tokens.values()) for r in records) / n or 1.0
    df: Counter[str] = Counter()
    for r in records:
        df.update(set(r.tokens) & set(query))
    distinct = set(query)
    scored = []
    for r in records:
        length = sum(r.tokens.values()) or 1
        score, hit = 0.0, 0
        for term in distinct:
            tf = r.tokens.get(term, 0)
            bonus = (
                (8.0 if term in r.ident else 2.0 if term in r.exact else 0.0)
                + (1.0 if term in r.keys else 0.0)
                + (3.0 if term == r.name else 0.0)
            )
            if tf or bonus:
                hit += 1
            if tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))
            score += bonus
        if hit:
            scored.append((score, hit / len(distinct), r))
    scored.sort(key=lambda s: (-s[0], s[2].where))
    return scored


def extract_local(content: str, is_json: bool, query: str) -> Extraction:
    """Verbatim fragments for ``query``; ``coverage`` is the share of query terms matched."""
    query = query.strip()
    parsed = json.loads(content) if is_json else None
    if query.startswith("$") and is_json:
        matches = json_path(parsed, query)
        out = Extraction("jsonpath", total_matches=len(matches), coverage=1.0 if matches else 0)
        out.fragments = [(p, dumps(v)) for p, v in matches]
        return out
    regex = re.fullmatch(r"/(.+)/([imsx]*)", query, re.S)
    if regex:
        flags = sum(getattr(re, f.upper()) for f in regex.group(2))
        try:
            pattern = re.compile(regex.group(1), flags)
        except re.error as exc:
            raise InvalidInput(f"bad regex {regex.group(1)!r}: {exc}") from None
        lines = view_text(content, is_json).split("\n")
        hits = [(i + 1, line) for i, line in enumerate(lines) if pattern.search(line)]
        out = Extraction("regex", total_matches=len(hits), coverage=1.0 if hits else 0.0)
        out.fragments = [(f"line {n}", line.strip()) for n, line in hits]
        return out
    wanted = [t for t in terms(query) if t not in STOPWORDS]
    records = _json_records(parsed) if is_json else _text_records(content)
    ranked = _bm25(records, wanted)
    out = Extraction("ranking", total_matches=len(ranked))
    if not ranked:
        return out
    best = ranked[0][0]
    out.coverage = ranked[0][1]
    want = set(wanted)
    seen: set[str] = set()
    for score, _cov, rec in ranked:
        if score < best * 0.5 or len(out.fragments) >= MAX_FRAGMENTS:
            break
        body = _render_record(rec.node, want) if is_json else rec.text
        if body not in seen:
            seen.add(body)
            out.fragments.append((rec.where, body))
    return out
