"""A text result read as a table of records, so a question on it is answered like JSON's.

A text is a table when all of it reads one way:

- **JSON Lines**: every non-blank line is a JSON object (a log's events);
- **git log**: ``commit <hash>`` blocks, one record per commit, with their ``--stat``
  (:mod:`~taskloom.guard.gitlog`);
- **diff**: a unified diff, one record per file it changes (:mod:`~taskloom.guard.diffs`);
- **access log**: a web server's Common or Combined Log Format, one record per request
  (:mod:`~taskloom.guard.accesslog`);
- **delimited**: a header line of distinct names split by a tab, a comma, a semicolon or a
  bar, and every following record (read as CSV, quotes and all) has as many fields; a
  cell's padding (``280     \t``, as a tab-aligned listing writes it) is no part of it;
- **bordered**: a SQL client's table drawn with ``+----+`` rules and ``|`` bars
  (:mod:`~taskloom.guard.bordered`);
- **HTML**: a page's largest ``<table>``, its ``<th>`` cells naming the fields
  (:mod:`~taskloom.guard.htmltable`);
- **XML**: a document's most repeated element, each one a record of its attributes and
  leaf children (:mod:`~taskloom.guard.xmlrecords`);
- **TOML**: a document's most repeated array of tables (``[[package]]`` blocks), each
  table a record (:mod:`~taskloom.guard.tomltables`);
- **YAML list**: plain block YAML whose one list holds mappings (``- name: api`` blocks),
  each item a record (:mod:`~taskloom.guard.yamllist`);
- **YAML mapping**: plain block YAML whose top-level key maps names to mappings (a
  workflow's ``jobs:``), each one a record (:mod:`~taskloom.guard.yamlmap`);
- **fixed-width**: a header line of at least three distinct names over aligned columns,
  read by the columns' positions, so a cell may hold spaces (:mod:`~taskloom.guard.fixedwidth`);
- **columns**: a header line of at least three distinct names (``USER PID %CPU … COMMAND``)
  and every following line splits on whitespace into as many fields, the last one taking
  the rest of the line, with at least one column of numbers in every row;
- **dated listing**: a file listing with no header, a date, a time, a size and a name on
  every line (:mod:`~taskloom.guard.listing`);
- **pair lines**: failing all of those, the largest run of ``key=value`` lines with the same
  keys, at least half of the text's lines (Redis ``INFO``'s ``cmdstat_get:calls=…``, logfmt),
  each line a record (:mod:`~taskloom.guard.pairlines`).

A fixed-width or columns header may be underlined by a rule of dashes or ``=`` under each
name (a package list's ``------- -----``); the rule is no row. Lines after the last blank
line, at most :data:`LEGEND_LINES` of them, that do not read as rows of the table above
(a legend such as ``LOAD   = …`` and ``380 loaded units listed.``) are its footer, no rows.

A question reads a table only when :func:`asks_fields`. Anything else is no table
(``None``): a log, prose, a listing with blank lines. A cell that is a plain decimal number
(``42``, ``-3.5``; not ``007``) is read as a number, so comparisons work; every other cell
is its text. Each record keeps the lines it came from, so an answer shows the rows exactly
as the tool wrote them.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from typing import Any

from taskloom.domain.lines import split_lines
from taskloom.domain.stash import child_path
from taskloom.guard.accesslog import access_records
from taskloom.guard.bordered import RULE, bordered_rows
from taskloom.guard.diffs import diff_records
from taskloom.guard.exact import intent
from taskloom.guard.fixedwidth import RULE as RULE_LINE
from taskloom.guard.fixedwidth import fixed_columns
from taskloom.guard.gitlog import log_records
from taskloom.guard.htmltable import html_rows
from taskloom.guard.listing import dated_listing
from taskloom.guard.pairlines import pair_records
from taskloom.guard.preamble import PREAMBLE_LINES, preamble
from taskloom.guard.question import identifier as _identifier
from taskloom.guard.tomltables import toml_records
from taskloom.guard.xmlrecords import xml_records
from taskloom.guard.yamllist import yaml_records
from taskloom.guard.yamlmap import keyed_records

DELIMITERS = ("\t", ",", ";", "|")
_NAME = re.compile(r"[A-Za-z_%#][\w%#+./ -]*")
_COLUMN = re.compile(r"[A-Za-z_%#][\w%#+./-]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d{0,15})(?:\.\d+)?")
_JSON_LINE = re.compile(r"\s*\{")
_WORDS = re.compile(r"[\w%#+.-]+")
LEGEND_LINES = 8
"""The most lines a footer after a table's last blank line may hold."""
MAX_TOTALS = 2
"""The most lines below a rule that closes a fixed-width table's rows (``TOTAL``)."""


