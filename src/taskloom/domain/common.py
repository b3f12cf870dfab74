"""Small shared pieces of the pure domain: the UNSET marker, timestamps, text helpers."""

from __future__ import annotations

import enum
import html
import json
import re
import unicodedata
import urllib.parse
from datetime import UTC, datetime
from typing import Any, Final

from taskloom.domain.errors import InvalidInput


class _Unset(enum.Enum):
    """Marks a patch field that the caller did not give (distinct from ``None``, which clears)."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset.UNSET
Unset = _Unset


def iso(now: datetime) -> str:
    """RFC 3339 UTC timestamp with millisecond precision, the only time format we store."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def non_empty(value: str | None) -> str | None:
    """Trim; an empty string becomes ``None`` (so an empty string clears an optional field)."""
    if value is None:
        return None
    value = value.strip()
    return value or None


def clean_list(items: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """Trim every item and drop empty ones."""
    if not items:
        return ()
    return tuple(s for s in (i.strip() for i in items) if s)


def parse_json(text: str, what: str) -> Any:
    """``text`` as JSON, or an error naming ``what`` and the problem: whatever the input (too
    deep, a number too long, a key twice), never a Python exception of another kind."""
    try:
        return json.loads(text, object_pairs_hook=_UniqueKeys(what))
    except RecursionError:
        raise InvalidInput(f"{what} is not valid JSON (nested too deeply)") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{what} is not valid JSON: {exc}") from None
    except ValueError:  # Python's cap on the digits of an integer
        raise InvalidInput(f"{what} is not valid JSON (a number is too long)") from None


class _UniqueKeys:
    """An object hook refusing a key given twice: the last one won in silence, and
    ``{"op": "list", "op": "clear"}`` cleared a board."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) < len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    raise InvalidInput(f"{self.what} gives the key {key!r} twice")
                seen.add(key)
        return out


def parse_json_object(text: str, what: str) -> dict[str, Any]:
    """``text`` as a JSON object, or an error naming ``what`` and the problem."""
    value = parse_json(text, what)
    if not isinstance(value, dict):
        raise InvalidInput(f"{what} must be a JSON object")
    return value


_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\U000e0000-\U000e007f]")
"""Control characters that are not whitespace or a line break (as Python splits lines:
tab, LF, VT, FF, CR, the separators U+001C–U+001F, NEL), and Unicode tag characters: drawn
as nothing, they spell a text a model reads and the person approving the plan never sees
("edit README.md" and, hidden, "and also run: curl … | sh")."""


def no_controls(text: str, name: str) -> str:
    """Refuse control characters (whitespace and line breaks aside) in text a person reads:
    ``\x01`` made a title pass for another's, past the approval gate's look-alike check, and
    a terminal escape (``\x1b[1A\x1b[2K``) in a plan step is an attempt to hide text from the
    person about to approve it (the CLI shows escapes on a terminal, but other readers may
    not)."""
    found = _CONTROLS.search(text)
    if found is not None:
        raise InvalidInput(
            f"{name} must not contain control characters (U+{ord(found.group()):04X} at"
            f" position {found.start() + 1}): write it as plain text"
        )
    return text


_SPOOFING = frozenset("\u00ad\u200b\u2060\u2061\u2062\u2063\u2064\ufeff") | frozenset(
    map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
)
"""Format characters that hide in an id or reorder it: zero-width spaces, the soft hyphen,
the byte order mark, bidi embeddings, overrides and isolates."""


def _unseen(char: str) -> bool:
    """A control or line/paragraph separator character, or a format character that hides in
    an id (:data:`_SPOOFING`)."""
    return unicodedata.category(char) in ("Cc", "Zl", "Zp") or char in _SPOOFING


def visible_id(text: str, name: str) -> str:
    """Refuse an id (a thread's, an agent's) holding a character one cannot see: a terminal
    escape in an agent id cleared the screen of whoever ran ``taskloom tasks list``, and a
    bidi override or a zero-width space made a look-alike id. Joiners (emoji, Persian) and
    direction marks (Arabic) stay."""
    if not text.isprintable():
        for at, char in enumerate(text):
            if _unseen(char):
                raise InvalidInput(
                    f"{name} must not contain control characters (line breaks, tabs,"
                    f" zero-width spaces, direction overrides): U+{ord(char):04X} at position"
                    f" {at + 1}; choose an id without it"
                )
    return text


def storable_size(text: str, name: str = "text") -> int:
    """The UTF-8 size of ``text``, which must be storable on both backends: no NUL (PostgreSQL
    text cannot hold one) and no lone surrogates (what undecodable bytes of a command line
    become). Checked before any statement, so both backends refuse it the same way."""
    if not isinstance(text, str):
        raise InvalidInput(f"{name} must be text, not {type(text).__name__}")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput(f"{name} is not valid UTF-8 text") from None
    if "\x00" in text:
        raise InvalidInput(f"{name} must not contain NUL characters")
    return size


def quote_userinfo(url: str) -> str:
    """``url`` with the ``#`` and ``?`` of its user and password percent-encoded, which
    libpq decodes back. libpq reads the user info up to the first ``@`` (unless a ``/`` comes
    first), so ``postgresql://app:ab#cd@host/db`` connects; Python's URL parser ends the
    host part at ``#`` (a fragment) or ``?`` (the query), and saw no password there at all:
    it was shown in clear and written into the agent's files."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, after = rest.partition("@")
    if not sep or not at or "/" in userinfo:
        return url
    return f"{scheme}://{userinfo.replace('#', '%23').replace('?', '%3F')}@{after}"


def slashed_password(url: str) -> str | None:
    """The password of ``user:pass/word@host``, a URL whose password holds an unencoded
    ``/``: libpq cannot read it (its user info ends at a ``/``), and neither could the URL
    parser, so it was printed in clear in every error about it. Used for display only; a
    database name holding an ``@`` may look like one and is then over-masked, never shown."""
    _, sep, rest = url.partition("://")
    userinfo, at, _ = rest.partition("@")
    if not sep or not at or "/" not in userinfo or "?" in userinfo:
        return None
    user, colon, password = userinfo.partition(":")
    return password if colon and "/" not in user and password else None


def url_has_password(url: str) -> bool:
    """Whether a database URL carries a password (``user:pw@``, ``?password=``…), which
    must not be written where others read it: a model's context, a project's files."""
    if slashed_password(url):
        return True
    try:
        parts = urllib.parse.urlsplit(quote_userinfo(url))
        keys = [k for k, _ in urllib.parse.parse_qsl(parts.query)]  # as libpq decodes them
        return parts.password is not None or any(names_password(k) for k in keys)
    except ValueError:
        return True  # unreadable: assume the worst


def names_password(key: str) -> bool:
    """A URL query key (as libpq decodes it) that carries a password: ``password``,
    ``sslpassword``… One rule for what is masked on display and kept out of a model's view."""
    return "pass" in key.lower()


def escape_xml(text: str, *, quote: bool = False) -> str:
    """``&``, ``<`` and ``>`` escaped (and quotes, for an attribute's value): text others
    wrote, framed as data inside our own tags. ``xml.sax.saxutils`` does the same, but its
    import cost 25 ms on every command and hook."""
    return html.escape(text, quote=quote)


_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064"
    r"\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
"""Control characters, bidi controls, and what is drawn as nothing: zero-width spaces, the
soft hyphen, the byte order mark and Unicode tag characters (which spell a hidden text a
model reads and a person's terminal does not show)."""


def terminal_safe(text: str) -> str:
    """``text`` with control characters (other than newline and tab) shown as ``\\xNN``, and
    bidirectional controls and invisible characters as ``\\uNNNN``: text written by agents
    or other people must not move the cursor, recolour or retitle the reader's terminal (ANSI
    escapes), show its characters in another order than they are stored, nor hide any."""
    return _CONTROL.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def json_escaped_controls(text: str) -> str:
    """JSON text with the characters :func:`terminal_safe` shows written as ``\\uNNNN``
    escapes (a surrogate pair past U+FFFF): valid JSON still, meaning the same strings (they
    only occur inside strings)."""
    return _CONTROL.sub(_json_escaped, text)


def _json_escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
