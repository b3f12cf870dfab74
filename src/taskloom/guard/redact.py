"""Redact credentials from tool output before the guard measures, shows or stores it.

A tool result enters the model's history, the stash table and the summarizer's prompt; the
project's rule is that secrets go into none of them. Two kinds of thing are replaced by
``[redacted]``:

- well-known credential shapes wherever they appear: OpenAI/Anthropic ``sk-…``, GitHub
  ``ghp_``/``gho_``/``ghs_``/``ghu_``/``ghr_``/``github_pat_``, AWS ``AKIA``/``ASIA`` key ids,
  Slack ``xox?-``, Google ``AIza…``, JWTs, PEM private key blocks, the credential after
  ``Bearer``/``Basic``/``Token``, and the password of a ``scheme://user:password@host`` URL;
- the string value of a key whose name says secret (``password``, ``api_key``, ``token``,
  ``private_key``, …), judged by the same helper that keeps secrets out of task payloads:
  in JSON (``"api_key": "…"``), env files (``OPENAI_API_KEY=…``), YAML and headers.

Numbers, booleans and ``null`` are kept (``token_count: 5`` is not a secret), and so is what is
plainly code rather than a value (``token = request.headers[...]``, ``password = ask()``).
Replacements never contain a quote or a backslash, so JSON stays JSON.
"""

from __future__ import annotations

import re
from typing import Any

from taskloom.domain.secrets import looks_secret

REDACTED = "[redacted]"

_TOKEN = r"(?<![\w-])(?:{})(?![\w-])"
_SHAPES = (
    (
        ("-----BEGIN",),
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"
            r"(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s\\]*)",
            re.S,
        ),
    ),
    (("sk-",), re.compile(_TOKEN.format(r"sk-[A-Za-z0-9_-]{20,}"))),
    (
        ("gh", "github_pat_"),
        re.compile(_TOKEN.format(r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}")),
    ),
    (("AKIA", "ASIA"), re.compile(_TOKEN.format(r"(?:AKIA|ASIA)[A-Z0-9]{16}"))),
    (("xox",), re.compile(_TOKEN.format(r"xox[bpasr]-[A-Za-z0-9-]{10,}"))),
    (("AIza",), re.compile(_TOKEN.format(r"AIza[0-9A-Za-z_-]{30,}"))),
    (("eyJ",), re.compile(_TOKEN.format(r"eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]+"))),
)
"""Credential shapes, each searched only in text holding its marker: most output holds none."""
_SCHEME = re.compile(r"\b(Bearer|Basic|Token|Digest)(\s+)(?!\[redacted\])[A-Za-z0-9._~+/=-]{8,}")
_URL_PASSWORD = re.compile(r"(://[^:/\s@\"'\\]+:)[^@\s/\"'\\]+(@)")
_HINT = "pass|pwd|secret|token|auth|credential|cookie|bearer|key|session"
"""Words one of which every key that :func:`looks_secret` accepts contains."""
_CANDIDATE = re.compile(r"(?:" + _HINT + r")[\w.-]*[\"']?[ \t]*[:=]")
"""Where an assignment to a secret-named key may end, searched in lower-cased text: a
case-insensitive search, or one trying the whole pattern at every position, was 10× slower."""
_CANDIDATE_ANY_CASE = re.compile(_CANDIDATE.pattern, re.I)
_ASSIGNMENT = re.compile(
    r"(?<![\w.-])(?P<kq>[\"']?)(?P<key>[A-Za-z_][\w.-]*)(?P=kq)"
    r"(?P<sep>[ \t]*[:=][ \t]*)"
    r"(?:(?P<q>\\?[\"'])(?P<quoted>(?:(?!(?P=q))[^\n\\]|(?!(?P=q))\\[^\n])*)(?P=q)"
    r"|(?P<bare>(?:(?:Bearer|Basic|Token|Digest) )?[^\s\"'`,;&<>(){}\[\]\\]+))"
)
_NOT_SECRET = re.compile(
    r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|none|nil|bearer|basic|token|digest"
    r"|\[redacted\]|\*+|\$\{?\w+\}?"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+",
    re.I,
)
"""Values kept after a secret-named key: numbers, booleans, an auth scheme word, an env
reference, a dotted name."""
_SHELL_KEYS = frozenset({"pwd", "oldpwd"})
"""The shell's working-directory variables: ``PWD=/home/me`` in ``env`` output is a path."""


