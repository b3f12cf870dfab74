"""Local, free answers from a stashed result: verbatim fragments labelled with where they are.

``extract_local`` tries, in order:

1. a JSONPath (``$.items[?(@.state=='open')].number``, ``$..login``): every match, counted;
2. a ``/regex/`` over lines;
3. for JSON, an exact answer (:mod:`~taskloom.guard.exact`): a count, a list or a filter the
   question sets on the result's own fields, with the JSONPath that gives it;
4. ranking of whole records (:mod:`~taskloom.guard.rank`), keys and names included; for
   text, blocks of lines.

A returned object always lists every member key (one level into nested objects too); a
long value is elided (``"…"``), a key never.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from taskloom.domain.errors import InvalidInput
from taskloom.domain.lines import split_lines
from taskloom.domain.text import counted, plural
from taskloom.guard.compact import dumps
from taskloom.guard.exact import MAX_SHOWN, Exact, answer
from taskloom.guard.fieldpairs import paired_rows
from taskloom.guard.jsondoc import JsonDoc, LazyArray, LazyObject, is_array, is_object
from taskloom.guard.jsonpath import find, path_of
from taskloom.guard.jsontext import path_on_text
from taskloom.guard.linecount import counted_lines
from taskloom.guard.measured import measured
from taskloom.guard.ordinal import Ordinal, asked, generic, picked_json
from taskloom.guard.quantities import sized_listing
from taskloom.guard.rank import (
    IDENTITY_KEYS,
    MAX_SCALAR_CHARS,
    Query,
    json_candidates,
    parts_of,
    rank,
    terms,
    text_candidates,
    text_fragment,
)
from taskloom.guard.reports import repeated_table, unscoped
from taskloom.guard.search import (
    LONG_LINE,
    MAX_HITS,
    Found,
    regex_flags,
    regex_fragments,
    regex_hits,
)
from taskloom.guard.sections import named_section
from taskloom.guard.slices import view_text
from taskloom.guard.table import Table, asks_fields, read_table
from taskloom.guard.tally import Tally, describe
from taskloom.guard.totals import asks_total, total_line
from taskloom.guard.traces import Traces, chosen_traces, shown_spans

MAX_FRAGMENTS = 3
SMALL_CHARS = 160
"""A nested value whose JSON is at most this long is shown whole inside a record."""
_WORD = re.compile(r"[^\W_]+")
_JSONPATH = re.compile(r"\$(?:$|\.|\[)")
"""A query that is a JSONPath (``$.a``, ``$..a``, ``$[0]``, ``$``), not words such as ``$HOME``."""


@dataclass(slots=True)
class Extraction:
    method: (
        str  # "jsonpath" | "regex" | "exact" | "table" | "tally" | "section" | "lines" | "trace"
        # | "ranking"
    )
    fragments: list[tuple[str, str]] = field(default_factory=list)
    total_matches: int = 0
    coverage: float = 0.0
    searchable: bool = True
    """False for a query with no word to search for: neither ranking nor an LLM can answer."""
    at_least: bool = False
    """The matches were counted up to a limit: there are ``total_matches`` or more."""
    summary: str = ""
    """What an exact answer is (the count and the JSONPath), shown before the fragments."""
    more: str = ""
    """How to read every match when not all are shown."""
    path: str = ""
    """The JSONPath of an exact answer."""
    unit: str = "match"
    """What ``total_matches`` counts, in the singular, as the answer's header names it."""
    lead: str = ""
    """What the first fragment is when it is no match itself: ``"values"`` (the matches'
    values, one JSON array) or ``"names"`` (the matches' member names); else ``""``."""

    def useful(self) -> bool:
        return bool(self.fragments or self.summary) and self.coverage >= 0.5


def _brief(value: Any, depth: int) -> Any:
    """A value as a record shows it: short scalars as they are, a long string elided, an
    object with every key (its members briefed one level further), a long list counted."""
    if isinstance(value, str):
        return value if len(value) <= MAX_SCALAR_CHARS else value[:MAX_SCALAR_CHARS] + "…"
    if not is_object(value) and not is_array(value):
        return value
    small = not isinstance(value, LazyObject | LazyArray) and len(dumps(value)) <= SMALL_CHARS
    if small:
        return value
    if is_object(value):
        if depth <= 0:
            return {key: "…" for key in value}
        return {key: _brief(inner, depth - 1) for key, inner in value.items()}
    items = list(value[:3]) if len(value) > 3 else list(value)
    shown = [_brief(v, depth - 1) for v in items] if depth > 0 else []
    rest = len(value) - len(shown)
    return shown + ([f"… +{rest} more items"] if rest else [])


