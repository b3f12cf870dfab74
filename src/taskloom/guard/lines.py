"""A text result's lines, counted and read without a list of all of them.

A list of a log's lines holds an object for every line: 200,000 short lines of 2.5 MB of
text take 14 MB as a list. :class:`TextLines` keeps the offset where each line starts (4
or 8 bytes a line) and cuts a line from the text when it is read.

Lines are those of ``wc -l`` and an editor: split on ``\\n``, a final line break ending the
last line rather than starting another (:func:`text_end`).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence
from typing import overload

_NEWLINE = re.compile("\n")


def text_end(text: str) -> int:
    """Where the text's last line ends: before a final line break, which starts no line."""
    return len(text) - 1 if text.endswith("\n") else len(text)


def line_total(text: str) -> int:
    """How many lines ``text`` has (one for an empty text, as an empty line)."""
    return text.count("\n", 0, text_end(text)) + 1


class TextLines(Sequence[str]):
    """The lines of ``text``, each cut from it when read."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._end = text_end(text)
        self._starts = array("I" if len(text) < 2**32 else "q", [0])
        self._starts.extend(m.end() for m in _NEWLINE.finditer(text, 0, self._end))

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        stop = self._starts[index + 1] - 1 if index + 1 < len(self) else self._end
        return self._text[self._starts[index] : stop]