@dataclass(slots=True)
class Table:
    kind: str
    """``"JSON Lines"``, ``"git log"``, ``"diff"``, ``"access log"``, ``"CSV"``, ``"TSV"``,
    ``"delimited"``, ``"bordered"``,
    ``"HTML"``, ``"XML"``, ``"TOML"``, ``"YAML list"``, ``"YAML mapping"``, ``"fixed-width"``,
    ``"columns"`` or ``"pair lines"``."""
    records: list[dict[str, Any]] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    """The first and last line (1-based) of each record."""
    header: int = 0
    """The line of the header (0: none)."""
    name: str = ""
    """The key the records sit under, as a question may name them (``services``)."""

    def base(self) -> str:
        """The JSONPath of the records' array as an answer reads them."""
        return child_path("$", self.name) if self.name else "$"

    def document(self) -> str:
        """The records as the JSON an answer reads."""
        value: Any = {self.name: self.records} if self.name else self.records
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def read_table(text: str, *, after_preamble: bool = True) -> Table | None:
    """``text`` as a table, or ``None`` when not all of it reads as one; with
    ``after_preamble``, the text below one preamble is read too."""
    lines = split_lines(text)
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) < 3:
        return None
    first = lines[0]
    if _JSON_LINE.match(first):
        return _json_lines(lines)
    for kind, reader in (("git log", log_records), ("diff", diff_records)):
        read = reader(lines)
        if read is not None:
            return Table(kind, records=read[1], spans=read[2], name=read[0])
    requests = access_records(lines, cell)
    if requests is not None:
        return Table("access log", records=requests[1], spans=requests[2], name=requests[0])
    boxed = _bordered(lines)
    if boxed is not None:
        return boxed
    if first.lstrip().startswith("<"):
        return _html(text) or _xml(text)
    for delimiter in DELIMITERS:
        if delimiter in first:
            found = _delimited(text, delimiter)
            if found is not None:
                return found
    return (
        _toml(lines)
        or _yaml(lines)
        or _yaml_keyed(lines)
        or _aligned(lines)
        or _aligned(_before_legend(lines))
        or (_after_preamble(lines) if after_preamble else None)
        or _dated(lines)
        or _pairs(lines)
    )


def _dated(lines: list[str]) -> Table | None:
    read = dated_listing(lines, cell)
    return None if read is None else Table("dated listing", records=read[0], spans=read[1])


def _pairs(lines: list[str]) -> Table | None:
    read = pair_records(lines, cell)
    return None if read is None else Table("pair lines", records=read[0], spans=read[1])


def _after_preamble(lines: list[str]) -> Table | None:
    """The table below a preamble (:mod:`~taskloom.guard.preamble`), its lines numbered
    as the whole text's."""
    skip = preamble(lines)
    found = read_table("\n".join(lines[skip:]), after_preamble=False) if skip else None
    if found is None:
        return None
    found.spans = [(a + skip, b + skip) for a, b in found.spans]
    found.header = found.header + skip if found.header else 0
    return found


def _aligned(lines: list[str]) -> Table | None:
    return (_fixed(lines) or _columns(lines)) if len(lines) >= 3 else None


def _before_legend(lines: list[str]) -> list[str]:
    """The lines before a footer of up to :data:`LEGEND_LINES` lines after the last blank
    line (none when there is no such footer)."""
    blank = max((i for i, line in enumerate(lines) if not line.strip()), default=-1)
    if blank < 0 or len(lines) - blank - 1 > LEGEND_LINES:
        return []
    body = lines[:blank]
    while body and not body[-1].strip():
        body.pop()
    return body


def asks_fields(text: str, question: str) -> bool:
    """Whether ``question`` is one a table answers: a count or a list, one that names a
    field of the first record (``email``, ``latency_ms``, ``PID``; the header below a
    preamble's included), or one holding an
    identifier (letters and digits, four or more characters, as an ISO time has),
    which a row may hold. A plain word reads no table (the ranking answers it, without
    holding every row)."""
    if intent(question) is not None:
        return True
    if any(_identifier(w) for w in _WORDS.findall(question)):
        return True
    end = text.find("\n")
    first = text[: end if end >= 0 else len(text)]
    if RULE.fullmatch(first):  # a boxed table: the header is the line below its rule
        after = text.find("\n", end + 1)
        first = text[end + 1 : after if after >= 0 else len(text)]
    if _JSON_LINE.match(first):
        try:
            value = json.loads(first)
        except (ValueError, RecursionError):
            return False
        names = list(value) if isinstance(value, dict) else []
    else:
        names = re.split(r"[\s,;|]+", first)
    head = split_lines(text[:4000])[: PREAMBLE_LINES + 2]
    skip = preamble(head)
    if 0 < skip < len(head):  # the header below a preamble names the fields too
        names += re.split(r"[\s,;|]+", head[skip])
    asked = {w.lower().rstrip(".") for w in _WORDS.findall(question)}
    return any(n.strip().lower() in asked for n in names if n.strip())


