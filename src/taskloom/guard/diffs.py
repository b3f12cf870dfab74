"""A unified diff read as records, one per file it changes.

A file's record starts at its ``diff --git a/X b/Y`` line, or at a ``--- X`` line followed
by ``+++ Y`` when no such line came before (``diff -u``). Its fields:

- ``path``: the file's path after the change (before it, for a deleted file), without the
  ``a/`` or ``b/`` prefix; ``old_path`` too when a rename changes it;
- ``status``: ``added``, ``deleted``, ``renamed`` or ``modified``;
- ``added`` and ``removed``: its ``+`` and ``-`` lines within its ``@@`` hunks; a ``---``
  line followed by ``+++`` starts the next file only once the hunk has had the removed and
  context lines its header promises (so a removed line reading ``-- x`` is no header);
- ``hunks``: how many ``@@`` hunks it has; ``binary``: ``true`` for "Binary files … differ".

The text is a diff when its first line starts a file's record and every other line is a
hunk's line (a space, ``+``, ``-``, a "No newline" mark, or blank) or a header git or diff
writes (``index``, ``new file mode``, ``rename from``, ``similarity index``…); anything
else makes it no diff (``None``).
"""

from __future__ import annotations

import re
from typing import Any

_GIT = re.compile(r"diff --git (?:\"?a/)?(.+?)\"? (?:\"?b/)?(.+?)\"?$")
_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_HEADERS = (
    "index ", "new file mode", "deleted file mode", "old mode", "new mode", "similarity index",
    "dissimilarity index", "rename from", "rename to", "copy from", "copy to", "Binary files",
    "GIT binary patch", "literal ", "delta ", "\\ No newline", "Only in ", "diff ",
)  # fmt: skip


def _path(text: str) -> str:
    """A ``---``/``+++`` line's path: the prefix ``a/`` or ``b/`` and any timestamp off."""
    path = text.split("\t")[0].strip()
    return path[2:] if path.startswith(("a/", "b/")) else path


class _Diff:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.spans: list[tuple[int, int]] = []

    def start(self, number: int, old: str, new: str) -> None:
        self.records.append(
            {"path": new, "old_path": old, "status": "modified", "added": 0, "removed": 0,
             "hunks": 0, "binary": False}
        )  # fmt: skip
        self.spans.append((number, number))

    def end(self, number: int) -> None:
        if self.spans:
            self.spans[-1] = (self.spans[-1][0], number)

    def header(self, line: str) -> None:
        record = self.records[-1]
        if line.startswith("new file mode"):
            record["status"] = "added"
        elif line.startswith("deleted file mode"):
            record["status"] = "deleted"
        elif line.startswith("rename "):
            record["status"] = "renamed"
        elif line.startswith(("Binary files", "GIT binary patch")):
            record["binary"] = True

    def finish(self) -> list[dict[str, Any]]:
        for record in self.records:
            old, new = record.pop("old_path"), record["path"]
            if new == "/dev/null":
                record["path"], record["status"] = old, "deleted"
            elif old == "/dev/null":
                record["status"] = "added"
            elif old != new:
                record["old_path"] = old
                if record["status"] == "modified":
                    record["status"] = "renamed"
        return self.records


def diff_records(
    lines: list[str],
) -> tuple[str, list[dict[str, Any]], list[tuple[int, int]]] | None:
    """The records' name (``files``), one record per file and its first and last line
    (1-based), or ``None`` when the text is no unified diff."""
    if not lines or not (lines[0].startswith("diff ") or lines[0].startswith("--- ")):
        return None
    out = _Diff()
    old_left = 0  # removed or context lines the hunk's header still promises
    hunk = False
    i = 0
    while i < len(lines):
        line, number = lines[i], i + 1
        git = _GIT.match(line)
        pair = line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
        if git:
            hunk, old_left = False, 0
            out.end(number - 1)
            out.start(number, git.group(1), git.group(2))
        elif pair and old_left <= 0:
            new = _path(lines[i + 1][4:])
            if hunk or not out.records:
                out.end(number - 1)
                out.start(number, _path(line[4:]), new)
            else:
                out.records[-1]["old_path"], out.records[-1]["path"] = _path(line[4:]), new
            hunk = False
            i += 1
        elif (header := _HUNK.match(line)) and out.records:
            hunk, old_left = True, int(header.group(1) or 1)
            out.records[-1]["hunks"] += 1
        elif hunk and line[:1] in (" ", "", "-", "+", "\\"):
            record, mark = out.records[-1], line[:1]
            if mark in ("-", "+"):
                record["removed" if mark == "-" else "added"] += 1
            old_left -= mark in (" ", "", "-")
        elif line.startswith(_HEADERS) and out.records:
            hunk = False
            out.header(line)
        else:
            return None
        out.end(i + 1)
        i += 1
    records = out.finish()
    return ("files", records, out.spans) if records else None
