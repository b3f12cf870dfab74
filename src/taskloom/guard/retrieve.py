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
from taskloom.guard.search import (
    ECHO_CHARS,
    LONG_LINE,
    MAX_HITS,
    echo,
    line_pieces,
    regex_flags,
    regex_fragments,
    regex_hits,
    window,
    window_label,
)

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
_LINES_ARG = re.compile(r"^\s*(\d{1,18})\s*(?:[-:]\s*(\d{1,18})?)?\s*$")
"""Line numbers of at most 18 digits: a longer one is past any result, and past Python's
cap on converting digits (a 4,400-digit one would be an internal error)."""
MAX_FRAGMENTS = 3
MAX_FIELDS = 14
MAX_SCALAR_CHARS = 300
HEADER_TOKENS = 100
"""Tokens kept back from a slice's body for its header, so the whole reply fits the cap."""
MIN_READ_TOKENS = 2 * HEADER_TOKENS
"""The smallest read cap: below it the header would crowd out the slice it describes."""
PRETTY_NOTE = " (of the JSON pretty-printed with 2-space indent)"
MAX_QUERY_CHARS = 2_000
"""The longest query or path accepted; a real one is a few dozen characters."""


def view_text(content: str, is_json: bool) -> str:
    """The text that line numbers and pages refer to: pretty JSON (2-space indent) or the text."""
    if not is_json:
        return content
    return json.dumps(json.loads(content), indent=2, ensure_ascii=False)


def split_lines(text: str) -> list[str]:
    """``text``'s lines as ``wc -l`` and an editor count them: a final line break ends the
    last line, it does not start another (a 3,000-line file has 3,000 lines, not 3,001)."""
    lines = text.split("\n")
    return lines[:-1] if len(lines) > 1 and not lines[-1] else lines


# --- exact reads --------------------------------------------------------------------------------

Pos = tuple[int, int]
"""A place in a list of lines: (line index, character offset in that line)."""


def _fit(text: str, budget: int, count: Callable[[str], int]) -> tuple[int, int]:
    """The longest prefix of ``text`` costing at most ``budget`` tokens, as (chars, tokens).

    The probe grows from a guess rather than counting the whole text, so a 300 KB line costs a
    few counts of cap-sized strings. A ``str`` slice falls between code points, so a multi-byte
    UTF-8 character is never split.
    """
    lo, lo_cost, hi = 0, 0, max(16, budget * 4)
    while hi < len(text):
        cost = count(text[:hi])
        if cost > budget:
            break
        lo, lo_cost, hi = hi, cost, hi * 2
    else:
        cost = count(text)
        if cost <= budget:
            return len(text), cost
        hi = len(text)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        cost = count(text[:mid])
        if cost <= budget:
            lo, lo_cost = mid, cost
        else:
            hi = mid
    return lo, lo_cost


def cap_text(text: str, cap: int, count: Callable[[str], int]) -> str:
    """``text`` if it costs at most ``cap`` tokens, else its longest prefix that does, ending
    after a space when one is near (the caller says that it was cut, and how to get more)."""
    fits, _cost = _fit(text, cap, count)
    return text if fits == len(text) else text[: _split_point(text, fits)]