def cell(text: str) -> Any:
    """A cell's value: a plain decimal number as a number, anything else as its text."""
    if _NUMBER.fullmatch(text):
        return float(text) if "." in text else int(text)
    return text


def _names(cells: list[str], pattern: re.Pattern[str]) -> list[str] | None:
    names = [c.strip() for c in cells]
    if len(names) < 2 or len(set(names)) < len(names):
        return None
    if not all(pattern.fullmatch(n) for n in names):
        return None
    return names


def _json_lines(lines: list[str]) -> Table | None:
    out = Table("JSON Lines")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if not _JSON_LINE.match(line):
            return None
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict):
            return None
        out.records.append(value)
        out.spans.append((number, number))
    return out


def _delimited(text: str, delimiter: str) -> Table | None:
    reader = csv.reader(split_lines(text, keepends=True), delimiter=delimiter)
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        return None
    names = _names(header, _NAME)
    if names is None:
        return None
    kind = {"\t": "TSV", ",": "CSV"}.get(delimiter, "delimited")
    out = Table(kind, header=1)
    last = reader.line_num
    try:
        for row in reader:
            start, last = last + 1, reader.line_num
            if not row:
                continue
            if len(row) != len(names):
                return None
            out.records.append({n: cell(v.strip()) for n, v in zip(names, row, strict=True)})
            out.spans.append((start, last))
    except csv.Error:
        return None
    return out if len(out.records) >= 2 else None


def _bordered(lines: list[str]) -> Table | None:
    found = bordered_rows(lines)
    if found is None:
        return None
    names, rows = found
    out = Table("bordered", header=2 if RULE.fullmatch(lines[0]) else 1)
    for number, cells in rows:
        out.records.append({n: cell(v) for n, v in zip(names, cells, strict=True)})
        out.spans.append((number, number))
    return out


def _html(text: str) -> Table | None:
    found = html_rows(text)
    if found is None:
        return None
    names, rows = found
    out = Table("HTML")
    for first, last, cells in rows:
        out.records.append({n: cell(v) for n, v in zip(names, cells, strict=True)})
        out.spans.append((first, last))
    return out


def _xml(text: str) -> Table | None:
    found = xml_records(text, cell)
    if found is None:
        return None
    return Table("XML", records=found[1], spans=found[2], name=found[0])


def _toml(lines: list[str]) -> Table | None:
    found = toml_records(lines, cell)
    if found is None:
        return None
    return Table("TOML", records=found[1], spans=found[2], name=found[0])


def _yaml(lines: list[str]) -> Table | None:
    found = yaml_records(lines, cell)
    if found is None:
        return None
    return Table("YAML list", records=found[1], spans=found[2], name=found[0])


def _yaml_keyed(lines: list[str]) -> Table | None:
    found = keyed_records(lines, cell)
    if found is None:
        return None
    return Table("YAML mapping", records=found[1], spans=found[2], name=found[0])


def _fixed(lines: list[str]) -> Table | None:
    found = fixed_columns(lines)
    if found is None:
        return None
    names, rows = found
    out = Table("fixed-width", header=1)
    for number, row in enumerate(rows, 2):
        if RULE_LINE.fullmatch(lines[number - 1]):
            if out.records and len(lines) - number <= MAX_TOTALS:
                break  # a rule just above the end: the lines below it total the rows
            continue
        out.records.append({n: cell(v.strip()) for n, v in zip(names, row, strict=True)})
        out.spans.append((number, number))
    return out if len(out.records) >= 2 else None


def _columns(lines: list[str]) -> Table | None:
    names = _names(lines[0].split(), _COLUMN)
    if names is None or len(names) < 3:
        return None
    out = Table("columns", header=1)
    numeric = [True] * len(names)
    ruled = RULE_LINE.fullmatch(lines[1]) is not None
    for number, line in enumerate(lines[1 + ruled :], 2 + ruled):
        parts = line.split(None, len(names) - 1)
        if len(parts) != len(names):
            return None
        row = {n: cell(v) for n, v in zip(names, parts, strict=True)}
        for i, value in enumerate(row.values()):
            numeric[i] = numeric[i] and not isinstance(value, str)
        out.records.append(row)
        out.spans.append((number, number))
    return out if len(out.records) >= 2 and any(numeric) else None