def render_record(node: Any, wanted: set[str]) -> str:
    """A record with every key: identity fields and the fields the query names whole (up to
    :data:`MAX_SCALAR_CHARS`), nested objects with their keys, long values elided."""
    shown: dict[str, Any] = {}
    for key, value in node.items():
        named = bool((set(terms(key)) | {key.lower()}) & wanted) or key in IDENTITY_KEYS
        shown[key] = _brief(value, 2 if named else 1)
    return dumps(shown)


def _is_path(query: str) -> bool:
    return query.startswith("$") and bool(_JSONPATH.match(query) or "[" in query[:3])


def extract_local(content: str, is_json: bool, query: str) -> Extraction:
    """Verbatim fragments for ``query``; ``coverage`` is the share of query terms matched.
    JSON rows written as name/value pairs (:mod:`~taskloom.guard.fieldpairs`) are read as
    records, and the answer says so, since its paths are the records', not the pairs'."""
    paired = paired_rows(content) if is_json and not query.lstrip().startswith("$") else None
    if paired is None:
        return _extract(content, is_json, query)
    out = _extract(paired, is_json, query)
    note = (
        "Rows read as records from their name/value pairs: a path's last key is a pair's"
        " name, its value the pair's value."
    )
    out.summary = f"{note}\n{out.summary}" if out.summary else note
    return out


def _extract(content: str, is_json: bool, query: str) -> Extraction:
    query = query.strip()
    doc = JsonDoc(content) if is_json else None
    if doc is not None and query.startswith("$"):
        return _by_path(doc, query)
    if _JSONPATH.match(query):
        raise InvalidInput(path_on_text(content))
    flags = regex_flags(query)
    if flags is not None:
        source = query[1 : query.rindex("/")]
        text = view_text(content, is_json) if doc is None or not doc.lazy else content
        found = regex_hits(source, flags, text)
        out = Extraction("regex", total_matches=len(found.hits), coverage=float(bool(found.hits)))
        out.fragments = regex_fragments(found, text)
        out.at_least = len(found.hits) >= MAX_HITS
        _count_regex(out, found)
        return out
    parsed = Query.parse(query)
    if not parsed.wanted and not re.search(r"\w", _WORD.sub(" ", query)):  # "???", "the"
        return Extraction("ranking", searchable=False)
    ordinal = asked(query)
    if doc is not None:
        picked = None if ordinal is None else picked_json(doc, ordinal, query)
        if picked is not None:
            out = Extraction("exact", total_matches=1, coverage=1.0, unit="record")
            out.path = path_of(picked.parts)
            out.summary = f"The record asked for by position: {picked.rule}, {out.path}."
            record = picked.record
            body = render_record(record, set(parsed.wanted)) if is_object(record) else dumps(record)
            out.fragments.append((out.path, body))
            return out
        exact = answer(doc, query)
        if exact is not None:
            return _exact(doc, exact, parsed, query)
        return _ranked(doc, parsed)
    if ordinal is not None and (generic(ordinal) or _names_rows(content, ordinal)):
        return _positioned(content, ordinal)
    table = None
    table_query = query
    if asks_fields(content, query):
        lines = split_lines(content)
        table = read_table(content)
        if table is None:
            table = repeated_table(lines, query, read_table)
            table_query = query if table is None else unscoped(query)
        table = table or sized_listing(lines)
    tabled = None if table is None else _from_table(content, table, table_query)
    if tabled is not None and table is not None:
        if 2 * len(table.records) < sum(1 for line in split_lines(content) if line.strip()):
            _with_ranked(tabled, content, parsed)
        return tabled
    section = named_section(content, query)
    if section is not None:
        span = f"{section.first}-{section.last}"
        out = Extraction("section", total_matches=1, coverage=1.0)
        out.fragments.append((f"lines {span} (the section {section.heading!r})", section.text))
        out.more = f'the whole section: read_result(result_id=…, lines="{span}")'
        return out
    counted = counted_lines(content, query)
    if counted is not None:
        return _line_count(content, *counted)
    traced = chosen_traces(content, query)
    if traced is not None:
        return _traces(*traced)
    blocks, records, total = text_candidates(content, parsed)
    best = rank(blocks, records, total, parsed, MAX_FRAGMENTS * 4)
    return _fragments(best, len(blocks), lambda c: text_fragment(c, parsed.wanted))


