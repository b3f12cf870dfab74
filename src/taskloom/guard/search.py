"""Where a query matches in a text result: regex matches by line, and windows of long lines.

A regex is searched over the whole text at once, in chunks of whole lines, not line by line:
one timed ``search`` per line would pay a call's overhead on each of a large log's lines,
and refuse a trivial ``/^ok 1499999$/`` as a pattern that backtracks. A match still
belongs to one line, as if each line were searched alone: ``^`` and ``$`` match at line
starts and ends (``\\A`` and ``\\Z`` too), lines being those of
:mod:`taskloom.domain.lines` (``\\n``, ``\\r\\n`` or a lone ``\\r`` ends one), and a match
that runs past its line's end (``\\s``, ``[^x]`` or ``.`` can take a line break) is looked
for again within its first line only.

A line longer than :data:`LONG_LINE` (minified JSON kept as text, a one-line log) is never
shown from its start: a fragment of it is a window around the match, labelled with its
character offsets, so the match at char 322,000 of a 14 MB line is what the model sees.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from taskloom.domain.errors import InvalidInput
from taskloom.domain.lines import (
    count_breaks,
    line_end,
    line_start,
    line_total,
    next_line,
    text_end,
)

ECHO_CHARS = 200
"""How much of a model's query, path or pattern an answer or an error repeats."""
LONG_LINE = 2_000
"""A line longer than this many characters is searched and shown in windows."""
BEFORE = 500
AFTER = 1_000
"""How many characters of a long line a window shows before and after its match."""
PIECE = 1_500
"""The characters of one record when a long line is cut up for ranking."""
CHUNK = 1 << 20
"""About how many characters one timed regex search covers: a bounded chunk that takes
over half the time budget is the pattern's doing, not the result's size."""
MAX_HITS = 10_000
"""Matches counted at most; past them the answer says "10,000+"."""

