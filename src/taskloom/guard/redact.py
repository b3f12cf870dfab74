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
  but for the keys of a ``permissions`` object (GitHub's ``"secrets": "read"``).

Code is left alone (``password = ask()``, ``token := getenv()``, ``password: string``), and
so are names that only contain such a word (``secretName``, ``tokenUrl``, ``password_policy``,
``nextPageToken``), and so are a model's tokens (``max_tokens``, ``special_tokens``).
Replacements never contain a quote or a backslash, so JSON stays JSON. Every pattern runs in
time linear in the output.
"""

from __future__ import annotations

import re
from typing import Any

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


def redact_value(value: Any) -> tuple[Any, int]:
    """A copy of a JSON-like value with credentials redacted: every string as in
    :func:`redact_text`, and every string under a key that names a secret
    (:func:`is_secret_key`), in a list too. Call it on a value within
    :data:`~taskloom.guard.compact.MAX_DEPTH` (a cycle never ends)."""
    count = 0
    root: list[Any] = [value]
    pending: list[tuple[Any, Any, Any, bool]] = [(root, 0, value, False)]
    while pending:
        parent, slot, item, secret = pending.pop()
        if isinstance(item, dict):
            copy: Any = dict(item)
            parent[slot] = copy
            scopes = isinstance(slot, str) and _is_permissions_key(slot)
            pending.extend(
                (copy, k, v, not scopes and isinstance(k, str) and is_secret_key(k))
                for k, v in item.items()
            )
        elif isinstance(item, list | tuple):
            copy = list(item)
            parent[slot] = copy
            pending.extend((copy, i, v, secret) for i, v in enumerate(item))
        elif isinstance(item, str) and secret and item and item != REDACTED:
            parent[slot] = REDACTED
            count += 1
        elif isinstance(item, str):
            parent[slot], n = redact_text(item)
            count += n
    return root[0], count
