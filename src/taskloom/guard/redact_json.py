"""Redaction of JSON by where a value sits: under a secret's key, as an ``Authorization``
value, in a ``{"name": …, "value": …}`` pair (see :mod:`taskloom.domain.redact` for the rules).

:func:`redact_value` copies a parsed value with its credentials redacted;
:func:`redact_json_text` redacts JSON the guard keeps as text in place, only the redacted
tokens changing.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import Any, Literal

from taskloom.domain.lines import line_end, line_start
from taskloom.domain.redact import (
    REDACTED,
    holds_numeric_secret,
    is_permissions_key,
    is_secret_key,
    redact_text,
)

Mode = Literal["secret", "auth"] | None
"""How a string is redacted for where it sits: whole (``"secret"``), its credential after
the scheme word (``"auth"``), or only as text (``None``)."""
_AUTH_HEADERS = frozenset({"authorization", "proxy-authorization"})
_NAME_KEYS = frozenset({"name", "key"})
_SCHEME = re.compile(r"[ \t]*[A-Za-z][A-Za-z0-9._~+/-]*[ \t]+(?=\S)")
"""The scheme word of an ``Authorization`` value (``Bearer ``, ``AWS4-HMAC-SHA256 ``)."""


def is_auth_header(name: str) -> bool:
    """Whether ``name`` is the ``Authorization`` or ``Proxy-Authorization`` header, any case,
    with ``_`` for ``-`` and CGI's ``HTTP_`` prefix (``HTTP_AUTHORIZATION``)."""
    name = name.strip().lower().replace("_", "-")
    return name.removeprefix("http-") in _AUTH_HEADERS


def redact_credential(value: str) -> tuple[str, int]:
    """An ``Authorization`` value with the credential after its scheme word redacted, as
    the text rule has it (``Bearer [redacted]``); the whole value when it has no scheme."""
    if not value.strip() or value.endswith(REDACTED):
        return value, 0
    scheme = _SCHEME.match(value)
    return (scheme.group(0) if scheme else "") + REDACTED, 1


def _redact_string(text: str, mode: Mode) -> tuple[str, int]:
    """A string's redaction where it sits: a secret's value whole, a credential after its
    scheme, anything else as text."""
    if mode == "secret":
        return (text, 0) if not text or text == REDACTED else (REDACTED, 1)
    if mode == "auth":
        return redact_credential(text)
    return redact_text(text)


def _key_mode(key: Any, scopes: bool) -> Mode:
    return None if scopes or not isinstance(key, str) else _name_mode(key)


@functools.lru_cache(maxsize=4096)
def _name_mode(name: str) -> Mode:
    """How the value of a key or a header named ``name`` is redacted. Cached: a large
    result repeats a few keys a million times, and reading a key's words is not cheap."""
    if is_auth_header(name):
        return "auth"
    return "secret" if is_secret_key(name) else None


def _named_mode(pairs: list[tuple[Any, Any]]) -> Mode:
    """The mode of the ``value`` of a ``{"name": …, "value": …}`` object: a HAR header, a
    Kubernetes ``env`` entry, a Postman ``{"key": …}``."""
    names = [v for k, v in pairs if isinstance(k, str) and k.lower() in _NAME_KEYS]
    if len(names) != 1 or not isinstance(names[0], str):
        return None
    return _key_mode(names[0], False)


def object_modes(pairs: list[tuple[Any, Any]], slot: Any) -> list[Mode]:
    """The mode of each value of a JSON object, given as its (key, value) pairs in order;
    ``slot`` is the object's own key (the keys of a ``permissions`` object are scopes)."""
    scopes = isinstance(slot, str) and is_permissions_key(slot)
    named = _named_mode(pairs) if not scopes else None
    modes = [_key_mode(key, scopes) for key, _value in pairs]
    if named is not None:
        modes = [
            named if isinstance(k, str) and k.lower() == "value" else mode
            for (k, _v), mode in zip(pairs, modes, strict=True)
        ]
    return modes