LINE_START = r"(?:^|(?<=\r)(?!\n))"
"""Where ``^`` matches in a pattern searched line by line: at a line's start, after a lone
``\r`` too (``regex`` sees only ``\n`` end a line)."""
LINE_END = r"(?=\r|$)"
"""Where ``$`` matches in a pattern searched line by line: at a line's end, before a
``\r`` too (a CRLF's: a Windows tool's output, an HTTP response; or a lone one)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """A match, as offsets into the searched text, and the line holding it."""

    line: int
    """Its number, from 1."""
    line_start: int
    line_end: int
    start: int
    end: int


@dataclass(slots=True)
class Found:
    """The matches of one search, and why it stopped early if it did."""

    hits: list[Hit] = field(default_factory=list)
    stopped: str | None = None
    """``"pattern"`` (a chunk alone took over half the time), ``"size"`` (the time ran out
    over a result too big for it) or ``None`` (searched to the end, or :data:`MAX_HITS`)."""
    searched_lines: int = 0
    """Lines searched through when the search stopped early."""
    lines: int = 0
    """The lines that match."""
    matches: int = 0
    """Every match in those lines (up to :data:`MAX_HITS`): a long line's windows show only
    the matches farther apart than a window, and a line shows once however many it holds."""


def line_mode(source: str) -> str:
    """``source`` with ``^`` and ``\\A`` as :data:`LINE_START`, and ``$``, ``\\Z`` and
    ``\\z`` as :data:`LINE_END`:
    the start and end of a line, as if each line were searched alone (the text is searched
    multi-line). An escaped character and a character class are copied as they are."""
    out: list[str] = []
    at, in_class = 0, False
    while at < len(source):
        char = source[at]
        if char == "\\":
            pair = source[at : at + 2]
            if not in_class and pair in ("\\A", "\\Z", "\\z"):
                pair = LINE_START if pair == "\\A" else LINE_END
            out.append(pair)
            at += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            out.append(char)
            at += 1
            if source[at : at + 1] == "^":  # [^…]: a ] right after it is a member
                out.append("^")
                at += 1
            if source[at : at + 1] == "]":
                out.append("]")
                at += 1
            continue
        elif char == "$":
            char = LINE_END
        elif char == "^":
            char = LINE_START
        out.append(char)
        at += 1
    return "".join(out)


def _chunk_end(text: str, pos: int, size: int) -> int:
    """The end of the line at or after ``pos + CHUNK``: chunks hold whole lines."""
    if pos + CHUNK >= size:
        return size
    return line_end(text, pos + CHUNK, size)


def find_lines(pattern: Any, text: str, seconds: float) -> Found:
    """The matches of ``pattern`` (a ``regex`` pattern compiled multi-line) in ``text``, one
    per line, or one per window of a long line, within ``seconds``, with the count of the
    lines that match and of every match in them. ``regex`` takes a time limit and lets other
    threads run meanwhile; ``re`` holds the interpreter for as long as a pattern backtracks."""
    found = Found()
    deadline = time.monotonic() + seconds
    pos, line, counted = 0, 1, 0
    span = (-1, -1)  # the last line a match was in, found once however many windows it has
    counted_line = -1  # the start of the last line whose matches were counted
    size = text_end(text)  # a final line break starts no empty line for /^$/ to find
    while pos <= size and len(found.hits) < MAX_HITS:
        end = _chunk_end(text, pos, size)
        began = time.monotonic()
        try:
            match = _search(pattern, text, pos, end, deadline)
            if match is None:
                pos = next_line(text, end)
                continue
            if not span[0] <= match.start() <= span[1]:
                span = _line_at(text, pos, match.start())
            if match.end() > span[1]:  # ran into the next line: this line alone
                match = _search(pattern, text, span[0], span[1], deadline)
            if match is not None and span[0] != counted_line:
                counted_line = span[0]
                found.lines += 1
                found.matches += _count(pattern, text, span, deadline, MAX_HITS - found.matches)
        except TimeoutError:
            found.stopped = "pattern" if time.monotonic() - began > seconds / 2 else "size"
            found.searched_lines = line + count_breaks(text, counted, pos) - 1
            return found
        line += count_breaks(text, counted, span[0])
        counted = span[0]
        if match is not None:
            found.hits.append(Hit(line, *span, match.start(), match.end()))
        pos = _next_pos(text, match, span)
    return found


def _count(pattern: Any, text: str, span: tuple[int, int], deadline: float, most: int) -> int:
    """The matches of ``pattern`` in the line ``text[span[0]:span[1]]``, up to ``most``."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    matches = pattern.finditer(text, span[0], span[1], concurrent=True, timeout=left)
    return sum(1 for _match in zip(range(most), matches, strict=False))


def _search(pattern: Any, text: str, pos: int, end: int, deadline: float) -> Any:
    """``pattern.search`` of ``text[pos:end]`` with what is left of the time."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return pattern.search(text, pos, end, concurrent=True, timeout=left)


def _line_at(text: str, pos: int, at: int) -> tuple[int, int]:
    """The start and end of the line holding ``at``, searched for from ``pos``, which is a
    line's start or in the line of the last match: a one-line log of 14 MB is not scanned
    back to its start for each of its matches."""
    if at > pos and text.startswith("\r\n", at - 1):
        at -= 1  # the \n of a CRLF belongs to the line the CRLF ends
    return line_start(text, pos, at), line_end(text, at)


def _next_pos(text: str, match: Any, span: tuple[int, int]) -> int:
    """Where to search on after a match (``None``: none in this line): the next line, or in
    a long line past the window shown for this match."""
    first, last = span
    if match is None or last - first <= LONG_LINE:
        return next_line(text, last)
    after = window(match.start(), match.end(), first, last)[1]
    return after if after < last else next_line(text, last)


def window(start: int, end: int, line_start: int, line_end: int) -> tuple[int, int]:
    """The span of a long line shown for a match at ``start``-``end``."""
    return max(line_start, start - BEFORE), min(line_end, max(end, start + 1) + AFTER)


def window_label(line: int, start: int, end: int, length: int) -> str:
    """``line 1, chars 321,901-323,400 of 14,680,064``: where a window of a line is."""
    return f"line {line:,}, chars {start + 1:,}-{end:,} of {length:,}"


def line_pieces(line: str) -> list[tuple[int, int]]:
    """A long line cut into pieces of about :data:`PIECE` characters, each ending after a
    space or a punctuation mark when one is near, so a word is seldom cut in two."""
    spans, start = [], 0
    while start < len(line):
        stop = min(len(line), start + PIECE)
        if stop < len(line):
            cut = max(line.rfind(sep, stop - PIECE // 4, stop) for sep in " ,;\t")
            stop = cut + 1 if cut > start else stop
        spans.append((start, stop))
        start = stop
    return spans


def echo(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` as an answer repeats it: at most ``limit`` characters, then "…". Echoing a
    model's argument whole would let a 50 KB path come back as a 50 KB error, past every cap."""
    return text if len(text) <= limit else text[:limit] + "…"


