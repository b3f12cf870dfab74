"""Redact credentials from the tool output the guard stores, before it is stored or shown.

A stashed result goes into the stash table, the placeholder's preview, the summarizer's prompt
and every read back; the project's rule is that secrets go into none of them. Only what is a
credential beyond doubt is replaced by ``[redacted]``, since anything else replaced is data
lost (a stored copy is what the model reads back and may write back into a file):

- credential shapes: OpenAI/Anthropic ``sk-…`` keys, GitHub ``ghp_``/``gho_``/``ghs_``/
  ``ghu_``/``ghr_``/``github_pat_`` tokens, npm ``npm_…`` tokens, AWS ``AKIA``/``ASIA`` key
  ids, Slack ``xox?-…``, Google ``AIza…``, JWTs, and PEM private key blocks;
- the credential of an ``Authorization:`` header (any case, any scheme), and the password of a
  ``scheme://user:password@host`` URL;
- the value of an environment line (``DB_PASSWORD=…``, ``export API_TOKEN=…``, an upper-case
  name at the start of a line) or a command-line flag (``--password=…``) whose name ends in
  a secret's name;
- in JSON, the string values under a key whose name ends in a secret's name or its plural
  (``password``, ``api_key``, ``clientSecret``, ``refresh_tokens``…), lists of them included,
  but for the keys of a ``permissions`` object (GitHub's ``"secrets": "read"``);
- in JSON, the credential of an ``Authorization`` or ``Proxy-Authorization`` value, its
  scheme word kept (``"Bearer [redacted]"``): under such a key (any case), as the ``value``
  of a ``{"name": "Authorization", "value": …}`` object (HAR; a ``name`` that is a secret's
  key, as in a Kubernetes ``env`` entry, redacts the whole value) and as the second item of
  an ``["Authorization", …]`` pair.

JSON the guard keeps as text (a number beyond a double, a duplicate key) gets the same
key-based redaction in place (:func:`redact_json_text`): only the redacted string tokens of
the text change, every other character stays as the tool wrote it.

Code is left alone (``password = ask()``, ``token := getenv()``, ``password: string``), and
so are names that only contain such a word (``secretName``, ``tokenUrl``, ``password_policy``,
``nextPageToken``), and so are a model's tokens (``max_tokens``, ``special_tokens``).
Replacements never contain a quote or a backslash, so JSON stays JSON. Every pattern runs in
time linear in the output.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import Any, Literal

from taskloom.domain.secrets import key_readings

REDACTED = "[redacted]"

_TOKEN = r"(?<![\w-])(?:{})(?![\w-])"
_PEM = re.compile(
    r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY-----"
    r"(?:(?:\\[nr]|[\r\n])+(?:[A-Za-z0-9+/=]+|[A-Za-z-]+: [^\r\n\\\"]*))+"
    r"(?:(?:\\[nr]|[\r\n])+-----END ([A-Z0-9]+ )*PRIVATE KEY-----)?"
)
"""A key block, header lines and base64 lines only (as text or as a JSON string's escapes):
a BEGIN marker in one log line and an END marker in a later one are not a key between."""
_SHAPES = (
    (("-----BEGIN",), _PEM),
    (("sk-",), re.compile(_TOKEN.format(r"sk-[A-Za-z0-9_-]{20,}"))),
    (
        ("gh", "github_pat_"),
        re.compile(_TOKEN.format(r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,}")),
    ),
    (("npm_",), re.compile(_TOKEN.format(r"npm_[A-Za-z0-9]{36}"))),
    (("AKIA", "ASIA"), re.compile(_TOKEN.format(r"(?:AKIA|ASIA)[A-Z0-9]{16}"))),
    (("xox",), re.compile(_TOKEN.format(r"xox[bpasr]-[A-Za-z0-9-]{10,}"))),
    (("AIza",), re.compile(_TOKEN.format(r"AIza[0-9A-Za-z_-]{35}"))),
    (("eyJ",), re.compile(_TOKEN.format(r"eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]+"))),
)
"""Credential shapes, each searched only in text holding its marker: most output holds none."""
_HEADER = re.compile(
    r"(?i)(\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:bearer|basic|token|digest"
    r"|negotiate)[ \t]+)?)(?!\[redacted\])[A-Za-z0-9._~+/=-]{6,}"
)
_URL_PASSWORD = re.compile(r"(://[^:/\s@\"'\\]+:)(?!\[redacted\])[^@\s/\"'\\]+(@)")
_SECRET_NAME = (
    r"(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|SECRET_?KEY|ACCESS_?KEY"
    r"|CREDENTIALS?|AUTH)"
)
_ENV_LINE = re.compile(
    rf"(?m)^([ \t]*(?:export[ \t]+)?[A-Z0-9_]*{_SECRET_NAME}=)(?![\"']?\$)(?!\[redacted\])"
    r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']+)"
)
"""``NAME=value`` at the start of a line, no spaces around ``=`` (a shell's, an env file's,
``docker inspect``'s): code assigns with spaces. A ``$REFERENCE`` is not a secret."""
_FLAG = re.compile(
    r"(?i)((?<![\w-])--?[a-z-]*(?:password|passwd|secret|token|api-key|apikey)=)(?!\[redacted\])"
    r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']+)"
)
_NPMRC = re.compile(r"(:_(?:authToken|auth|password)=)(?!\[redacted\])(\S+)")
"""An ``.npmrc`` registry credential (``//registry.npmjs.org/:_authToken=…``)."""
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SECRET_LAST_WORDS = frozenset(
    {"password", "passwd", "passphrase", "secret", "token", "apikey", "jwt", "credential"}
)
_SECRET_LAST_PAIRS = frozenset(
    {("api", "key"), ("private", "key"), ("secret", "key"), ("access", "key")}
)
_NOT_SECRET_TOKEN = frozenset({"page", "next", "prev", "continuation", "sync", "cursor", "csrf"})
"""``next_page_token`` is a place in a listing: redacted, a model could not ask for the next
page (a CSRF token is good for one form, and shows in every page's HTML)."""
_MODEL_TOKENS = frozenset(
    {"max", "min", "total", "prompt", "completion", "input", "output", "cache", "cached",
     "reasoning", "prediction", "audio", "text", "image", "num", "n", "new", "remaining",
     "context", "generated", "special", "added", "stop"}
)  # fmt: skip
"""Words before ``tokens`` that make it a model's tokens, not credentials: a count
(``max_tokens``, ``prompt_tokens``, ``cache_read_input_tokens``) or a tokenizer's vocabulary
(``special_tokens``, ``stop_tokens``), which redacted would be data lost."""


def is_secret_key(key: str) -> bool:
    """Whether a JSON key names a secret by its last word, singular or plural (``password``,
    ``clientSecrets``, ``api_key``, ``refresh_tokens``, ``privateKey``), not merely contains one
    (``secretName``, ``password_policy``, ``tokenUrl``). Stricter than the payload check
    (:func:`taskloom.domain.secrets.looks_secret`): there a false match costs a rename,
    here a value."""
    return any(_names_a_secret(list(words)) for words in key_readings(key))


def _names_a_secret(words: list[str]) -> bool:
    if not words:
        return False
    if words == ["auth"]:  # a registry login in Docker's config.json
        return True
    last = words[-1]
    one = last.removesuffix("s")  # a list of secrets is as secret as one
    if one == "token":
        return _is_credential_token(words[-3:-1], plural=last != one)
    if last in _SECRET_LAST_WORDS or one in _SECRET_LAST_WORDS:
        return True
    return len(words) > 1 and (words[-2], one) in _SECRET_LAST_PAIRS


def _is_credential_token(before: list[str], *, plural: bool) -> bool:
    """Whether ``token``/``tokens`` after the words ``before`` is a credential: not a place in
    a listing (``next_page_token``) nor, plural, a model's tokens (``max_tokens``)."""
    if not _NOT_SECRET_TOKEN.isdisjoint(before):
        return False
    return not plural or not before or before[-1] not in _MODEL_TOKENS


def _is_permissions_key(key: str) -> bool:
    """Whether ``key`` holds a permissions object, whose keys name what may be reached and
    whose values are access levels: GitHub's ``{"secrets": "read", "id-token": "write"}``."""
    words = _KEY_WORDS.findall(key)
    return bool(words) and words[-1].lower() == "permissions"


def redact_text(text: str) -> tuple[str, int]:
    """``text`` with credentials replaced by ``[redacted]``, and how many were."""
    count = 0
    for markers, pattern in _SHAPES:
        if any(marker in text for marker in markers):
            text, n = pattern.subn(REDACTED, text)
            count += n
    for hint, pattern in (("uthorization", _HEADER), ("UTHORIZATION", _HEADER)):
        if hint in text:
            text, n = pattern.subn(r"\1" + REDACTED, text)
            count += n
            break
    if "://" in text:
        text, n = _URL_PASSWORD.subn(r"\1" + REDACTED + r"\2", text)
        count += n
    if "=" in text:
        for pattern in (_ENV_LINE, _FLAG, _NPMRC):
            text, n = pattern.subn(r"\1" + REDACTED, text)
            count += n
    return text, count


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
    scopes = isinstance(slot, str) and _is_permissions_key(slot)
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
    return modes


def redact_value(value: Any) -> tuple[Any, int]:
    """A copy of a JSON-like value with credentials redacted: every string as in
    :func:`redact_text`, every string under a key that names a secret
    (:func:`is_secret_key`), in a list too, and the credential of every ``Authorization``
    value (module docs). Call it on a value within
    :data:`~taskloom.guard.compact.MAX_DEPTH` (a cycle never ends)."""
    count = 0
    root: list[Any] = [value]
    pending: list[tuple[Any, Any, Any, Mode]] = [(root, 0, value, None)]
    while pending:
        parent, slot, item, mode = pending.pop()
        if isinstance(item, dict):
            copy: Any = dict(item)
            parent[slot] = copy
            pairs = list(item.items())
            modes = object_modes(pairs, slot)
            pending.extend((copy, k, v, m) for (k, v), m in zip(pairs, modes, strict=True))
        elif isinstance(item, list | tuple):
            copy = list(item)
            parent[slot] = copy
            modes = list_modes(copy, mode)
            pending.extend((copy, i, copy[i], m) for i, m in enumerate(modes))
        elif isinstance(item, str):
            parent[slot], n = _redact_string(item, mode)
            count += n
    return root[0], count


class _Pairs(list[tuple[Any, Any]]):
    """A JSON object as its (key, value) pairs in order, a duplicate key kept."""


_NUMBER = object()
"""What a number or a constant parses to: only strings and structure matter here."""
_STRING_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
"""A JSON string token. Outside strings valid JSON holds no quote, so the n-th match of
this in a document is its n-th string, key or value."""


_AUTH_NAME = re.compile(r'"(?i:(?:http[-_])?(?:proxy[-_])?authorization)"')
"""An ``Authorization`` string, which may start an ``["Authorization", …]`` pair."""


def _parse_pairs(text: str, keys: set[str]) -> Any:
    """``text`` as JSON with every object as :class:`_Pairs`, or ``None`` if it is none;
    ``keys`` gets every key it holds. Numbers are not read, so no value is out of range."""
    if text.lstrip()[:1] not in ("{", "["):
        return None

    def pairs(items: list[tuple[str, Any]]) -> _Pairs:
        keys.update(dict(items))
        return _Pairs(items)

    try:
        return json.loads(
            text,
            object_pairs_hook=pairs,
            parse_int=lambda _s: _NUMBER,
            parse_float=lambda _s: _NUMBER,
            parse_constant=lambda _s: _NUMBER,
        )
    except (ValueError, RecursionError):
        return None


_KEY_TOKEN = object()


def _token_modes(root: Any) -> list[Mode]:
    """The mode of every string token of a parsed document, keys (never redacted) included,
    in the order they are written."""
    modes: list[Mode] = []
    pending: list[tuple[Any, Any, Mode]] = [(root, None, None)]
    while pending:
        node, slot, mode = pending.pop()
        if node is _KEY_TOKEN or isinstance(node, str):
            modes.append(None if node is _KEY_TOKEN else mode)
        elif isinstance(node, _Pairs):
            children: Iterable[tuple[Any, Any, Mode]] = (
                item
                for (key, value), m in zip(node, object_modes(node, slot), strict=True)
                for item in ((_KEY_TOKEN, None, None), (value, key, m))
            )
            pending.extend(reversed(list(children)))
        elif isinstance(node, list):
            modes_ = list_modes(node, mode)
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
    keys: set[str] = set()
    root = _parse_pairs(text, keys)
    if root is None or not _may_redact(text, keys):
        return text, 0
    modes = _token_modes(root)
    if not any(modes):
        return text, 0
    out: list[str] = []
    last = count = 0
    for mode, token in zip(modes, _STRING_TOKEN.finditer(text), strict=False):
        if mode is None:
            continue
        raw = token.group(0)[1:-1]  # escapes and all: the scheme word has none
        new, n = _redact_string(raw, mode)
        if n:
            out.append(text[last : token.start() + 1] + new)
            last = token.end() - 1
            count += n
    return "".join([*out, text[last:]]), count
