"""JSON text the guard takes as JSON, and text made valid for every store.

A result is JSON only when the guard can give back every value of it unchanged
(:func:`exact_loads`): an integer beyond 64 bits, ``NaN``, a number beyond a double or
with more digits than a double holds, and an object with a duplicate key are kept as text,
which loses nothing. A large result is checked part by part (:class:`JsonDoc` with
:func:`exact_loads`), never parsed whole.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

from taskloom.guard.compact import MAX_DEPTH, too_deep
from taskloom.guard.jsondoc import JsonDoc, LazyArray, LazyObject, line_count, members

MAX_INT_CHARS = 100
"""The longest integer read as a number, five times a 64-bit integer's 20 digits: a longer
one is kept as text unread (Python refuses to read one of over 4,300 digits at all)."""
_SHOWN_NUMBER = 40
"""How much of a number a reason repeats."""


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN_NUMBER else text[:_SHOWN_NUMBER] + "…"


def _exact_int(text: str) -> int:
    if len(text) > MAX_INT_CHARS:
        raise ValueError(
            f"it holds an integer of {len(text.lstrip('-')):,} digits ({_shown(text)}), too long"
            " to read as a number"
        )
    value = int(text)
    if not -(2**63) <= value < 2**64:
        raise ValueError(f"it holds an integer beyond 64 bits ({_shown(text)})")
    if str(value) != text:  # "-0" would come back as 0
        raise ValueError(f"it holds {text}, which would be written back as {value}")
    return value


def _exact_float(text: str) -> float:
    """``text`` as a float, if the float holds exactly the value ``text`` writes.

    Only finiteness was checked, so ``12345678901234567890.5`` was shown, read and extracted
    as ``1.2345678901234567e+19`` and ``0.30000000000000000001`` as ``0.3``: values changed.
    Requiring the encoders to write the text back verbatim went too far (``1e-05``, ``1e3``,
    ``1.50`` became text, and JSONPath failed on them): a spelling may change, a value may
    not. The shortest round-trip writers (``repr``, orjson) all give the same decimal value,
    so comparing that value with the text's is enough.
    """
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"it holds a number beyond a double ({_shown(text)})")
    if Decimal(repr(value)) != Decimal(text):
        raise ValueError(f"it holds {_shown(text)}, which would be written back as {value!r}")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"it holds {name}, which is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are distinct: of ``{"a": 1, "a": 2}`` a dict keeps only the last
    value, and the first could no longer be read."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise ValueError(f"an object in it repeats the key {_shown(key)!r}")
            seen.add(key)
    return value


_EXACT = json.JSONDecoder(
    parse_int=_exact_int,
    parse_float=_exact_float,
    parse_constant=_no_constant,
    object_pairs_hook=_unique_keys,
)
"""Built once: a large result is read with it member by member."""


def exact_loads(text: str) -> Any:
    """``json.loads`` that refuses a value it could not give back exactly (``ValueError``)."""
    return _EXACT.decode(text)


def parse_json(text: str) -> Any:
    """The JSON object or array ``text`` holds, if the guard can re-encode it exactly; else
    ``None``, and the output is kept as text, which loses nothing. Integers beyond 64 bits
    (token amounts, say) failed the encoder, ``NaN``, ``Infinity`` or ``1e400`` came out as
    ``null``, and a number with more digits than a double holds came out changed: values the
    model would have been shown changed. A number only spelled otherwise (``1E5``, ``1.50``)
    keeps its value and stays JSON. An object with a duplicate key is text too: parsed, all
    but its last value would be lost."""
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return None
    try:
        value = exact_loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict | list) or too_deep(value):  # past orjson and the walks
        return None
    return value


def why_text(text: str) -> str | None:
    """Why ``text``, which opens as a JSON object or array, is kept as text: it nests too
    deep, holds a number too long to read or one that would come back changed, repeats a
    key, or is no valid JSON (where it breaks). ``None`` when it does not open as JSON, or
    no reason is found."""
    body = text.lstrip("\ufeff \t\r\n")
    if body[:1] not in ("{", "["):
        return None
    deep = f"it nests deeper than {MAX_DEPTH} levels, the deepest JSON read as JSON"
    try:
        value = exact_loads(body)
    except RecursionError:
        return deep
    except json.JSONDecodeError as exc:
        return f"it is not valid JSON: {exc.msg} at char {exc.pos + 1:,}"
    except ValueError as exc:
        return str(exc)
    return deep if too_deep(value) else None


def path_on_text(text: str) -> str:
    """What a JSONPath asked of a text result is told: why the result is text, when it
    opens as JSON, and what reads it instead."""
    why = why_text(text)
    head = (
        f"this result is kept as text, not JSON: {why}" if why else "this result is text, not JSON"
    )
    return (
        f"{head}; so a JSONPath cannot apply. A /regex/ or plain words search it, and"
        " read_result(lines=...) or page=... reads it"
    )


_SURROGATES = re.compile("[\udc80-\udcff]+|[\ud800-\udfff]")
"""A run of escaped bytes (``surrogateescape`` maps byte 0xNN to U+DCNN), or any other lone
surrogate."""


def _replace_surrogates(match: re.Match[str]) -> str:
    run = match.group(0)
    if "\udc80" <= run[0] <= "\udcff":  # the original bytes, decoded as a UTF-8 decoder would
        return run.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return "\ufffd"


def valid_text(text: str) -> str:
    """``text`` as valid UTF-8: an undecodable byte of a subprocess's output (a lone surrogate
    with ``surrogateescape``) becomes one U+FFFD, as no backend stores it. Re-encoding with
    ``surrogatepass`` made three of each, inflating the stored size and the token count.
    A NUL becomes U+FFFD too, on every backend: PostgreSQL cannot store one, so a binary
    output stashed on SQLite could not be moved (``migrate-db``) and failed there outright."""
    if not text.isascii() and _SURROGATES.search(text):
        text = _SURROGATES.sub(_replace_surrogates, text)
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def parse_large(text: str) -> tuple[JsonDoc, int] | None:
    """A large JSON object or array as a :class:`JsonDoc` checked part by part as
    :func:`parse_json` checks the whole (exact values, no duplicate key, at most
    ``MAX_DEPTH`` deep), with the line count of its pretty print; ``None`` if it is not
    one. Members are parsed one at a time."""
    if text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        doc = JsonDoc(text, loads=exact_loads)
        lines = _checked_lines(doc.root(), 1)
    except (ValueError, RecursionError, IndexError):
        return None
    return (doc, lines) if lines is not None else None


def _checked_lines(node: Any, depth: int) -> int | None:
    """The pretty line count of ``node``, every part of it parsed (and so checked) once;
    ``None`` past ``MAX_DEPTH``."""
    if not isinstance(node, LazyObject | LazyArray):
        if too_deep(node, MAX_DEPTH - depth + 1):
            return None
        return line_count(node)
    total = 2
    for _key, member in members(node):
        lines = _checked_lines(member, depth + 1)
        if lines is None:
            return None
        total += lines
    return total