def list_modes(items: list[Any], inherited: Mode) -> list[Mode]:
    """The mode of each item of a JSON array: its parent's (a list of secrets is secret),
    and for an ``["Authorization", "Bearer …"]`` pair, the credential of the second."""
    modes = [inherited] * len(items)
    if len(items) == 2 and isinstance(items[0], str) and is_auth_header(items[0]):
        modes[1] = "auth"
    for start, end in _key_lines(items):
        modes[start:end] = ["secret"] * (end - start)
    return modes


_PEM_BEGIN = re.compile(r"[ \t]*-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[ \t\r\n]*")
_PEM_END = re.compile(r"[ \t]*-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----[ \t\r\n]*")
_PEM_BODY = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+: [^\r\n]*)[ \t\r\n]*")


def _key_lines(items: list[Any]) -> Iterable[tuple[int, int]]:
    """The spans of a private key written as an array of its lines (``["-----BEGIN RSA
    PRIVATE KEY-----", "MIIE…", …, "-----END RSA PRIVATE KEY-----"]``): its BEGIN line, the
    base64 and header lines after it and its END line, each line a string of its own that
    the text rule, reading one string at a time, never sees as a key."""
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, str) and _PEM_BEGIN.fullmatch(item):
            j = i + 1
            while j < len(items) and isinstance(items[j], str):
                if _PEM_END.fullmatch(items[j]):
                    j += 1
                    break
                if not _PEM_BODY.fullmatch(items[j]):
                    break
                j += 1
            if j > i + 1:
                yield i, j
            i = j
        else:
            i += 1


def redact_value(value: Any) -> tuple[Any, int]:
    """A copy of a JSON-like value with credentials redacted: every string as in
    :func:`redact_text`, every string under a key that names a secret
    (:func:`is_secret_key`), in a list too, a number under a password's or a secret's key
    (:func:`holds_numeric_secret`), every key as text, and the credential of every
    ``Authorization`` value (module docs). Call it on a value within
    :data:`~taskloom.guard.compact.MAX_DEPTH` (a cycle never ends)."""
    count = 0
    root: list[Any] = [value]
    pending: list[tuple[Any, Any, Any, Mode]] = [(root, 0, value, None)]
    while pending:
        parent, slot, item, mode = pending.pop()
        if isinstance(item, dict):
            pairs = list(item.items())
            modes = object_modes(pairs, slot)
            keys, n = _redact_keys([key for key, _value in pairs])
            count += n
            copy: Any = dict(zip(keys, item.values(), strict=True))
            parent[slot] = copy
            pending.extend(
                (copy, k, v, m) for k, (_k, v), m in zip(keys, pairs, modes, strict=True)
            )
        elif isinstance(item, list | tuple):
            copy = list(item)
            parent[slot] = copy
            modes = list_modes(copy, mode)
            pending.extend((copy, i, copy[i], m) for i, m in enumerate(modes))
        elif isinstance(item, str):
            parent[slot], n = _redact_string(item, mode)
            count += n
        elif mode == "secret" and _is_numeric_secret(slot, item):
            parent[slot] = REDACTED
            count += 1
    return root[0], count


def _is_numeric_secret(key: Any, value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and isinstance(key, str) and holds_numeric_secret(key)


@functools.lru_cache(maxsize=4096)
def _redact_key(key: str) -> tuple[str, int]:
    """A key redacted as text: a token used as a key (``{"ghp_…": {…}}``) is a token. Cached
    like :func:`_name_mode`."""
    return redact_text(key)


def _redact_keys(keys: list[Any]) -> tuple[list[Any], int]:
    """An object's keys redacted as text, and how many were; two redacted alike stay apart
    (``[redacted]``, ``[redacted] 2``), so that neither value is lost."""
    redacted = [_redact_key(key) if isinstance(key, str) else (key, 0) for key in keys]
    count = sum(n for _key, n in redacted)
    if not count:
        return keys, 0
    taken = {key for key, (_new, n) in zip(keys, redacted, strict=True) if not n}
    last: dict[str, int] = {}
    out: list[Any] = []
    for key, (new, n) in zip(keys, redacted, strict=True):
        name = new if n else key
        while n and name in taken:
            last[new] = last.get(new, 1) + 1
            name = f"{new} {last[new]}"
        taken.add(name)
        out.append(name)
    return out, count


class _Pairs(list[tuple[Any, Any]]):
    """A JSON object as its (key, value) pairs in order, a duplicate key kept."""


_NUMBER = object()
"""What a number or a constant parses to: only strings and structure matter here."""
_STRING_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.S)
"""A JSON string token. Outside strings valid JSON holds no quote, so the n-th match of
this in a document is its n-th string, key or value."""


