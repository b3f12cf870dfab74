"""Remove markup noise from text tool output before it is measured or shown.

Only an HTML document is stripped of markup: text that starts with ``<!doctype html`` or
``<html`` (after a byte order mark, whitespace and comments), and holds no template or
server code (``<?php``, ``<?=``, ``<%``, ``{%``, ``{{``). Anything else passes exactly as the
tool returned it (only NUL characters go): C++ ``std::vector<int>``, ``a<b && c>d``, XML, a
Vue or Svelte component, JSX, a PHP or Jinja template, a Python file with an inline string
holding ``<html><body>…``, a README with a few tags. Holding a ``<body>`` element is not
enough: stripped, a PHP page would come back as "Hi", a Python file without its indentation.
A coding agent edits files by the text it was shown, so a collapsed space or a dropped
``<script>`` block in what it read would become a broken edit. What cleaning removes is never
lost: the guard stores the original of any output it shows cleaned (:mod:`taskloom.guard.core`).

For HTML the order is: whole ``<script>``/``<style>`` blocks first (their bodies are not text),
``<svg>`` and ``data:`` URIs become short markers (so the model knows something was there),
comments and ``<!doctype>`` go, then HTML tags are removed with their text kept. A block-level
tag (``<p>``, ``<tr>``, ``<br>``…) leaves a newline and a cell tag a space, so
``<td>1</td><td>2</td>`` reads ``1 2``, not ``12``.
JSON is never cleaned this way: it goes through :mod:`taskloom.guard.compact` instead.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from taskloom.domain.lines import breaks

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
_DOCUMENT = re.compile(
    r"\A\ufeff?\s*(?:<!--.*?-->\s*)*(?:<!doctype\s+html|<html[\s>])", re.I | re.S
)
_CODE = re.compile(r"<\?(?:php|=)|<%|\{%|\{\{", re.I)
"""Server or template code (PHP, ASP/JSP/ERB/EJS, Jinja/Django/Liquid, Mustache/Vue): the
file is source, whatever markup it holds."""
_SPACES = re.compile(r"[ \t\f\v]+")
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*){2,}")


@dataclass(frozen=True, slots=True)
class Cleaned:
    text: str
    removed: tuple[str, ...]
    """What kinds of noise were removed, e.g. ``("3 script blocks", "12 tags")``."""


def is_html(text: str) -> bool:
    """Whether ``text`` is an HTML document (see the module docs): one that starts as a
    document does and holds no code."""
    return bool(_DOCUMENT.match(text)) and not _CODE.search(text)


def _untag(match: re.Match[str], removed: list[int]) -> str:
    """An HTML tag's replacement (counted in ``removed``); anything else stays."""
    name = match.group(2).lower()
    if name not in _HTML_NAMES:
        return match.group(0)  # not HTML (``<T>`` in a code sample): kept
    removed[0] += 1
    return "\n" if name in _BLOCKS else " " if name in _CELLS else ""


def clean(text: str) -> Cleaned:
    """Strip the markup of an HTML document; report what went. Any other text is kept as it
    is, but for NUL characters."""
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
        tags = [0]
        text = _TAG.sub(lambda match: _untag(match, tags), text)
        if tags[0]:
            removed.append(f"{tags[0]} tags")
            text = html.unescape(text)
        text = _SPACES.sub(" ", text)
        text = "\n".join(line.strip() for line in breaks(text).split(text))
        text = _BLANK_LINES.sub("\n\n", text).strip("\n")
    return Cleaned(text, tuple(removed))
