"""A Markdown section named by a question, returned whole.

A heading (``## Quick start``, outside fenced code) is named when its words appear in the
question in order, next to each other, in any case. The heading named by the most words
wins (``### Quick start details`` over ``## Quick start``), then the first. Its section runs
from the heading to the line before the next heading of the same or a higher level, so
its subsections come with it. The text is searched in place, never split into lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARK = re.compile(r"^(?:[ \t]*(```|~~~)|(#{1,6})[ \t]+(.*?)[ \t#]*)$", re.M)
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class Section:
    first: int
    """The heading's line (1-based)."""
    last: int
    heading: str
    text: str


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _contains(words: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return any(words[i : i + n] == phrase for i in range(len(words) - n + 1))


def named_section(text: str, question: str) -> Section | None:
    """The section ``question`` names, or ``None``."""
    if "#" not in text:
        return None
    heads: list[tuple[int, int, str]] = []  # (offset, level, heading)
    fenced = False
    for m in _MARK.finditer(text):
        if m.group(1):
            fenced = not fenced
        elif not fenced:
            heads.append((m.start(), len(m.group(2)), m.group(0).strip()))
    asked = _words(question)
    best: tuple[int, int] | None = None  # (words, index into heads)
    for at, (_start, _level, line) in enumerate(heads):
        phrase = _words(line)
        if phrase and _contains(asked, phrase) and (best is None or len(phrase) > best[0]):
            best = (len(phrase), at)
    if best is None:
        return None
    start, level, heading = heads[best[1]]
    end = next((o for o, lv, _h in heads[best[1] + 1 :] if lv <= level), len(text))
    body = text[start:end].rstrip()
    first = text.count("\n", 0, start) + 1
    return Section(first, first + body.count("\n"), heading, body)
