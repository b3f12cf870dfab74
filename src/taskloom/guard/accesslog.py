"""A web server's access log read as records, one per request.

A line of the Common or Combined Log Format (what web servers write by default):
``client ident user [time] "request" status bytes``, then, in the combined format,
``"referer" "user agent"``; anything after those (a forwarded address, a request time) is
left unread. Its fields: ``ip`` (the client), ``ident``, ``remote_user``, ``time`` (as
written, the zone included), ``method``, ``path`` and ``protocol`` (the request line's
three words; a request line of another shape is the ``path``, its method and protocol
empty), ``status``, ``bytes``, and ``referer`` and ``user_agent`` when the line has them.

The text is an access log when every non-blank line is such a line; anything else makes it
no log (``None``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_QUOTED = r'"((?:[^"\\]|\\.)*)"'
_LINE = re.compile(
    rf"(\S+) (\S+) (\S+) \[([^\]]+)\] {_QUOTED} (\d{{3}}|-) (\d+|-)"
    rf"(?: {_QUOTED} {_QUOTED})?(?: .*)?"
)
_REQUEST = re.compile(r"(\S+) (\S+)(?: (\S+))?")


def access_records(
    lines: list[str], cell: Callable[[str], Any]
) -> tuple[str, list[dict[str, Any]], list[tuple[int, int]]] | None:
    """The records' name (``requests``), one record per request and its line (1-based),
    or ``None`` when the text is no access log."""
    if not lines or not _LINE.fullmatch(lines[0]):
        return None
    records: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        m = _LINE.fullmatch(line)
        if m is None:
            return None
        ip, ident, user, time, request, status, size, referer, agent = m.groups()
        parts = _REQUEST.fullmatch(request)
        method, path, protocol = parts.groups("") if parts else ("", request, "")
        record = {
            "ip": ip,
            "ident": ident,
            "remote_user": user,
            "time": time,
            "method": method,
            "path": path,
            "protocol": protocol,
            "status": cell(status),
            "bytes": cell(size),
        }
        if referer is not None:
            record["referer"] = referer
            record["user_agent"] = agent
        records.append(record)
        spans.append((number, number))
    return ("requests", records, spans) if len(records) >= 2 else None