def _assignment(match: re.Match[str]) -> str:
    key = match.group("key")
    if key.lower() in _SHELL_KEYS or not looks_secret(key):
        return match.group(0)
    value = match.group("quoted") if match.group("q") else match.group("bare")
    if not value or _NOT_SECRET.fullmatch(value) or value.endswith(REDACTED):
        return match.group(0)
    after = match.string[match.end() : match.end() + 1]
    if match.group("bare") is not None and after and after in "([":
        return match.group(0)  # a call or an index: code, not a value
    start, end = match.span("quoted" if match.group("q") else "bare")
    whole = match.group(0)
    offset = match.start()
    return whole[: start - offset] + REDACTED + whole[end - offset :]


def redact_text(text: str) -> tuple[str, int]:
    """``text`` with credentials replaced by ``[redacted]``, and how many were."""
    count = 0
    for markers, pattern in _SHAPES:
        if any(marker in text for marker in markers):
            text, n = pattern.subn(REDACTED, text)
            count += n
    if any(scheme in text for scheme in ("Bearer", "Basic", "Token", "Digest")):
        text, n = _SCHEME.subn(r"\1\2" + REDACTED, text)
        count += n
    if "://" in text:
        text, n = _URL_PASSWORD.subn(r"\1" + REDACTED + r"\2", text)
        count += n
    text, n = _redact_assignments(text)
    return text, count + n


def _redact_assignments(text: str) -> tuple[str, int]:
    lowered = text.lower()
    if len(lowered) == len(text):  # offsets agree (they do unless a letter like İ grows)
        hits = _CANDIDATE.finditer(lowered)
    else:
        hits = _CANDIDATE_ANY_CASE.finditer(text)
    parts: list[str] = []
    done = count = 0
    for hit in hits:
        start = hit.start()
        if start < done:
            continue
        while start > done and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
            start -= 1
        if start > done and text[start - 1] in "\"'":
            start -= 1
        match = _ASSIGNMENT.match(text, start)
        if match is None:
            continue
        out = _assignment(match)
        if out != match.group(0):
            parts += [text[done:start], out]
            done = match.end()
            count += 1
    parts.append(text[done:])
    return "".join(parts), count


def redact_value(value: Any) -> tuple[Any, int]:
    """A copy of a JSON-like value with credentials redacted: every string as in
    :func:`redact_text`, and the whole string value of a key whose name says secret. Call
    it on a value within :data:`~taskloom.guard.compact.MAX_DEPTH` (a cycle never ends)."""
    count = 0

    def scrub(key: Any, item: Any) -> Any:
        nonlocal count
        if not isinstance(item, str):
            return item
        if (
            isinstance(key, str)
            and key.lower() not in _SHELL_KEYS
            and looks_secret(key)
            and item
            and not _NOT_SECRET.fullmatch(item)
        ):
            count += 1
            return REDACTED
        out, n = redact_text(item)
        count += n
        return out

    root: list[Any] = [value]
    pending: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while pending:
        parent, slot, item = pending.pop()
        if isinstance(item, dict):
            copy: Any = dict(item)
            parent[slot] = copy
            pending.extend((copy, k, v) for k, v in item.items())
        elif isinstance(item, list | tuple):
            copy = list(item)
            parent[slot] = copy
            pending.extend((copy, i, v) for i, v in enumerate(item))
        else:
            parent[slot] = scrub(slot if isinstance(parent, dict) else None, item)
    return root[0], count