def _with_ranked(out: Extraction, content: str, parsed: Query) -> None:
    """Add the best-ranked block of the text to a table's answer when the table's rows are
    under half of the text's lines (a closing summary): the rest may hold what is asked."""
    blocks, records, total = text_candidates(content, parsed)
    best = rank(blocks, records, total, parsed, 1)
    if best:
        out.fragments.append(text_fragment(best[0][2], parsed.wanted))


def _names_rows(content: str, ordinal: Ordinal) -> bool:
    """Whether the ordinal's noun names the records of the text's table (``the last
    package`` of a lock file's ``[[package]]`` tables)."""
    table = read_table(content)
    return table is not None and table.name.lower().removesuffix("s") == ordinal.noun


def _count_regex(out: Extraction, found: Found) -> None:
    """Say what a regex answer counts when its fragments are not its matches: a long line
    is shown in windows (each around a match farther than a window from the last), and a
    line once however many matches it holds. The count of every match and of the lines
    holding them is then stated apart, so "91 windows" is never read as 91 matches."""
    fragments = len(found.hits)
    if found.matches == fragments and found.lines == fragments:
        return
    more = "+" if out.at_least else ""
    matches = f"{found.matches:,}{'+' if found.matches >= MAX_HITS else ''}"
    out.summary = (
        f"{matches} {plural(found.matches, 'match')} of the regex, on {found.lines:,}{more}"
        f" {plural(found.lines, 'line')}"
    )
    if found.lines == fragments:
        out.unit = "matching line"
        out.summary += "."
    else:
        out.unit = "fragment"
        out.summary += (
            f"; a line over {LONG_LINE:,} characters is shown as windows around its matches."
        )


def _by_path(doc: JsonDoc, query: str) -> Extraction:
    out = Extraction("jsonpath", path=query)
    for parts, value in find(doc.root(), query):
        out.total_matches += 1
        if len(out.fragments) < MAX_SHOWN:
            out.fragments.append((path_of(parts), dumps(_materialize(value))))
    out.coverage = 1.0 if out.total_matches else 0.0
    if out.total_matches > len(out.fragments):
        out.more = _paging(query)
    return out


def _materialize(value: Any) -> Any:
    """A value as JSON can write it: a lazy one briefed (it is too large to show whole)."""
    return _brief(value, 1) if isinstance(value, LazyObject | LazyArray) else value


def _paging(path: str) -> str:
    return f'every match, paged: read_result(result_id=…, path="{path}", page=1, 2, …)'


def _ranked(doc: JsonDoc, parsed: Query) -> Extraction:
    found, records, total = json_candidates(doc, parsed)
    best = rank(found, records, total, parsed, MAX_FRAGMENTS * 4)
    want = set(parsed.wanted)
    return _fragments(
        best, len(found), lambda c: (path_of(c.parts), render_record(doc.get(c.parts), want))
    )


def _fragments(best: list[Any], matched: int, show: Any) -> Extraction:
    out = Extraction("ranking", total_matches=matched)
    if not best:
        return out
    top = best[0][0]
    out.coverage = best[0][1]
    seen: set[str] = set()
    for score, _cover, candidate in best:
        if score < top * 0.5 or len(out.fragments) >= MAX_FRAGMENTS:
            break
        where, body = show(candidate)
        if body not in seen:
            seen.add(body)
            out.fragments.append((where, body))
    return out


_NAMING = ("name", "id", "path", "title", "key", "commit", "host", "login", "slug")
"""Words of a field's name that make its values name a row, the likeliest first."""


