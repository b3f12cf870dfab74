"""Whether a key names a secret, for a task's payload, which refuses such keys. Judged by the
key's words, so that ``max_tokens``, ``author`` or ``next_page_token`` pass; a false match
costs the producer a rename (the guard's redaction, where it would cost a value, uses a
stricter test: :func:`taskloom.domain.redact.is_secret_key`)."""

from __future__ import annotations

import itertools
import re

_SECRET_WORDS = frozenset(
    {
        "pass",
        "pwd",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "cookie",
        "cookies",
        "bearer",
        "jwt",
        "jwts",
        "pwds",
        "oauth",
    }
)
_SECRET_ENDINGS = (
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "secret",
    "secrets",
    "apikey",
    "apikeys",
    "apitoken",
    "apitokens",
    "authtoken",
    "accesstoken",
    "refreshtoken",
    "accesskey",
    "privatekey",
    "privkey",
    "sessionid",
    "sessionkey",
    "signingkey",
    "sshkey",
    "sshkeys",
    "privkeys",
    "privatekeys",
    "secretkey",
    "secretkeys",
    "sessionids",
    "passphrases",
    "pwd",
    "dbpass",
    "pgpass",
    "rootpass",
    "adminpass",
    "userpass",
    "mysqlpass",
    "smtppass",
)
"""Secret names written as one word (``PGPASSWORD``, ``apikeys``, ``dbpassword``)."""
_SECRET_PAIRS = frozenset(
    {
        ("api", "key"),
        ("api", "token"),
        ("access", "key"),
        ("access", "token"),
        ("private", "key"),
        ("session", "id"),
        ("session", "key"),
        ("signing", "key"),
        ("encryption", "key"),
        ("ssh", "key"),
        ("deploy", "key"),
        ("consumer", "key"),
        ("master", "key"),
        ("license", "key"),
    }
)
"""Two words that name a secret together; the second also in the plural (``api_keys``)."""
_NOT_SECRET_TOKEN = frozenset(
    {"count", "limit", "budget", "usage", "used", "total", "max", "min", "num", "number"}
    | {"page", "next", "prev", "previous", "continuation", "sync", "resume", "cursor", "type"}
    | {"pagination", "starting", "after", "before", "since"}
)
"""Words that make ``token`` a count (``token_count``, ``max_token``), as ``tokens`` is, or a
place in a listing (``next_page_token``, ``continuation_token``): redacted, a model could not
ask for the next page."""
_ABOUT_A_SECRET = frozenset(
    {"name", "names", "arn", "id", "ids", "path", "file", "url", "uri", "endpoint", "type"}
    | {"method", "format", "policy", "rate", "count", "required", "lifetime", "audience"}
    | {"consent", "scanning", "protection", "hint", "length", "expiry", "version", "ref"}
)
"""Last words that make a key about a secret, not one: ``secret_name``, ``token_url``,
``credentials_path``, ``auth_method``, ``password_policy`` hold a reference or a setting (the
refusal asks for just such references)."""
_FLAG_WORDS = frozenset(
    {"has", "is", "use", "enable", "persist", "always", "create", "unset", "output", "require"}
)
"""First words that make a key a switch: ``has_password``, ``persist-credentials``."""
_QUALIFIED_TOKENS = frozenset(
    {"refresh", "access", "auth", "api", "bot", "id", "github", "session", "bearer"}
)
"""Words that make ``tokens`` secrets rather than a count: ``refresh_tokens``."""
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_KEY_WORDS_CAPS_FIRST = re.compile(r"[A-Z]{2,}(?=[a-z])|[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
"""The other reading of capitals run into a word: ``APIkey`` as ``API`` + ``key`` (the first
reads ``AP`` + ``Ikey``, and ``PASSword`` as ``PAS`` + ``Sword``: no secret in either)."""


def key_readings(key: str) -> set[tuple[str, ...]]:
    """The ways to read ``key`` as lower-case words: ``apiKey`` one way, ``APIkey`` two."""
    return {
        tuple(w.lower() for w in pattern.findall(key))
        for pattern in (_KEY_WORDS, _KEY_WORDS_CAPS_FIRST)
    }


def looks_secret(key: str) -> bool:
    """Whether a payload key names a secret, judged by its words (``apiKey``, ``AUTH_TOKEN``,
    ``x-api-key``, ``PGPASSWORD``, ``APIkey``) so that ``max_tokens``, ``token_count`` or
    ``author`` are not mistaken for one."""
    return any(_secret_words(list(words)) for words in key_readings(key))


def _secret_words(words: list[str]) -> bool:
    if len(words) > 1 and (words[-2], words[-1].removesuffix("s")) in _SECRET_PAIRS:
        return True  # session_id: a pair names it, though "id" alone says "about"
    if len(words) > 1 and (words[-1] in _ABOUT_A_SECRET or words[0] in _FLAG_WORDS):
        return False
    for at, word in enumerate(words):
        if word == "tokens" and at and words[at - 1] in _QUALIFIED_TOKENS:
            return True
        if word == "token":
            if _NOT_SECRET_TOKEN.isdisjoint(words[max(at - 1, 0) : at + 2]):
                return True
        elif word in _SECRET_WORDS or word.endswith(_SECRET_ENDINGS):
            return True
    return any((a, b.removesuffix("s")) in _SECRET_PAIRS for a, b in itertools.pairwise(words))
