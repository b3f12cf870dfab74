"""A ``git log`` (with ``--stat`` or not) read as records, one per commit.

A commit starts at its ``commit <hash>`` line (refs after the hash allowed). Its fields:
``commit`` (the hash), ``author`` (the name) and ``email`` from ``Author:``, ``date``
from ``Date:`` (or ``AuthorDate:``), ``merge`` when a ``Merge:`` line names parents,
``subject`` (the message's first line) and ``message`` (all of it); and from the
``--stat`` block, ``files`` (each path a `` path | N +-`` line names), ``files_changed``,
``insertions`` and ``deletions`` (from the summary line, 0 when it names none).

The text is a log when its first line is a ``commit`` line and every other line is one of
a commit's lines (headers, the indented message, the stat block, blank lines); anything
else makes it no log (``None``).
"""

from __future__ import annotations

import re
from typing import Any

_COMMIT = re.compile(r"commit ([0-9a-f]{7,64})(?: \(.*\))?$")
_HEADER = re.compile(r"([A-Z][A-Za-z]*):\s+(.*)$")
_PERSON = re.compile(r"(.*?)\s*<([^>]*)>$")
_STAT = re.compile(r" (.+?)\s+\|\s+(?:\d+(?: [+-]*)?|Bin .*)$")
_SUMMARY = re.compile(
    r" (\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?$"
)


def log_records(lines: list[str]) -> tuple[str, list[dict[str, Any]], list[tuple[int, int]]] | None:
    """The records' name (``commits``), one record per commit and its first and last line
    (1-based), or ``None`` when the text is no ``git log``."""
    if not lines or not _COMMIT.match(lines[0]):
        return None
    records: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    message: list[str] = []
    for number, line in enumerate(lines, 1):
        commit = _COMMIT.match(line)
        if commit:
            _close(records, message)
            records.append({"commit": commit.group(1)})
            spans.append((number, number))
            continue
        record = records[-1]
        if not line.strip():
            continue
        spans[-1] = (spans[-1][0], number)
        if line.startswith("    "):
            message.append(line[4:])
        elif (stat := _STAT.fullmatch(line)) and not _SUMMARY.fullmatch(line):
            record.setdefault("files", []).append(stat.group(1).strip())
        elif summary := _SUMMARY.fullmatch(line):
            record["files_changed"] = int(summary.group(1))
            record["insertions"] = int(summary.group(2) or 0)
            record["deletions"] = int(summary.group(3) or 0)
        elif (header := _HEADER.match(line)) and "subject" not in record and not message:
            _header(record, header.group(1).lower(), header.group(2).strip())
        else:
            return None
    _close(records, message)
    return "commits", records, spans


def _header(record: dict[str, Any], key: str, value: str) -> None:
    if key in ("author", "commit") or key.endswith("author"):
        person = _PERSON.match(value)
        name, email = (person.group(1), person.group(2)) if person else (value, "")
        record.setdefault("author" if key != "commit" else "committer", name)
        if email and key != "commit":
            record.setdefault("email", email)
    elif key in ("date", "authordate"):
        record.setdefault("date", value)
    elif key == "merge":
        record["merge"] = value
    else:
        record.setdefault(key, value)


def _close(records: list[dict[str, Any]], message: list[str]) -> None:
    """Set the last commit's subject and message from its message lines, and empty them."""
    if records and message:
        records[-1]["subject"] = message[0].strip()
        records[-1]["message"] = "\n".join(message).strip()
    message.clear()