def _split_point(text: str, fits: int) -> int:
    """Where to split an over-long line: after a space in the last quarter of what fits, so
    words stay whole, else where the budget ends (always at least one character)."""
    space = text.rfind(" ", fits - fits // 4, fits)
    return space + 1 if space > 0 else max(1, fits)


def _cut(lines: list[str], start: Pos, stop: int, budget: int, count: Callable[[str], int]) -> Pos:
    """Where a slice from ``start`` ends under ``budget`` tokens, reading up to line ``stop``.

    Whole lines are taken while they fit. A line that does not fit in what is left starts the
    next slice; a line longer than the whole budget is split, so a slice never exceeds the cap
    and every slice makes progress. Pages and line reads share this, so the rest of a split
    line always begins a page.
    """
    line, col = start
    used = 0
    while line < stop:
        rest = lines[line][col:]
        room = budget - used - 1  # one for the newline
        if room < 0:
            break
        fits, cost = _fit(rest, room, count)
        if fits == len(rest):
            used += cost + 1
            line, col = line + 1, 0
            continue
        if used:
            break
        return line, col + _split_point(rest, fits)
    return line, col


def _page_start(lines: list[str], page: int, budget: int, count: Callable[[str], int]) -> Pos:
    if page < 1:
        raise InvalidInput(f"pages are numbered from 1 (got {page})")
    start: Pos = (0, 0)
    for done in range(1, page):
        start = _cut(lines, start, len(lines), budget, count)
        if start >= (len(lines), 0):
            raise InvalidInput(f"page {page} is past the end (there are {done} page(s))")
    return start


def _page_at(lines: list[str], pos: Pos, budget: int, count: Callable[[str], int]) -> int:
    """The number of the page that starts at ``pos`` (the first one at or after it)."""
    page, start = 1, (0, 0)
    while start < pos:
        start = _cut(lines, start, len(lines), budget, count)
        page += 1
    return page


def _span(lines: list[str], start: Pos, end: Pos) -> str:
    """'lines 5-7 of 200', saying where a split line begins or stops."""
    (first, c0), (l1, c1) = start, end
    last = l1 + 1 if c1 else l1
    text = f"lines {first + 1}-{last} of {len(lines)}"
    if first + 1 == last and (c0 or c1):
        return text + f", chars {c0 + 1}-{c1 or len(lines[first])} of {len(lines[first])}"
    if c0:
        text += f" (line {first + 1} from char {c0 + 1})"
    if c1:
        text += f" (line {last} up to char {c1} of {len(lines[l1])})"
    return text


def _remaining(lines: list[str], end: Pos) -> str:
    """What follows ``end``: '12 more lines', 'the rest of line 3 (900 more chars)', or both."""
    line, col = end
    after = len(lines) - line - (1 if col else 0)
    parts = [f"the rest of line {line + 1} ({len(lines[line]) - col} more chars)"] if col else []
    if after:
        parts.append(f"{after} more lines")
    return " and ".join(parts)


def _text(lines: list[str], start: Pos, end: Pos) -> str:
    (l0, c0), (l1, c1) = start, end
    shown = lines[l0 : l1 + 1] if c1 else lines[l0:l1]
    if c1:
        shown[-1] = shown[-1][:c1]
    shown[0] = shown[0][c0:]
    return "\n".join(shown)


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
    """An exact slice under ``cap`` tokens (header included), naming what it shows and how to
    read what remains. ``page`` goes alone or pages through what ``path`` matched."""
    if path and lines:
        raise InvalidInput("give one of path, lines or page (got path, lines)")
    if lines and page is not None:
        raise InvalidInput("give one of path, lines or page (got lines, page)")
    if cap < MIN_READ_TOKENS:
        raise InvalidInput(f"a read needs a cap of at least {MIN_READ_TOKENS} tokens (got {cap})")
    budget = cap - HEADER_TOKENS
    number = 1 if page is None else page
    if path:
        return _read_path(content, is_json, path, number, budget, count)
    all_lines = split_lines(view_text(content, is_json))
    if page is not None or not lines:
        return _read_page(all_lines, is_json, number, budget, count)
    return _read_lines(all_lines, is_json, lines, budget, count)


def _read_path(
    content: str, is_json: bool, path: str, page: int, budget: int, count: Callable[[str], int]
) -> str:
    if not is_json:
        raise InvalidInput("`path` works on JSON results; this one is text: use `lines`")
    matches = json_path(json.loads(content), path)
    if not matches:
        raise InvalidInput(f"JSONPath {echo(path)!r} matches nothing in this result")
    body = "\n".join(f"{p}: {json.dumps(v, indent=2, ensure_ascii=False)}" for p, v in matches)
    body_lines = body.split("\n")
    again = json.dumps(path) if len(path) <= ECHO_CHARS // 2 else "<the same path>"
    shown = echo(path, ECHO_CHARS // 2)
    budget = max(budget - count(shown) - count(again), HEADER_TOKENS // 2)
    start = _page_start(body_lines, page, budget, count)
    end = _cut(body_lines, start, len(body_lines), budget, count)
    head = f"[{shown} · {len(matches)} match(es)"
    if (start, end) != ((0, 0), (len(body_lines), 0)):
        head += f" · shown: {_span(body_lines, start, end)}"
    if end < (len(body_lines), 0):
        nxt = f"path={again}, page={page + 1}"
        head += f"; {_remaining(body_lines, end)}: read_result(..., {nxt}) or narrow the path"
    return head + "]\n" + _text(body_lines, start, end)


def _read_page(
    lines: list[str], is_json: bool, page: int, budget: int, count: Callable[[str], int]
) -> str:
    start = _page_start(lines, page, budget, count)
    end = _cut(lines, start, len(lines), budget, count)
    note = _span(lines, start, end) + (PRETTY_NOTE if is_json else "")
    if end < (len(lines), 0):
        note += f"; {_remaining(lines, end)}: read_result(..., page={page + 1})"
    return f"[{note}]\n" + _text(lines, start, end)


def _read_lines(
    lines: list[str], is_json: bool, spec: str, budget: int, count: Callable[[str], int]
) -> str:
    first, last = _parse_lines(spec, len(lines))
    start: Pos = (first - 1, 0)
    end = _cut(lines, start, last, budget, count)
    note = _span(lines, start, end) + (PRETTY_NOTE if is_json else "")
    line, col = end
    if col:
        nxt = f"page={_page_at(lines, end, budget, count)}"
        note += f"; line {line + 1} is longer than the token cap, so it is split"
        note += f"; {_remaining(lines, end)}: read_result(..., {nxt})"
    elif line < len(lines):
        nxt = f'lines="{line + 1}-{min(len(lines), 2 * line - start[0])}"'
        note += f"; {len(lines) - line} more lines: read_result(..., {nxt})"
    return f"[{note}]\n" + _text(lines, start, end)


def _parse_lines(spec: str, total: int) -> tuple[int, int]:
    match = _LINES_ARG.match(spec)
    if not match:
        raise InvalidInput(f"`lines` must look like '120-180' or '120-' (got {echo(spec, 40)!r})")
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else total
    if first < 1:
        raise InvalidInput(f"`lines` range {spec!r} starts before line 1")
    if first > total:
        raise InvalidInput(f"line {first} is past the end (the result has {total} lines)")
    if last < first:
        raise InvalidInput(f"`lines` range {spec!r} is empty (it ends before it starts)")
    return first, min(last, total)


# --- JSONPath (the useful subset) ---------------------------------------------------------------

_PATH_TOKEN = re.compile(
    r"\.\.(?P<deep>[A-Za-z_][\w-]*|\*)"
    r"|\.(?P<key>[A-Za-z_][\w-]*|\*)"
    r"|\[(?P<index>-?\d+)\]"
    r"|\[(?P<star>\*)\]"
    r"|\[\s*'(?P<quoted>(?:[^'\\]|\\.)*)'\s*\]"
    r"|\[\?\(@\.(?P<fkey>[\w-]+)\s*(?P<op>==|!=|>=|<=|>|<)\s*"
    r"(?P<fval>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^)'\"]+?)\s*\)\]"
)
"""The quoted forms take a backslash escape (``\\'``, ``\\\\``), as ``child_path`` writes them,
and a filter's quoted value may hold ``)``."""
_ESCAPED = re.compile(r"\\(.)", re.S)


def _unescape(quoted: str) -> str:
    """A quoted key or value as written between its quotes, escapes undone."""
    return _ESCAPED.sub(r"\1", quoted)


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


def _filter_value(raw: str) -> Any:
    """The right-hand side of a filter: a quoted string, or a JSON number, true, false or null.

    Parsed once, before any node is compared, so a bad value is an error even when no node
    has the key.
    """
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] in "'\"" and raw[-1] == raw[0]:
        return _unescape(raw[1:-1])
    try:
        return json.loads(raw)
    except ValueError:
        raise InvalidInput(
            f"JSONPath filter value {echo(raw, 60)!r} is not a number, true, false or null: "
            f"quote a string, e.g. [?(@.state=='open')] or [?(@.login==\"{echo(raw, 60)}\")]"
        ) from None


def _json_equal(left: Any, right: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, and values of different types are unequal."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return bool(left == right)


def _orderable(left: Any, right: Any) -> bool:
    """Whether ``<`` and friends mean anything: two numbers, or two strings."""
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (left, right))
    return numbers or (isinstance(left, str) and isinstance(right, str))


def _compare(left: Any, op: str, right: Any) -> bool:
    """``left op right``, only the operator asked for: building all six at once would raise
    on ``None > None``, and ``@.closed_at==null`` or ``!=null`` would match nothing."""
    if op in ("==", "!="):
        return _json_equal(left, right) == (op == "==")
    if not _orderable(left, right):
        return False
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def json_path(value: Any, expr: str) -> list[tuple[str, Any]]:
    """Evaluate a JSONPath subset: ``.key``, ``['key']``, ``[n]``, ``[*]``, ``.*``, ``..key``
    and filters ``[?(@.key op value)]``. Returns ``(concrete path, value)`` pairs."""
    expr = expr.strip()
    if not expr.startswith("$"):
        raise InvalidInput(f"a JSONPath starts with '$' (got {echo(expr, 60)!r})")
    current: list[tuple[str, Any]] = [("$", value)]
    pos = 1
    while pos < len(expr):
        m = _PATH_TOKEN.match(expr, pos)
        if m is None:
            raise InvalidInput(
                f"cannot parse JSONPath {echo(expr, 100)!r} at {echo(expr[pos:], 60)!r}"
            )
        pos = m.end()
        right = _filter_value(m.group("fval")) if m.group("fkey") is not None else None
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
                key = m.group("key")
                key = _unescape(m.group("quoted")) if key is None else key
                if key == "*" and m.group("key") is not None:
                    nxt.extend(_children(node, path))
                elif isinstance(node, dict) and key in node:
                    nxt.append((child_path(path, key), node[key]))
            elif m.group("index") is not None:
                if len(m.group("index")) > 19:  # past any list, and past int()'s digit cap
                    raise InvalidInput("a JSONPath array index has at most 18 digits")
                i = int(m.group("index"))
                if isinstance(node, list) and -len(node) <= i < len(node):
                    nxt.append((child_path(path, i % len(node)), node[i]))
            elif m.group("star") is not None:
                nxt.extend(_children(node, path))
            else:
                fkey, op = m.group("fkey"), m.group("op")
                nxt.extend(
                    (p, v)
                    for p, v in _children(node, path)
                    if isinstance(v, dict) and fkey in v and _compare(v[fkey], op, right)
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
    piece: tuple[str, int, int, int] | None = None
    """For a piece of a long line: the line, its index, and the piece's start and end."""


@dataclass(slots=True)
class Extraction:
    method: str
    fragments: list[tuple[str, str]] = field(default_factory=list)
    total_matches: int = 0
    coverage: float = 0.0
    notes: list[str] = field(default_factory=list)
    searchable: bool = True
    """False for a query with no word to search for: neither ranking nor an LLM can answer."""
    at_least: bool = False
    """The matches were counted up to a limit: there are ``total_matches`` or more."""

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
        present = {k: v for k, v in node.items() if v is not None}
        scalars = {k: v for k, v in present.items() if not isinstance(v, dict | list)}
        nested = {k: v for k, v in present.items() if isinstance(v, dict)}
        words: list[str] = terms(" ".join(re.findall(r"[A-Za-z0-9]+", path.split("[")[-1])))
        exact = set()
        for k, v in scalars.items():
            words.extend(terms(k.replace("_", " ")))
            words.extend(terms(str(v)))
            exact.add(str(v).lower())
        for k, v in nested.items():
            words.extend(terms(k.replace("_", " ")))
            for ik in IDENTITY_KEYS:
                if ik in v and not isinstance(v[ik], dict | list) and v[ik] is not None:
                    words.extend(terms(str(v[ik])))
        keys = frozenset(k.lower() for k in present) | frozenset(
            part for k in present for part in k.lower().split("_")
        )
        ident = frozenset(str(scalars[k]).lower() for k in IDENTITY_KEYS if k in scalars)
        name = re.sub(r"\[.*?\]", "", path.rsplit(".", 1)[-1]).lower()
        records.append(Record(path, "", Counter(words), frozenset(exact), keys, node, ident, name))
    return records


def _text_records(text: str, block: int = 30) -> list[Record]:
    """Blocks of up to ``block`` lines, split at blank lines; a long line is cut into
    pieces of its own, so a match deep in it ranks the piece that holds it."""
    lines = split_lines(text)
    records, start = [], 0
    while start < len(lines):
        if len(lines[start]) > LONG_LINE:
            records.extend(_piece_records(lines[start], start))
            start += 1
            continue
        end = start
        while end < len(lines) and end - start < block and (end == start or lines[end].strip()):
            if len(lines[end]) > LONG_LINE:
                break
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


def _piece_records(line: str, index: int) -> list[Record]:
    """The records of a long line: one per piece, labelled with its character offsets."""
    records = []
    for start, stop in line_pieces(line):
        text = line[start:stop]
        words = terms(text)
        where = window_label(index + 1, start, stop, len(line))
        record = Record(where, text, Counter(words), frozenset(words), frozenset())
        record.piece = (line, index, start, stop)
        records.append(record)
    return records


def _text_fragment(record: Record, wanted: list[str]) -> tuple[str, str]:
    """A ranked text record as shown: a block of lines whole, a piece of a long line as the
    window around the first place it holds the longest query word it holds."""
    if record.piece is None:
        return record.where, record.text
    line, index, start, stop = record.piece
    low = line[start:stop].lower()
    held = sorted((w for w in set(wanted) if w in low), key=lambda w: (-len(w), w))
    at = start + low.find(held[0]) if held else start
    first, last = window(at, at + len(held[0]) if held else at, 0, len(line))
    return window_label(index + 1, first, last, len(line)), line[first:last]


def _render_record(node: dict[str, Any], wanted: set[str]) -> str:
    """A record's identity fields, the fields the query names, nested identities inline."""
    shown: dict[str, Any] = {}
    fields = compact(node).value
    for key, value in fields.items():
        named = bool((set(terms(key.replace("_", " "))) | {key.lower()}) & wanted)
        if len(shown) >= MAX_FIELDS and not named:  # a field the query names always shows
            continue
        relevant = named or key in IDENTITY_KEYS
        if isinstance(value, dict):
            ident = {k: value[k] for k in IDENTITY_KEYS if k in value}
            if relevant or ident:
                shown[key] = ident or "{…}"
        elif isinstance(value, list):
            shown[key] = value if relevant and len(dumps(value)) < 400 else f"[{len(value)} items]"
        elif relevant or (isinstance(value, str | int | float) and set(terms(str(value))) & wanted):
            shown[key] = value if not isinstance(value, str) else _scalar_text(value)
    hidden = len(fields) - len(shown)
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


_JSONPATH = re.compile(r"\$(?:$|\.|\[)")
"""A query that is a JSONPath (``$.a``, ``$..a``, ``$[0]``, ``$``), not words such as ``$HOME``."""


def extract_local(content: str, is_json: bool, query: str) -> Extraction:
    """Verbatim fragments for ``query``; ``coverage`` is the share of query terms matched."""
    query = query.strip()
    parsed = json.loads(content) if is_json else None
    if query.startswith("$") and is_json:
        matches = json_path(parsed, query)
        out = Extraction("jsonpath", total_matches=len(matches), coverage=1.0 if matches else 0)
        out.fragments = [(p, dumps(v)) for p, v in matches]
        return out
    if _JSONPATH.match(query):
        raise InvalidInput(
            "this result is text, not JSON, so a JSONPath cannot apply: ask with a /regex/ or"
            " plain words, or read it with read_result(lines=...)"
        )
    flags = regex_flags(query)
    if flags is not None:
        source = query[1 : query.rindex("/")]
        text = view_text(content, is_json)
        found = regex_hits(source, flags, text)
        out = Extraction("regex", total_matches=len(found.hits), coverage=float(bool(found.hits)))
        out.fragments = regex_fragments(found, text)
        out.at_least = len(found.hits) >= MAX_HITS
        return out
    wanted = [t for t in terms(query) if t not in STOPWORDS]
    if not wanted and not re.search(r"\w", _WORD.sub(" ", query)):  # "???", "the"
        return Extraction("ranking", searchable=False)
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
        where, body = (
            (rec.where, _render_record(rec.node, want)) if is_json else _text_fragment(rec, wanted)
        )
        if body not in seen:
            seen.add(body)
            out.fragments.append((where, body))
    return out
