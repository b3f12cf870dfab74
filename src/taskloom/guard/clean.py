"""Remove markup noise from text tool output before it is measured or shown.

Only an HTML document or fragment is stripped of markup: text that starts with
``<!doctype html>`` or ``<html``, or whose angle brackets are nearly all real HTML tags with
at least one element closed, dense enough to be markup rather than prose that mentions a
tag. Anything else (C++ ``std::vector<int>``, ``a<b && c>d``, XML whose tag names are data,
a README that mentions ``<b>``) keeps every character; only its whitespace runs collapse,
and a line's indentation stays.

For HTML the order follows the seed's ``clean_tool_output``: whole ``<script>``/``<style>``
blocks first (their bodies are not text), ``<svg>`` and ``data:`` URIs become short markers (so
the model knows something was there), comments and ``<!doctype>`` go, then HTML tags are
removed with their text kept. A block-level tag (``<p>``, ``<tr>``, ``<br>``…) leaves a
newline and a cell tag a space, so ``<td>1</td><td>2</td>`` reads ``1 2``, not ``12``.
JSON is never cleaned this way: it goes through :mod:`taskloom.guard.compact` instead.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script\s*>", re.I | re.S)
_STYLE = re.compile(r"<style\b[^>]*>.*?</style\s*>", re.I | re.S)
_SVG = re.compile(r"<svg\b[^>]*>.*?</svg\s*>", re.I | re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_DECLARATION = re.compile(r"<![A-Za-z][^<>]*>|<\?[^<>]*\?>")
_DATA_URI = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w=.-]+)*;base64,[A-Za-z0-9+/=]+")
_INLINE = frozenset(
    {
        "a",
        "abbr",
        "b",
        "bdi",
        "bdo",
        "big",
        "cite",
        "code",
        "data",
        "del",
        "dfn",
        "em",
        "font",
        "i",
        "img",
        "input",
        "ins",
        "kbd",
        "label",
        "mark",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strike",
        "strong",
        "sub",
        "sup",
        "time",
        "tt",
        "u",
        "var",
        "wbr",
        "button",
        "select",
        "textarea",
    }
)
_CELLS = frozenset({"td", "th"})
_BLOCKS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "caption",
        "center",
        "col",
        "colgroup",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hgroup",
        "hr",
        "html",
        "iframe",
        "legend",
        "li",
        "link",
        "main",
        "menu",
        "meta",
        "nav",
        "noscript",
        "ol",
        "optgroup",
        "option",
        "p",
        "picture",
        "pre",
        "section",
        "source",
        "summary",
        "table",
        "tbody",
        "tfoot",
        "thead",
        "title",
        "tr",
        "ul",
        "video",
        "audio",
        "canvas",
        "map",
        "area",
        "object",
        "embed",
        "track",
        "param",
        "base",
    }
)
_HTML_NAMES = _INLINE | _CELLS | _BLOCKS
_TAG = re.compile(
    r"<(/?)([A-Za-z][A-Za-z0-9]*)"
    r"((?:\s+[A-Za-z_:@][-\w:.@]*(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?)*)\s*/?>"
)
"""A tag with well-formed attributes: ``<b && c>`` is not one."""
_ANGLE = re.compile(r"<[A-Za-z!/?]")
_DOCUMENT = re.compile(r"\A\ufeff?\s*(?:<!doctype\s+html|<html[\s>])", re.I)
_SPACES = re.compile(r"[ \t\f\v]+")
_INNER_SPACES = re.compile(r"(?<=\S)[ \t\f\v]{2,}")
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")
MARKUP_SHARE = 0.2
"""The share of an HTML fragment's characters that its tags must make up: below it, the text
is prose that mentions a tag or two, and stripping them would lose what it says."""


@dataclass(frozen=True, slots=True)
class Cleaned:
    text: str
    removed: tuple[str, ...]
    """What kinds of noise were removed, e.g. ``("3 script blocks", "12 tags")``."""


def is_html(text: str) -> bool:
    """Whether ``text`` is an HTML document or fragment (see the module docs)."""
    if _DOCUMENT.match(text):
        return True
    body = _COMMENT.sub("", _SVG.sub("", _STYLE.sub("", _SCRIPT.sub("", text))))
    angles = len(_ANGLE.findall(body))
    if not angles:
        return False
    tags = [m for m in _TAG.finditer(body) if m.group(2).lower() in _HTML_NAMES]
    opened = {m.group(2).lower() for m in tags if not m.group(1)}
    closed = {m.group(2).lower() for m in tags if m.group(1)}
    if not opened & closed or len(tags) < 0.8 * angles:
        return False
    markup = sum(m.end() - m.start() for m in tags)
    return markup >= MARKUP_SHARE * len(body.strip())


def _untag(match: re.Match[str]) -> str:
    name = match.group(2).lower()
    if name not in _HTML_NAMES:
        return match.group(0)  # not HTML (``<T>`` in a code sample): kept
    return "\n" if name in _BLOCKS else " " if name in _CELLS else ""


def clean(text: str) -> Cleaned:
    """Strip the markup of an HTML document; report what went. Any other text only changes in
    its whitespace: runs inside a line collapse to one space, indentation stays."""
    removed: list[str] = []
    if "\x00" in text:  # PostgreSQL text cannot hold NUL, and no model needs it
        removed.append(f"{text.count(chr(0))} NUL characters")
        text = text.replace("\x00", "")
    if is_html(text):
        for pattern, label, repl in (
            (_SCRIPT, "script blocks", ""),
            (_STYLE, "style blocks", ""),
            (_SVG, "svg images", "[svg]"),
            (_COMMENT, "comments", ""),
            (_DECLARATION, "declarations", ""),
            (_DATA_URI, "data URIs", "[data-uri]"),
        ):
            text, n = pattern.subn(repl, text)
            if n:
                removed.append(f"{n} {label}")
        before = text
        text = _TAG.sub(_untag, text)
        tags = sum(1 for m in _TAG.finditer(before) if m.group(2).lower() in _HTML_NAMES)
        if tags:
            removed.append(f"{tags} tags")
            text = html.unescape(text)
        text = "\n".join(line.strip() for line in _SPACES.sub(" ", text).split("\n"))
    else:
        text, n = _DATA_URI.subn("[data-uri]", text)
        if n:
            removed.append(f"{n} data URIs")
        text = _INNER_SPACES.sub(" ", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = _BLANK_LINES.sub("\n\n", text)
    return Cleaned(text.strip("\n"), tuple(removed))
