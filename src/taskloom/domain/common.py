"""Small shared rules of the pure domain: the UNSET marker, timestamps, what text and JSON
are accepted."""

from __future__ import annotations

import enum
import json
import re
import unicodedata
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
        at = f"line {exc.lineno}, column {exc.colno}" if "\n" in text else f"column {exc.colno}"
        raise InvalidInput(f"{what} is not valid JSON: {exc.msg} (at {at})") from None
    except ValueError:  # Python's cap on the digits of an integer
        raise InvalidInput(f"{what} is not valid JSON (a number is too long)") from None


def parse_json_values(text: str) -> list[tuple[int, Any]]:
    """The JSON values ``text`` holds one after another, separated by whitespace or nothing
    (``jq`` prints objects so, each over several lines), each with the line it starts on
    (``\\n`` ends a line). An error names the line and column it is at; a key given twice
    is refused as :func:`parse_json` refuses it, naming the value's line."""
    values: list[tuple[int, Any]] = []
    at, line, counted_to = 0, 1, 0
    while True:
        at = _SPACE.match(text, at).end()  # type: ignore[union-attr]  # matches "" at least
        if at == len(text):
            return values
        line += text.count("\n", counted_to, at)
        counted_to = at
        what = f"line {line}"
        try:
            value, at = json.JSONDecoder(object_pairs_hook=_UniqueKeys(what)).raw_decode(text, at)
        except RecursionError:
            raise InvalidInput(f"{what} is not valid JSON (nested too deeply)") from None
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno} is not valid JSON: {exc.msg} (at column {exc.colno})"
            if exc.pos >= len(text.rstrip()):  # never closed: named by the line it opens on
                where = f"{what} is not valid JSON: {exc.msg} (at the end of the text)"
            raise InvalidInput(where) from None
        except ValueError:  # Python's cap on the digits of an integer
            raise InvalidInput(f"{what} is not valid JSON (a number is too long)") from None
        values.append((line, value))


_SPACE = re.compile(r"[ \t\r\n]*")
"""JSON's whitespace."""


class _UniqueKeys:
    """An object hook refusing a key given twice: otherwise the last one wins in silence, and
    ``{"op": "list", "op": "clear"}`` clears a board."""

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
    ``\x01`` makes a title pass for another's, past the approval gate's look-alike check, and
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
    escape in an agent id would clear the screen of whoever runs ``taskloom tasks list``, and
    a bidi override or a zero-width space make a look-alike id. Joiners (emoji, Persian) and
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
