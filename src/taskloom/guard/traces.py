"""The exception of a traceback or stack trace a question asks about.

A question asks for one when it names an exception, an error, a traceback, a stack trace
or what was raised or thrown, and is no count. The traces of a text are:

- Python: ``Traceback (most recent call last):``, its indented frames, then the first
  line not indented, ``ExcType: message``, the exception;
- JavaScript and Java: a line followed by frames ``    at …``; that line
  (``TypeError: …``, ``Exception in thread "main" …``, ``Caused by: …``) is the exception;
- pytest: a run of ``E   `` lines; its first line is the exception.

Which trace: the first starting at or after the line holding the question's values
(``after the error at YYYY-MM-DD hh:mm:ss,mmm``: every word with a digit, on one line);
else the last for "last", "latest", "final", "most recent"; else the first ones. Each is
shown as the line before it, its innermost frame and its exception line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from taskloom.domain.lines import split_lines
from taskloom.guard.exact import intent

_ASKS = re.compile(
    r"\b(?:exceptions?|errors?|tracebacks?|raised?|thrown|threw|throws?|stack ?traces?)\b",
    re.IGNORECASE,
)
_LAST = re.compile(r"\b(?:last|latest|final|most recent)\b", re.IGNORECASE)
_VALUE = re.compile(r"[\w:.,/-]*\d[\w:.,/-]*")
_PY_HEAD = "Traceback (most recent call last):"
_AT = re.compile(r"\s+at \S")
_PYTEST = re.compile(r"E {2,}\S")
SHOWN = 3


@dataclass(slots=True, frozen=True)
class Trace:
    first: int
    """The line (0-based) the trace's own text starts on."""
    frame: int
    """The innermost frame's first line (0-based)."""
    exception: int
    """The exception line (0-based)."""


@dataclass(slots=True)
class Traces:
    chosen: list[Trace]
    total: int
    which: str
    """Which traces ``chosen`` are, as the answer says it."""


def asks_trace(question: str) -> bool:
    return bool(_ASKS.search(question)) and intent(question) != "count"


def find_traces(lines: list[str]) -> list[Trace]:
    """Every trace of ``lines``, in order."""
    out: list[Trace] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if line.strip() == _PY_HEAD:
            j, frame = i + 1, i + 1
            while j < n and lines[j][:1].isspace():
                if lines[j].lstrip().startswith("File "):
                    frame = j
                j += 1
            if j < n and lines[j].strip():
                out.append(Trace(i, frame, j))
            i = j + 1
        elif _AT.match(line) and i > 0 and lines[i - 1].strip() and not _AT.match(lines[i - 1]):
            out.append(Trace(i - 1, i, i - 1))
            i += 1
        elif _PYTEST.match(line) and not (i > 0 and _PYTEST.match(lines[i - 1])):
            out.append(Trace(i, max(i - 1, 0), i))
            i += 1
        else:
            i += 1
    return out


def chosen_traces(text: str, question: str) -> tuple[Traces, list[str]] | None:
    """The traces the question asks about and the text's lines, or ``None``."""
    if not asks_trace(question):
        return None
    lines = split_lines(text)
    found = find_traces(lines)
    if not found:
        return None
    values = [v.strip(".,") for v in _VALUE.findall(question)]
    values = [v for v in values if len(v) >= 4]
    if values:
        at = next((k for k, line in enumerate(lines) if all(v in line for v in values)), None)
        if at is not None:
            after = [t for t in found if t.exception >= at]
            if after:
                said = " ".join(values)
                return Traces(
                    after[:1], len(found), f"the first after line {at + 1} ({said})"
                ), lines
    if _LAST.search(question):
        return Traces(found[-1:], len(found), "the last"), lines
    return Traces(found[:SHOWN], len(found), "the first"), lines


def shown_spans(trace: Trace, lines: list[str]) -> list[tuple[int, int]]:
    """The line spans (1-based, inclusive) shown for ``trace``: the line before it, its
    start, its innermost frame and its exception."""
    start = min(trace.first, trace.frame)
    if start > 0 and lines[start - 1].strip():
        start -= 1
    end = max(trace.exception, trace.frame)
    if trace.frame <= trace.first + 1:
        return [(start + 1, end + 1)]
    return [(start + 1, trace.first + 1), (trace.frame + 1, end + 1)]