_REGEX = re.compile(r"/((?:[^/\\]|\\.)+)/([imsxgu]*)", re.S)
"""A ``/pattern/flags`` query: no unescaped ``/`` in the pattern, flags only from ``imsxgu``."""
REGEX_FLAGS = "imsx"
_NO_OP_FLAGS = "gu"
"""JavaScript's ``g`` (every matching line is returned anyway) and ``u`` (the default)."""


def regex_flags(query: str) -> str | None:
    """The flags of a ``/regex/flags`` query (those ``re`` knows), or ``None`` when it is
    not one and the query is words. ``/needle/g`` is a regex; a query with a ``/`` inside its
    pattern, or letters that are not our flags, is words, so a path (``/usr/bin/dig``) is not
    misread as a pattern with flag ``d``."""
    written = _REGEX.fullmatch(query)
    if written is None:
        return None
    return "".join(c for c in written.group(2) if c in REGEX_FLAGS)


_SPECIAL = re.compile(r"[.^$*+?{}\[\]\\|()/]")
"""What a regex reads as syntax, and the ``/`` that would end the query."""

REGEX_SECONDS = 1.0
"""How long a model's regex may search one result. A pattern that backtracks without end
(``(a+)+$`` on a long line) would otherwise hold the interpreter, and every thread of the
server with it: ``re`` keeps the GIL and cannot be stopped."""


def regex_hits(source: str, flag_letters: str, text: str) -> Found:
    """Where ``source`` matches in ``text`` (:func:`find_lines`);
    an error that says what to change when the search ran out of time: the pattern, if a
    bounded part of the text alone took most of the time, else the question, since the
    result is too big to search whole in that time."""
    import regex  # only for regex queries

    flags = sum(getattr(regex, letter.upper()) for letter in flag_letters)
    try:
        regex.compile(source, flags | regex.MULTILINE)  # an error's position is the model's
        pattern = regex.compile(line_mode(source), flags | regex.MULTILINE)
    except regex.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        literal = echo(_SPECIAL.sub(r"\\\g<0>", source), 100)
        raise InvalidInput(
            f"bad regex {echo(source, 100)!r}{where}: {exc.msg}; to find the text as written,"
            f" escape it: /{literal}/"
        ) from None
    found = find_lines(pattern, text, REGEX_SECONDS)
    if found.stopped == "pattern":
        raise InvalidInput(
            f"regex {echo(source, 100)!r} took over {REGEX_SECONDS:g} s on this result: simplify it"
            " (nested repeats such as (a+)+ can backtrack without end)"
        )
    if found.stopped == "size":
        total = line_total(text)
        raise InvalidInput(
            f"this result is too big to search whole with regex {echo(source, 100)!r} in"
            f" {REGEX_SECONDS:g} s: only {found.searched_lines:,} of its {total:,} lines were"
            " searched. Ask a narrower question (a JSONPath, plain words), or read the part you"
            " need with read_result(lines=...)"
        )
    return found


def regex_fragments(found: Found, text: str) -> list[tuple[str, str]]:
    """Each match's line, numbered, or in a long line the window around it, labelled with
    its character offsets (the match in a 14 MB line, not the line's start)."""
    out = []
    for hit in found.hits:
        if hit.line_end - hit.line_start <= LONG_LINE:
            out.append((f"line {hit.line}", text[hit.line_start : hit.line_end].strip()))
            continue
        first, last = window(hit.start, hit.end, hit.line_start, hit.line_end)
        offset, length = first - hit.line_start, hit.line_end - hit.line_start
        label = window_label(hit.line, offset, last - hit.line_start, length)
        out.append((label, text[first:last]))
    return out