_AUTH_NAME = re.compile(r'"(?i:(?:http[-_])?(?:proxy[-_])?authorization)"')
"""An ``Authorization`` string, which may start an ``["Authorization", …]`` pair."""


def _number(_text: str) -> object:
    return _NUMBER


_PAIRS = json.JSONDecoder(
    object_pairs_hook=_Pairs, parse_int=_number, parse_float=_number, parse_constant=_number
)
"""Reads JSON with every object as :class:`_Pairs`; built once, as each of a large result's
members and each line of JSON Lines is read with it."""


def _parse_pairs(text: str) -> Any:
    """``text`` as JSON with every object as :class:`_Pairs`, or ``None`` if it is none.
    Numbers are not read, so no value is out of range."""
    if text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        return _PAIRS.decode(text)
    except (ValueError, RecursionError):
        return None


def _keys(root: Any) -> set[str]:
    """Every key of a document read by :func:`_parse_pairs`."""
    keys: set[str] = set()
    pending = [root]
    while pending:
        node = pending.pop()
        if isinstance(node, _Pairs):
            for key, value in node:
                keys.add(key)
                if isinstance(value, list):
                    pending.append(value)
        elif isinstance(node, list):
            pending.extend(value for value in node if isinstance(value, list))
    return keys


_KEY_TOKEN = object()
TokenMode = Mode | Literal["number"]
"""The mode of a string token; ``"number"``: a key whose number value is redacted."""
_NUMBER_VALUE = re.compile(r"[ \t\r\n]*:[ \t\r\n]*(-?\d[\d.eE+-]*)")
"""The number after a key's token (``NaN`` and ``Infinity`` are no secrets)."""


def _key_mark(key: str, value: Any, mode: Mode) -> TokenMode:
    return "number" if value is _NUMBER and mode == "secret" and holds_numeric_secret(key) else None


def _token_modes(root: Any) -> list[TokenMode]:
    """The mode of every string token of a parsed document, keys included, in the order
    they are written; a key is redacted never, its number value may be."""
    modes: list[TokenMode] = []
    pending: list[tuple[Any, Any, TokenMode]] = [(root, None, None)]
    while pending:
        node, slot, mode = pending.pop()
        if node is _KEY_TOKEN or isinstance(node, str):
            modes.append(mode)
        elif isinstance(node, _Pairs):
            children: Iterable[tuple[Any, Any, TokenMode]] = (
                item
                for (key, value), m in zip(node, object_modes(node, slot), strict=True)
                for item in ((_KEY_TOKEN, None, _key_mark(key, value, m)), (value, key, m))
            )
            pending.extend(reversed(list(children)))
        elif isinstance(node, list):
            modes_ = list_modes(node, None if mode == "number" else mode)
            pending.extend(reversed([(v, None, m) for v, m in zip(node, modes_, strict=True)]))
    return modes


def _may_redact(text: str, keys: set[str]) -> bool:
    """Whether a document with these keys may hold a value to redact by where it sits:
    the walk of every token is skipped for the many that cannot."""
    if any(_name_mode(key) for key in keys):
        return True
    lowered = {key.lower() for key in keys}
    if not _NAME_KEYS.isdisjoint(lowered) and "value" in lowered:
        return True
    return _AUTH_NAME.search(text) is not None


