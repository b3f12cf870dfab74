"""Exact reads of a stashed result: a JSONPath's matches, a line range or a page, under a cap.

``read_slice`` returns exactly what was asked for under a token cap, header included, and
says what remains and how to read it. Line numbers of a JSON result are those of its 2-space
pretty print; a large JSON result is never pretty-printed whole (:class:`LazyLines`), and a
JSONPath's matches are kept as paths and read again for the page shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence

from taskloom.domain.errors import InvalidInput
from taskloom.domain.lines import TextLines
from taskloom.domain.text import counted, plural
from taskloom.guard.jsondoc import JsonDoc, LazyLines, line_count, pretty_lines
from taskloom.guard.jsonpath import find, path_of
from taskloom.guard.jsontext import path_on_text
from taskloom.guard.search import ECHO_CHARS, echo

_LINES_ARG = re.compile(r"^\s*(\d{1,18})\s*(?:[-:]\s*(\d{1,18})?)?\s*$")
"""Line numbers of at most 18 digits: a longer one is past any result, and past Python's
cap on converting digits (a 4,400-digit one was an internal error)."""
HEADER_TOKENS = 100
"""Tokens kept back from a slice's body for its header, so the whole reply fits the cap."""
MIN_READ_TOKENS = 2 * HEADER_TOKENS
"""The smallest read cap: below it the header would crowd out the slice it describes."""
PRETTY_NOTE = " (of the JSON pretty-printed with 2-space indent)"
MAX_QUERY_CHARS = 2_000
"""The longest query or path accepted; a real one is a few dozen characters."""
MAX_PATH_MATCHES = 100_000
"""Matches of one JSONPath kept for paging; more are counted, and the answer says so."""


def view_text(content: str, is_json: bool) -> str:
    """The text that line numbers and pages refer to: pretty JSON (2-space indent) or the text."""
    if not is_json:
        return content
    return json.dumps(json.loads(content), indent=2, ensure_ascii=False)


def split_lines(text: str) -> list[str]:
    """``text``'s lines as ``wc -l`` and an editor count them: a final line break ends the
    last line, it does not start another (a 3,000-line file read as 3,001, the last empty)."""
    lines = text.split("\n")
    return lines[:-1] if len(lines) > 1 and not lines[-1] else lines


def json_lines(doc: JsonDoc, total: int | None = None) -> Sequence[str]:
    """The pretty print's lines: split whole for a small document, made as read for a
    large one (``total``: their number, when known)."""
    if not doc.lazy:
        return split_lines(json.dumps(doc.root(), indent=2, ensure_ascii=False))
    count = total if total is not None else line_count(doc.root())
    return LazyLines(lambda: pretty_lines(doc.root()), count)


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


def _cut(
    lines: Sequence[str], start: Pos, stop: int, budget: int, count: Callable[[str], int]
) -> Pos:
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


def _page_start(lines: Sequence[str], page: int, budget: int, count: Callable[[str], int]) -> Pos:
    if page < 1:
        raise InvalidInput(f"pages are numbered from 1 (got {page})")
    start: Pos = (0, 0)
    for done in range(1, page):
        start = _cut(lines, start, len(lines), budget, count)
        if start >= (len(lines), 0):
            pages = counted(done, "page")
            raise InvalidInput(f"page {page} is past the end (the result has {pages})")
    return start


def _page_at(lines: Sequence[str], pos: Pos, budget: int, count: Callable[[str], int]) -> int:
    """The number of the page that starts at ``pos`` (the first one at or after it)."""
    page, start = 1, (0, 0)
    while start < pos:
        start = _cut(lines, start, len(lines), budget, count)
        page += 1
    return page


def _span(lines: Sequence[str], start: Pos, end: Pos) -> str:
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


def _remaining(lines: Sequence[str], end: Pos) -> str:
    """What follows ``end``: '12 more lines', 'the rest of line 3 (900 more chars)', or both."""
    line, col = end
    after = len(lines) - line - (1 if col else 0)
    parts = [f"the rest of line {line + 1} ({len(lines[line]) - col} more chars)"] if col else []
    if after:
        parts.append(f"{after} more lines")
    return " and ".join(parts)