def _exact(doc: JsonDoc, exact: Exact, parsed: Query, query: str) -> Extraction:
    """An exact answer as fragments: the count or the values, then the matches."""
    out = Extraction("exact", coverage=1.0, path=exact.path)
    if not exact.exact:
        ranked = _ranked(doc, parsed)
        ranked.summary = f"Not an exact {exact.kind}: {exact.note}."
        if ranked.fragments:
            ranked.summary += " The records below only rank best for the question's words."
        ranked.coverage = 0.0
        return ranked
    out.total_matches = exact.total
    if exact.tally is not None:
        where = " && ".join(c.text() for c in exact.conditions)
        out.summary = describe(
            exact.tally, where, f"the {exact.records:,} records of {exact.group}"
        )
        out.summary += f" (the records: JSONPath {exact.path})"
        if exact.note:
            out.summary += f" ({exact.note}.)"
        want = set(parsed.wanted)
        for _v, p, record in exact.tally.extremes:
            out.fragments.append((p, render_record(record, want)))
        _as_tally(out, exact.tally)
        return out
    if exact.kind == "count":
        out.summary = f"Exact count: {exact.total:,} (JSONPath {exact.path}, {_counted(exact)})."
    else:
        out.summary = (
            f"Exact {exact.kind}: {exact.total:,} {plural(exact.total, 'match')} of JSONPath"
            f" {exact.path}."
        )
    if exact.kind != "count" and exact.target and asks_total(query):
        totals = total_line((v for _p, v in find(doc.root(), exact.path)), query, exact.path)
        out.summary += f"\n{totals}" if totals else ""
    if exact.target and exact.shown and all(_scalar(v) for _p, v in exact.shown):
        values = [v for _p, v in exact.shown]
        out.fragments.append((f"{exact.path} (values in document order)", dumps(values)))
        out.lead = "values"
    else:
        names = exact.names
        if names and all(isinstance(n, str) for n in names) and len(set(names)) > 1:
            out.fragments.append(("names (keys) of the matches", dumps(names)))
            out.lead = "names"
        want = set(parsed.wanted)
        for p, value in exact.shown:
            body = render_record(value, want) if is_object(value) else dumps(_materialize(value))
            out.fragments.append((p, body))
    if exact.total > len(exact.shown) or exact.total > MAX_FRAGMENTS:
        out.more = _paging(exact.path)
    return out


def _from_table(content: str, table: Table, query: str) -> Extraction | None:
    """An exact answer over a text table's rows read as records, each match shown as the
    lines the tool wrote; ``None`` when the question has none (the ranking answers it)."""
    doc = JsonDoc(table.document())
    exact = measured(table, query)
    if exact is None:
        exact = answer(doc, query)
    if exact is None or not exact.exact:
        return None
    lines = split_lines(content)
    rows = f"{len(table.records):,} rows of this {table.kind} table"
    base = table.base()
    if exact.group != f"{base}[*]":
        rows += f" (read as records {base}[0], {base}[1], …, one per row; matches of {exact.path})"
    where = " && ".join(c.text() for c in exact.conditions)
    matching = f"matching {where}, evaluated over every one of the {rows}" if where else rows
    shown = [p for p, _v in exact.shown]
    if exact.tally is not None:
        summary = describe(exact.tally, where, f"the {rows}")
        shown = [p for _v, p, _r in exact.tally.extremes]
    elif exact.kind == "count":
        summary = f"Exact count: {exact.total:,} ({matching})."
    else:
        summary = (
            f"Exact {exact.kind}: {exact.total:,} row {plural(exact.total, 'match')} ({matching})."
        )
    if exact.note:
        summary += f" ({exact.note}.)"
    if exact.tally is None and exact.kind != "count" and exact.target and asks_total(query):
        totals = total_line((v for _p, v in find(doc.root(), exact.path)), query, exact.path)
        summary += f"\n{totals}" if totals else ""
    if table.header:
        summary += f"\nHeader (line {table.header}): {lines[table.header - 1][:300]}"
    out = Extraction("table", coverage=1.0, total_matches=exact.total, summary=summary)
    if exact.tally is not None:
        _as_tally(out, exact.tally)
    values = exact.tally is None and exact.target and exact.shown
    if values and all(_scalar(v) for _p, v in exact.shown):
        out.fragments.append(("values in row order", dumps([v for _p, v in exact.shown])))
        out.lead = "values"
    elif exact.kind == "list" and exact.tally is None and exact.total > MAX_FRAGMENTS:
        named = _naming_values(exact.shown)
        if named is not None:
            out.fragments.append((f"{named[0]} of the matches in row order", dumps(named[1])))
            out.lead = "values"
    seen: set[int] = set()
    for p in shown:
        index = int(p[len(base) + 1 : p.index("]", len(base) + 1)])
        if index in seen or len(seen) >= MAX_FRAGMENTS:
            continue
        seen.add(index)
        first, last = table.spans[index]
        label = f"line {first}" if first == last else f"lines {first}-{last}"
        out.fragments.append((label, "\n".join(lines[first - 1 : last])))
    return out


