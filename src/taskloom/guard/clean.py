"""Remove markup noise from text tool output before it is measured or shown.

The order matters and follows the seed's ``clean_tool_output``: whole ``<script>``/``<style>``
blocks first (their bodies are not text), ``<svg>`` and ``data:`` URIs become short markers (so
the model knows something was there), comments go, then the remaining tags are stripped with
their text kept, and whitespace runs collapse. JSON is never cleaned this way: a ``<`` in one
string and a ``>`` in another would be stripped as a "tag" and the JSON broken; JSON goes
through :mod:`taskloom.guard.compact` instead.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script\s*>", re.I | re.S)
_STYLE = re.compile(r"<style\b[^>]*>.*?</style\s*>", re.I | re.S)
_SVG = re.compile(r"<svg\b[^>]*>.*?</svg\s*>", re.I | re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_DATA_URI = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w=.-]+)*;base64,[A-Za-z0-9+/=]+")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_SPACES = re.compile(r"[ \t\f\v]+")
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")
_LOOKS_LIKE_MARKUP = re.compile(r"<(?:[A-Za-z!/])")


@dataclass(frozen=True, slots=True)
class Cleaned:
    text: str
    removed: tuple[str, ...]
    """What kinds of noise were removed, e.g. ``("3 script blocks", "12 tags")``."""


def clean(text: str) -> Cleaned:
    """Strip markup noise; report what went. Plain text only changes in its whitespace."""
    removed: list[str] = []
    if "\x00" in text:  # PostgreSQL text cannot hold NUL, and no model needs it
        removed.append(f"{text.count(chr(0))} NUL characters")
        text = text.replace("\x00", "")
    if _LOOKS_LIKE_MARKUP.search(text):
        for pattern, label, repl in (
            (_SCRIPT, "script blocks", ""),
            (_STYLE, "style blocks", ""),
            (_SVG, "svg images", "[svg]"),
            (_COMMENT, "comments", ""),
            (_DATA_URI, "data URIs", "[data-uri]"),
            (_TAG, "tags", ""),
        ):
            text, n = pattern.subn(repl, text)
            if n:
                removed.append(f"{n} {label}")
        if any(r.endswith("tags") for r in removed):
            text = html.unescape(text)
    else:
        text, n = _DATA_URI.subn("[data-uri]", text)
        if n:
            removed.append(f"{n} data URIs")
    text = _SPACES.sub(" ", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = _BLANK_LINES.sub("\n\n", text)
    return Cleaned(text.strip(), tuple(removed))
