"""A text's lines: where they break, how many there are, and each one read without a list
of all of them.

One rule holds wherever the guard counts, numbers, reads or searches lines: ``\\n``,
``\\r\\n`` and a lone ``\\r`` each end a line (a Windows tool's output, an old Mac file, a
progress bar that redraws its line), as ``str.splitlines`` splits at those three; a final
line break ends the last line rather than starting another, as ``wc -l`` and an editor count
(:func:`text_end`). Other characters ``str.splitlines`` splits at (form feed, vertical tab,
``U+2028``) stay inside a line.

A list of a log's lines holds an object for every line. :class:`TextLines` keeps the offset
where each line starts (4 or 8 bytes a line) and cuts a line from the text when it is read.
"""

from __future__ import annotations

import abc
import re
from array import array
from collections.abc import Sequence
from typing import overload

BREAK = re.compile(r"\r\n|\r|\n")
"""One line break: a CRLF is one, never a lone ``\\r`` and an empty line."""
_NEWLINE = re.compile("\n")
"""The line breaks of a text with no ``\\r``, found by a plain search for one character."""


def breaks(text: str) -> re.Pattern[str]:
    """The pattern of ``text``'s line breaks: :data:`BREAK`, or a search for ``\\n`` alone
    when the text holds no ``\\r`` (several times faster over a long line)."""
    return BREAK if "\r" in text else _NEWLINE


def text_end(text: str) -> int:
    """Where the text's last line ends: before a final line break, which starts no line."""
    if text.endswith("\r\n"):
        return len(text) - 2
    return len(text) - 1 if text.endswith(("\n", "\r")) else len(text)


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """The text's lines as a list, by this module's rule (``str.splitlines`` splits at more
    characters than it); with ``keepends``, each with its own line break."""
    end = text_end(text)
    if not keepends:
        return breaks(text).split(text[:end])
    cuts = [m.end() for m in breaks(text).finditer(text, 0, end)]
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if a < b]


def count_breaks(text: str, start: int = 0, end: int | None = None) -> int:
    """The line breaks that begin in ``text[start:end]``; ``start`` is where a line starts."""
    stop = len(text) if end is None else end
    crlf = text.count("\r\n", start, stop)
    return text.count("\n", start, stop) + text.count("\r", start, stop) - crlf


def line_total(text: str) -> int:
    """How many lines ``text`` has (one for an empty text, as an empty line)."""
    return count_breaks(text, 0, text_end(text)) + 1


def line_end(text: str, pos: int, end: int | None = None) -> int:
    """Where the line holding ``pos`` ends: the next line break at or after ``pos``, else
    ``end`` (the text's end by default). The search stops at ``end``, so a line's end is
    found in time proportional to the line, not to the text after it: it is looked for in
    windows that double, each searched for both characters with ``str.find``."""
    stop = len(text) if end is None else end
    window = 256
    while pos < stop:
        upto = min(stop, pos + window)
        newline = text.find("\n", pos, upto)
        cr = text.find("\r", pos, upto if newline < 0 else newline)
        if cr >= 0 or newline >= 0:
            return cr if cr >= 0 else newline
        pos, window = upto, window * 2
    return stop


def next_line(text: str, at: int) -> int:
    """Where the line after the line break at ``at`` starts (past both characters of a CRLF)."""
    return at + 2 if text.startswith("\r\n", at) else at + 1


def line_start(text: str, lo: int, at: int) -> int:
    """Where the line holding ``at`` starts, looked for back to ``lo`` (a line's start)."""
    return max(text.rfind("\n", lo, at), text.rfind("\r", lo, at), lo - 1) + 1


def longest_line(text: str, size: int = 1 << 16) -> int:
    """The length of the longest line, split a piece of about ``size`` characters at a time,
    never all at once."""
    end = text_end(text)
    longest = start = 0
    while start <= end:
        stop = line_end(text, min(start + size, end), end)
        piece = text[start:stop]
        longest = max(longest, *map(len, breaks(piece).split(piece)))
        start = next_line(text, stop)
    return longest


class ReadLines(Sequence[str]):
    """Lines read one at a time by :meth:`line` (``0 <= index < len(self)``); an index or a
    slice reads as a list's would."""

    @abc.abstractmethod
    def line(self, index: int) -> str:
        """Line ``index``, counted from 0."""

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self.line(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.line(index)


class TextLines(ReadLines):
    """The lines of ``text``, each cut from it when read."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._end = text_end(text)
        self._starts = array("I" if len(text) < 2**32 else "q", [0])
        self._starts.extend(m.end() for m in breaks(text).finditer(text, 0, self._end))

    def __len__(self) -> int:
        return len(self._starts)

    def line(self, index: int) -> str:
        return self._text[self._starts[index] : self._stop(index)]

    def _stop(self, index: int) -> int:
        """Where line ``index`` ends, before its line break."""
        if index + 1 >= len(self):
            return self._end
        after = self._starts[index + 1]
        return after - 2 if self._text.startswith("\r\n", after - 2) else after - 1

    def span(self, first: tuple[int, int], last: tuple[int, int]) -> str:
        """The text from (line, char) ``first`` to ``last`` as written, its line breaks
        included: ``last`` is (line, char) where it stops, or (line, 0) for the end of the
        line before."""
        (l0, c0), (l1, c1) = first, last
        stop = self._starts[l1] + c1 if c1 else self._stop(l1 - 1)
        return self._text[self._starts[l0] + c0 : stop]