def _naming_values(shown: list[tuple[str, Any]]) -> tuple[str, list[Any]] | None:
    """The field that names the listed rows (``name``, ``id``, ``path``, ``title``…, the
    first of the first row's keys that holds a scalar in every row) and its values."""
    rows = [r for _p, r in shown]
    if not rows or not all(is_object(r) for r in rows):
        return None
    for word in _NAMING:
        for key in rows[0]:
            if word in parts_of(str(key)) and all(_scalar(r.get(key)) for r in rows):
                return str(key), [r.get(key) for r in rows]
    return None


def _as_tally(out: Extraction, found: Tally) -> None:
    out.method = "tally"
    out.total_matches = len(found.extremes) or len(found.counts)
    out.unit = "record" if found.extremes else "distinct value"


def _line_count(
    content: str, total: int, words: list[str], source: str, first: list[int]
) -> Extraction:
    said = " and ".join(words)
    out = Extraction("lines", total_matches=total, coverage=1.0)
    out.summary = (
        f"Exact count: {total:,} (lines holding the {plural(len(words), 'word')} {said}"
        " whole, as written;"
        f" every one: /{source}/)."
    )
    lines = split_lines(content)
    out.fragments = [(f"line {n}", lines[n - 1]) for n in first]
    return out


def _positioned(content: str, ordinal: Ordinal) -> Extraction:
    """The first or last record of a text: a table's row (a JSON Lines event, a CSV row),
    else its first or last non-blank line."""
    lines = split_lines(content)
    table = read_table(content)
    which = "last" if ordinal.last else "first"
    out = Extraction("lines", total_matches=1, coverage=1.0, unit="record")
    if table is not None and table.records:
        first, last = table.spans[-1 if ordinal.last else 0]
        out.method = "table"
        out.summary = f"The {which} of the {len(table.records):,} rows of this {table.kind} table."
        if table.header:
            out.summary += f"\nHeader (line {table.header}): {lines[table.header - 1][:300]}"
    else:
        filled = [i for i, line in enumerate(lines, 1) if line.strip()]
        if not filled:
            return Extraction("lines")
        first = last = filled[-1 if ordinal.last else 0]
        out.summary = f"The {which} of the {len(filled):,} non-blank lines."
    label = f"line {first}" if first == last else f"lines {first}-{last}"
    out.fragments.append((label, "\n".join(lines[first - 1 : last])))
    return out


def _traces(found: Traces, lines: list[str]) -> Extraction:
    out = Extraction("trace", total_matches=found.total, coverage=1.0, unit="trace")
    shown = "the trace" if len(found.chosen) == 1 else f"{len(found.chosen)} traces"
    out.summary = (
        f"{counted(found.total, 'traceback')} or stack {plural(found.total, 'trace')} in this"
        f" result; shown: {shown}"
        f" {found.which}, each with the line before it, its innermost frame and its"
        " exception (the last line shown)."
    )
    for trace in found.chosen:
        spans = shown_spans(trace, lines)
        label = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
        body = "\n".join(line for a, b in spans for line in lines[a - 1 : b])
        out.fragments.append((f"lines {label}", body))
    return out


def _counted(exact: Exact) -> str:
    """What an exact count ran over. A filter runs over the records (the objects) of its
    group; a count with no condition counts every match of its path, which are not the
    group's records when they are a named record's members, or when an array holds other
    values besides its objects (then how many of them are objects is said too)."""
    if exact.conditions:
        where = " && ".join(c.text() for c in exact.conditions)
        return (
            f"matching {where}, evaluated over every one of the {exact.records:,} records of"
            f" {exact.group}"
        )
    counted = "no condition, every match counted"
    if exact.path == exact.group and exact.records != exact.total:
        counted += f"; {exact.records:,} of them are objects, the records a condition selects"
    return counted


def _scalar(value: Any) -> bool:
    return not is_object(value) and not is_array(value)
