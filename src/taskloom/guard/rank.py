"""Ranking whole records of a stashed result for a plain question, keys and names included.

A JSON record is every object of the result. It is scored for the query's words by the
evidence it holds for each, weighted by how rare that evidence is among the records
(an inverse document frequency), plus BM25 over its words:

- its **name**, the key it sits under (``$.shapes.InventoryConfiguration`` is named
  ``InventoryConfiguration``): an exact match first, then one in another case, then a match
  of the name's words (``inventory configuration``, a plural for a singular);
- an **identity value** (``id``, ``name``, ``login``…) equal to a query word, then any of
  its values equal to one, exactly, then in another case;
- a **member key** the query names, and a **path segment** above it.

So a question naming a key returns the record the key names, not the records that merely
mention it, and a record holding a value the question gives outranks one holding its words.
BM25 is computed here, in a pass that keeps only the records that match: a library would
hold every record's words (120,000 records of a 50 MB result), and none scores keys.

Text is ranked in blocks of lines (a long line in pieces), by BM25 and exact words.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from taskloom.domain.lines import TextLines
from taskloom.guard.jsondoc import JsonDoc, is_array, is_object
from taskloom.guard.search import LONG_LINE, line_pieces, window, window_label

IDENTITY_KEYS = (
    "id", "number", "name", "full_name", "login", "title", "key", "sha", "ref", "email",
    "slug", "state", "status", "action", "alpha_3", "code", "kind", "label", "type",
)  # fmt: skip
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
        "all",
        "every",
        "each",
        "any",
    ]
)
_WORD = re.compile(r"[^\W_]+(?:[._@/:-][^\W_]+)*")
_PARTS = re.compile(r"[._@/:-]")
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+(?:[._@/:-][A-Za-z0-9]+)*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_QUOTED = re.compile(r"\"([^\"]{1,200})\"|'([^']{1,200})'|`([^`]{1,200})`")
MAX_SCALAR_CHARS = 300

NAME_EXACT, NAME_CASE, NAME_WORDS = 10.0, 8.0, 3.0
IDENT_EXACT, VALUE_EXACT, VALUE_CASE = 8.0, 5.0, 4.0
MEMBER_KEY, SEGMENT = 2.0, 1.0


def words(text: str) -> list[str]:
    """The words of ``text`` as written: identifiers whole (``pull_request``, ``a.b/c``)."""
    return _WORD.findall(text)


def parts_of(word: str) -> list[str]:
    """A word's lower-cased parts: ``InventoryConfiguration`` → inventory, configuration;
    ``pull_request`` → pull, request. The parts of a word of ASCII letters and digits are
    found in one pass over it and lower-cased at once (no part runs across a separator)."""
    if _ASCII_WORD.fullmatch(word):
        return "\0".join(_CAMEL.findall(word)).lower().split("\0")
    out: list[str] = []
    for piece in _PARTS.split(word):
        out.extend(p.lower() for p in _CAMEL.findall(piece) or [piece])
    return out


_CLASSES = str.maketrans(
    {chr(c): "a" if chr(c).islower() else "A" if chr(c).isupper() else "0" if chr(c).isdigit()
     else "." if chr(c) in "._@/:-" else " " for c in range(128)}
)  # fmt: skip
"""An ASCII text in classes: ``a`` lower case, ``A`` upper case, ``0`` a digit, ``.`` a
separator a word may hold (``j`` once it is known to join two runs), `` `` any other."""
_SPLITS = ("aA", "a0", "A0", "0a", "0A", "AAa")
"""Where :data:`_CAMEL` splits a run of letters and digits, in classes; none overlaps
itself, so ``str.count`` counts every one."""
_JOIN = re.compile(r"\.(?<=[aA0]\.)(?=[aA0])")
"""A separator inside a word (``pull.request``), joining two runs of letters and digits."""
_NO_PARTS = re.compile(r" (?:[a0]+|A+|Aa+)(?![aA0j])")
"""A word :func:`_terms` adds no parts for: lower case and digits only, or one part."""


def term_count(text: str) -> int:
    """``len(terms(text))`` for an ASCII text, counted over its classes (:data:`_CLASSES`)
    at C speed instead of cutting out every part (a 20 MB base64 blob has 13 million):
    each word, plus the parts of each word that has more than one and is not lower case
    and digits only. A word's parts are its runs of letters and digits and the places
    :data:`_SPLITS` names in them. Each search starts with a literal character."""
    classes = " " + _JOIN.sub("j", text.translate(_CLASSES)).replace(".", " ")
    word_count = sum(classes.count(" " + c) for c in "aA0")
    parts = word_count + classes.count("j") + sum(classes.count(s) for s in _SPLITS)
    alone = _NO_PARTS.findall(classes)
    alone_parts = len(alone) + sum("".join(alone).count(split) for split in ("a0", "0a"))
    return word_count + parts - alone_parts


def terms(text: str) -> list[str]:
    """Lower-cased words, numbers and dotted/slashed identifiers, plus their parts."""
    if len(text) <= 64:  # keys and short values repeat in every record
        return list(_short_terms(text))
    return _terms(text)


@functools.lru_cache(maxsize=4096)
def _short_terms(text: str) -> tuple[str, ...]:
    return tuple(_terms(text))


def _terms(text: str) -> list[str]:
    out: list[str] = []
    for word in words(text):
        low = word.lower()
        out.append(low)
        if low == word and word.isalnum():  # "steps", "42": no parts
            continue
        pieces = parts_of(word)
        if len(pieces) > 1:  # then each part is shorter than the word
            out.extend(pieces)
    return out


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@dataclass(frozen=True, slots=True)
class Query:
    """A plain question as the ranking reads it."""

    wanted: tuple[str, ...]
    """The lower-cased terms searched for (stopwords out)."""
    exact: tuple[str, ...]
    """The query's words and quoted phrases as written, to match names and values whole;
    with adjacent words joined (``inventory configuration`` → ``inventoryconfiguration``)."""
    pieces: tuple[frozenset[str], ...] = ()
    """The lower-cased parts of each of ``exact``."""
    wanted_set: frozenset[str] = frozenset()
    singular: tuple[str, ...] = ()
    """Each of ``exact`` lower-cased, a plural made singular."""

    @classmethod
    def parse(cls, text: str) -> Query:
        quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
        written = [w for w in words(text) if w.lower() not in STOPWORDS]
        joined = [a + b for a, b in itertools.pairwise(written)]
        joined += [a + b + c for a, b, c in zip(written, written[1:], written[2:], strict=False)]
        exact = dict.fromkeys([*quoted, *written, *joined])
        wanted = dict.fromkeys(t for t in terms(text) if t not in STOPWORDS)
        pieces = tuple(frozenset(parts_of(q)) for q in exact)
        singular = tuple(_singular(q.lower()) for q in exact)
        return cls(tuple(wanted), tuple(exact), pieces, frozenset(wanted), singular)


@dataclass(slots=True)
class Candidate:
    """A record with evidence for the query: where it is and what it matched."""

    where: str
    parts: tuple[int | str, ...]
    length: int
    tf: dict[str, int]
    evidence: dict[str, float]
    text: str = ""
    piece: tuple[str, int, int, int] | None = None


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _record_evidence(
    parts: tuple[int | str, ...], node: Mapping[str, Any], query: Query
) -> tuple[int, dict[str, int], dict[str, float]]:
    """The record's length in words, how often it holds each wanted term, and the
    strongest evidence it holds for each exact query word."""
    name = parts[-1] if parts and isinstance(parts[-1], str) else ""
    wanted = query.wanted_set
    length = 0
    tf: dict[str, int] = {}

    def count(text: str) -> None:
        nonlocal length
        if len(text) > 64:  # a long value: read only if it holds a wanted term at all
            low = text.lower()
            if not any(term in low for term in wanted):
                length += low.count(" ") + 1
                return
        found = terms(text)
        length += len(found)
        if wanted.isdisjoint(found):
            return
        for term in found:
            if term in wanted:
                tf[term] = tf.get(term, 0) + 1

    if name:
        count(name)
    values: dict[str, str] = {}
    present: list[str] = []
    for key, value in node.items():
        if value is None:  # a field the query names counts only where it has a value
            continue
        present.append(key)
        count(key)
        if is_object(value):
            for ik in IDENTITY_KEYS:
                inner = value.get(ik)
                if inner is not None and not is_object(inner) and not is_array(inner):
                    count(_scalar(inner))
        elif not is_array(value):
            text = _scalar(value)
            count(text[: MAX_SCALAR_CHARS * 4])
            values[key] = text
    return length, tf, _evidence(parts, name, values, present, query)


def _evidence(
    parts: tuple[int | str, ...],
    name: str,
    values: dict[str, str],
    present: list[str],
    query: Query,
) -> dict[str, float]:
    ev: dict[str, float] = {}
    held = {v: k for k, v in reversed(values.items())}
    lowered = {v.lower() for v in values.values()}
    keys_low = {k.lower() for k in present}
    segments = {p.lower() for p in parts[:-1] if isinstance(p, str)}
    name_low = name.lower()
    name_one = _singular(name_low)
    name_parts = set(parts_of(name)) if name else set()
    for q, pieces, one in zip(query.exact, query.pieces, query.singular, strict=True):
        ql = q.lower()
        strength = 0.0
        if name:
            if q == name:
                strength = NAME_EXACT
            elif ql == name_low or one == name_one:
                strength = NAME_CASE
            elif pieces <= name_parts:
                strength = NAME_WORDS
        if q in held:
            exact = IDENT_EXACT if held[q] in IDENTITY_KEYS else VALUE_EXACT
            strength = max(strength, exact)
        elif ql in lowered:
            strength = max(strength, VALUE_CASE)
        if ql in keys_low or one in keys_low:
            strength = max(strength, MEMBER_KEY)
        if ql in segments:
            strength = max(strength, SEGMENT)
        if strength:
            ev[q] = strength
    return ev


KEEP_CANDIDATES = 5_000
"""Records kept while ranking a large result; past twice this many, the weakest half by
the scores so far is let go, so memory stays bounded."""


def json_candidates(doc: JsonDoc, query: Query) -> tuple[list[Candidate], int, int]:
    """Every record holding evidence or a word of ``query`` (the strongest
    :data:`KEEP_CANDIDATES` of a large result); and how many records there are and how
    many words they hold in all (for BM25's average length)."""
    found: list[Candidate] = []
    records = total = 0
    df: Counter[str] = Counter()
    for parts, node in doc.walk():
        if not is_object(node):
            continue
        records += 1
        length, tf, ev = _record_evidence(parts, node, query)
        total += length
        if tf or ev:
            df.update(tf.keys())
            df.update(ev.keys())
            found.append(Candidate("", parts, length, tf, ev))
            if len(found) > 2 * KEEP_CANDIDATES:
                kept = rank(found, records, total, query, KEEP_CANDIDATES, df)
                found = [c for _s, _c, c in kept]
    return found, records, total


def text_candidates(text: str, query: Query, block: int = 30) -> tuple[list[Candidate], int, int]:
    """Blocks of up to ``block`` lines, split at blank lines; a long line is cut into pieces
    of its own, so a match deep in it ranks the piece that holds it."""
    wanted = set(query.wanted)
    exact = {q.lower() for q in query.exact}
    found: list[Candidate] = []
    records = total = 0
    for where, chunk, piece in _text_blocks(text, block):
        records += 1
        low = chunk.lower() if chunk.isascii() else ""
        if low and not any(t in low for t in wanted):
            total += term_count(chunk)  # holds no query term: only its length counts
            continue
        bag = terms(chunk)
        total += len(bag)
        tf = {t: n for t in wanted if (n := bag.count(t))}  # the query's terms alone
        ev = {q: VALUE_CASE for q in exact if q in tf}
        if tf:
            found.append(Candidate(where, (), len(bag), tf, ev, chunk, piece))
    return found, records, total


def _text_blocks(
    text: str, block: int
) -> Iterator[tuple[str, str, tuple[str, int, int, int] | None]]:
    lines = TextLines(text)
    start = 0
    while start < len(lines):
        if len(lines[start]) > LONG_LINE:
            line = lines[start]
            for first, stop in line_pieces(line):
                where = window_label(start + 1, first, stop, len(line))
                yield where, line[first:stop], (line, start, first, stop)
            start += 1
            continue
        end = start
        while end < len(lines) and end - start < block and (end == start or lines[end].strip()):
            if len(lines[end]) > LONG_LINE:
                break
            end += 1
        chunk = "\n".join(lines[start:end])
        if chunk.strip():
            yield f"lines {start + 1}-{end}", chunk, None
        start = end if end > start else start + 1


def rank(
    found: list[Candidate],
    records: int,
    total: int,
    query: Query,
    keep: int,
    df: Counter[str] | None = None,
) -> list[tuple[float, float, Candidate]]:
    """The ``keep`` best candidates as (score, share of query terms matched, candidate);
    ``df``: in how many records each term and word was found, when more were seen than
    are in ``found``."""
    if not found:
        return []
    n = max(records, 1)
    avg = total / n or 1.0
    if df is None:
        df = Counter()
        for c in found:
            df.update(c.tf.keys())
            df.update(c.evidence.keys())
    distinct = set(query.wanted)
    scored = []
    for c in found:
        score = 0.0
        for q, strength in c.evidence.items():
            score += strength * math.log(1 + n / df[q])
        for term, tf in c.tf.items():
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * max(c.length, 1) / avg))
        hit = set(c.tf) | {t for q in c.evidence for t in terms(q)}
        cover = len(hit & distinct) / len(distinct) if distinct else 0.0
        scored.append((score, cover, c))
    return heapq.nsmallest(keep, scored, key=lambda s: (-s[0], s[2].where, s[2].parts))


def text_fragment(candidate: Candidate, wanted: tuple[str, ...]) -> tuple[str, str]:
    """A ranked text block as shown: whole, or for a piece of a long line the window around
    the first place it holds the longest query word it holds."""
    if candidate.piece is None:
        return candidate.where, candidate.text
    line, index, start, stop = candidate.piece
    low = line[start:stop].lower()
    held = sorted((w for w in set(wanted) if w in low), key=lambda w: (-len(w), w))
    at = start + low.find(held[0]) if held else start
    first, last = window(at, at + len(held[0]) if held else at, 0, len(line))
    return window_label(index + 1, first, last, len(line)), line[first:last]