def _text(lines: Sequence[str], start: Pos, end: Pos) -> str:
    """The lines from ``start`` to ``end``: a text's as written, its line breaks included
    (``\\r\\n`` and a lone ``\\r`` too); a pretty print's joined by ``\\n``."""
    if isinstance(lines, TextLines):
        return lines.span(start, end)
    (l0, c0), (l1, c1) = start, end
    shown = list(lines[l0 : l1 + 1] if c1 else lines[l0:l1])
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
    total_lines: int | None = None,
) -> str:
    """An exact slice under ``cap`` tokens (header included), naming what it shows and how to
    read what remains. ``page`` goes alone or pages through what ``path`` matched;
    ``total_lines`` is the pretty print's line count when the caller knows it."""
    if path and lines:
        raise InvalidInput("give one of `path`, `lines` or `page` (got `path`, `lines`)")
    if lines and page is not None:
        raise InvalidInput("give one of `path`, `lines` or `page` (got `lines`, `page`)")
    if cap < MIN_READ_TOKENS:
        raise InvalidInput(f"a read needs a cap of at least {MIN_READ_TOKENS} tokens (got {cap})")
    budget = cap - HEADER_TOKENS
    number = 1 if page is None else page
    if path and not is_json:
        raise InvalidInput("`path` works on JSON results; " + path_on_text(content))
    doc = JsonDoc(content) if is_json else None
    if path and doc is not None:
        return _read_path(doc, path, number, budget, count)
    all_lines = json_lines(doc, total_lines) if doc is not None else TextLines(content)
    if page is not None or not lines:
        return _read_page(all_lines, is_json, number, budget, count)
    return _read_lines(all_lines, is_json, lines, budget, count)


def path_matches(doc: JsonDoc, path: str) -> tuple[list[tuple[int | str, ...]], int, int]:
    """The first :data:`MAX_PATH_MATCHES` matches of ``path`` as path parts, how many
    matched in all, and how many lines their ``path: value`` listing has."""
    kept: list[tuple[int | str, ...]] = []
    total = lines = 0
    for parts, value in find(doc.root(), path):
        total += 1
        if len(kept) < MAX_PATH_MATCHES:
            kept.append(parts)
            lines += line_count(value)
    return kept, total, lines


def match_lines(doc: JsonDoc, kept: list[tuple[int | str, ...]]) -> Iterator[str]:
    """``path: value`` for each match, the value pretty-printed, line by line."""
    for parts in kept:
        lines = pretty_lines(doc.get(parts))
        yield f"{path_of(parts)}: {next(lines)}"
        yield from lines


def _read_path(doc: JsonDoc, path: str, page: int, budget: int, count: Callable[[str], int]) -> str:
    kept, total, size = path_matches(doc, path)
    if not total:
        raise InvalidInput(f"JSONPath {echo(path)!r} matches nothing in this result")
    body_lines: Sequence[str] = LazyLines(lambda: match_lines(doc, kept), size)
    if not doc.lazy:
        body_lines = list(body_lines)
    again = json.dumps(path) if len(path) <= ECHO_CHARS // 2 else "<the same path>"
    shown = echo(path, ECHO_CHARS // 2)
    budget = max(budget - count(shown) - count(again), HEADER_TOKENS // 2)
    start = _page_start(body_lines, page, budget, count)
    end = _cut(body_lines, start, len(body_lines), budget, count)
    head = f"[{shown} · {total:,} {plural(total, 'match')}"
    if total > len(kept):
        head += f" (the first {len(kept):,} are paged)"
    if (start, end) != ((0, 0), (len(body_lines), 0)):
        head += f" · shown: {_span(body_lines, start, end)}"
    if end < (len(body_lines), 0):
        nxt = f"path={again}, page={page + 1}"
        head += f"; {_remaining(body_lines, end)}: read_result(..., {nxt}) or narrow the path"
    return head + "]\n" + _text(body_lines, start, end)


def _read_page(
    lines: Sequence[str], is_json: bool, page: int, budget: int, count: Callable[[str], int]
) -> str:
    start = _page_start(lines, page, budget, count)
    end = _cut(lines, start, len(lines), budget, count)
    note = _span(lines, start, end) + (PRETTY_NOTE if is_json else "")
    if end < (len(lines), 0):
        note += f"; {_remaining(lines, end)}: read_result(..., page={page + 1})"
    return f"[{note}]\n" + _text(lines, start, end)


def _read_lines(
    lines: Sequence[str], is_json: bool, spec: str, budget: int, count: Callable[[str], int]
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
