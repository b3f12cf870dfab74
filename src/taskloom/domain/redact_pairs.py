"""Redaction of ``name=value`` credentials written in a line of their own kind: a cookie
header's cookies and a ``.pgpass`` line's password (see :mod:`taskloom.domain.redact`, which
applies them with its other rules), and the helpers those rules share."""

from __future__ import annotations

import re
from collections.abc import Callable

REDACTED = "[redacted]"


def keep_sub(
    pattern: re.Pattern[str], text: str, redact: Callable[[re.Match[str]], str | None]
) -> tuple[str, int]:
    """``pattern.subn`` where ``redact`` may keep a match (``None``), counting only the
    matches it replaces."""
    count = 0

    def replace(m: re.Match[str]) -> str:
        nonlocal count
        new = redact(m)
        if new is None:
            return m.group(0)
        count += 1
        return new

    return pattern.sub(replace, text), count


def redacted_group(m: re.Match[str], group: int | str) -> str:
    """The text of ``m`` with one of its groups replaced by ``[redacted]``."""
    whole, start = m.group(0), m.start()
    return whole[: m.start(group) - start] + REDACTED + whole[m.end(group) - start :]


_COOKIE_HEADER = re.compile(
    r"(?i)(?:(?<![\w-])|(?<=\\[nr]))(set-)?cookie2?:[ \t]*+((?:[^\r\n\"'\\]|\\(?![\"nr]))*+)"
)
"""A ``Cookie:`` or ``Set-Cookie:`` header line (curl ``-v``'s ``> Cookie:`` too, an ``-H``
quoted, a raw request's line in a JSON string after an escaped ``\\r\\n``): its pairs up to
the end of the line or of the quoted string it is in."""
_COOKIE_PAIR = re.compile(r"(?<![^\s;,])([^\s=;,]++)=(?!\[redacted\])([^;\s]++)")
_COOKIE_ATTRIBUTES = frozenset(
    {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority",
     "partitioned", "version", "comment"}
)  # fmt: skip
"""``Set-Cookie`` attributes, which are no cookie's value: ``Path=/``, ``Max-Age=3600``."""


def _cookie_header(m: re.Match[str]) -> str | None:
    """A cookie header with the value of each cookie redacted: every pair of a ``Cookie:``
    line, the first of a ``Set-Cookie:`` line (its attributes, ``Path=/``, kept). A header
    that holds no pair (prose's ``Cookie: see below``) is kept."""
    pairs = m.group(2)
    setting = m.group(1) is not None
    count = 0

    def pair(p: re.Match[str]) -> str:
        nonlocal count
        if p.group(1).lower() in _COOKIE_ATTRIBUTES or (setting and count):
            return p.group(0)
        count += 1
        return p.group(1) + "=" + REDACTED

    new = _COOKIE_PAIR.sub(pair, pairs)
    if not count:
        return None
    whole, start = m.group(0), m.start()
    return whole[: m.start(2) - start] + new + whole[m.end(2) - start :]


_PGPASS = re.compile(
    r"(?m)^((?:\*|(?=[\w.-]*[A-Za-z.])[\w.-]++):(?:\d{1,5}|\*)"
    r":(?:[^:\s\\]|\\.)++:(?:[^:\s\\]|\\.)++:)((?:[^:\s\\]|\\.)++)[ \t\r]*$"
)
"""A ``.pgpass`` line, ``host:port:database:user:password``: a host (a name, ``*``, an IP),
a port or ``*``, then two fields and the password to the end of the line, ``\\:`` and ``\\\\``
escaped in any. Five fields, no space, a port second: a time (``12:30:45``), a MAC address
or ``a:b:c:d:e`` words are none."""


def _pgpass_password(m: re.Match[str]) -> str | None:
    return None if m.group(2) in ("*", REDACTED) else redacted_group(m, 2)


def redact_pairs(text: str) -> tuple[str, int]:
    """``text`` with its cookie headers' values and ``.pgpass`` passwords redacted, and how
    many matches were."""
    count = 0
    if "ookie" in text or "OOKIE" in text:
        text, n = keep_sub(_COOKIE_HEADER, text, _cookie_header)
        count += n
    if text.count(":") >= 4:
        text, n = keep_sub(_PGPASS, text, _pgpass_password)
        count += n
    return text, count