def redact_json_text(text: str) -> tuple[str, int]:
    """``text`` with the key-based redaction of :func:`redact_value` applied in place, when
    it is JSON the guard keeps as text (an integer beyond 64 bits, ``NaN``, a duplicate
    key): such a document lost every JSON-key redaction. Only the string tokens redacted
    change; the rest of the text stays exactly as the tool wrote it."""
    root = _parse_pairs(text)
    if root is None:
        return text, 0
    return _redact_document(text, root)


def redact_json_output(text: str) -> tuple[str, int]:
    """A text output redacted by key in place: as :func:`redact_json_text` when it is one
    JSON document, else each of its lines that is one (JSON Lines: a log's records, the
    output of ``jq -c``), so a ``"password"`` in a record is redacted as in a document."""
    root = _parse_pairs(text)
    if root is not None:
        return _redact_document(text, root)
    return _redact_json_lines(text)


_KEY = re.compile(r'"((?:[^"\\\n]++|\\.)*+)"[ \t]*:')
"""What may be a key of a JSON object written on one line, quotes and colon around it."""


def _decoded_key(raw: str) -> str:
    if "\\" not in raw:
        return raw
    try:
        return str(json.loads(f'"{raw}"'))
    except ValueError:
        return raw


def _lines_to_parse(text: str) -> re.Pattern[str] | None:
    """What marks a line worth parsing as a JSON document: one of the keys it may redact by
    (a secret's, an ``Authorization``, the ``value`` of a name-value object), or ``None``
    when the text holds none. Most JSON Lines outputs hold none and are parsed not at all."""
    raw = {m.group(1) for m in _KEY.finditer(text)}
    keys = {key: _decoded_key(key) for key in raw}
    hot = {key for key, name in keys.items() if _name_mode(name)}
    lowered = {name.lower() for name in keys.values()}
    if not _NAME_KEYS.isdisjoint(lowered) and "value" in lowered:
        hot.update(key for key, name in keys.items() if name.lower() == "value")
    marks = [f'"{re.escape(key)}"[ \\t]*:' for key in sorted(hot)]
    if _AUTH_NAME.search(text):
        marks.append(_AUTH_NAME.pattern)
    return re.compile("|".join(marks)) if marks else None


def _redact_json_lines(text: str) -> tuple[str, int]:
    """Each line of ``text`` (ended as :mod:`taskloom.domain.lines` says: LF, CRLF or a
    lone CR) that is one JSON object or array, redacted as a document; only the lines
    :func:`_lines_to_parse` marks are parsed, and the rest stays as written."""
    marks = _lines_to_parse(text) if "\n" in text or "\r" in text else None
    if marks is None:
        return text, 0
    out: list[str] = []
    last = count = done = 0
    for mark in marks.finditer(text):
        if mark.start() < done:
            continue
        start = line_start(text, 0, mark.start())
        done = end = line_end(text, mark.end())
        line = text[start:end]
        if line.lstrip()[:1] not in ("{", "["):
            continue
        new, n = redact_json_text(line)
        if n:
            out.append(text[last:start] + new)
            last, count = end, count + n
    return "".join([*out, text[last:]]), count


def _redact_document(text: str, root: Any) -> tuple[str, int]:
    """The key-based redaction of the document ``text``, parsed as ``root``."""
    if not _may_redact(text, _keys(root)):
        return text, 0
    modes = _token_modes(root)
    if not any(modes):
        return text, 0
    out: list[str] = []
    last = count = 0
    for mode, token in zip(modes, _STRING_TOKEN.finditer(text), strict=False):
        if mode == "number":
            number = _NUMBER_VALUE.match(text, token.end())
            if number:
                out.append(f'{text[last : number.start(1)]}"{REDACTED}"')
                last = number.end(1)
                count += 1
        elif mode is not None:
            raw = token.group(0)[1:-1]  # escapes and all: the scheme word has none
            new, n = _redact_string(raw, mode)
            if n:
                out.append(text[last : token.start() + 1] + new)
                last = token.end() - 1
                count += n
    return "".join([*out, text[last:]]), count
