"""PostgreSQL URLs: read the way libpq reads them, and their passwords kept out of sight.

A URL holds taskloom's own pool options besides libpq's, and often a password. The password
must never be shown (``tl.url``, CLI output), written where others read it, echoed in an
error (libpq quotes what it cannot read of a URL) or logged (psycopg's pool logs libpq's
reasons). Python's URL parser and libpq disagree on where a password ends, so the user info
is first made readable to the former as the latter reads it (:func:`quote_userinfo`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit, urlunsplit


def quote_userinfo(url: str) -> str:
    """``url`` with the ``#`` and ``?`` of its user and password percent-encoded, which
    libpq decodes back. libpq reads the user info up to the first ``@`` (unless a ``/`` comes
    first), so ``postgresql://app:ab#cd@host/db`` connects; Python's URL parser ends the
    host part at ``#`` (a fragment) or ``?`` (the query), and would see no password there."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, after = rest.partition("@")
    if not sep or not at or "/" in userinfo:
        return url
    return f"{scheme}://{userinfo.replace('#', '%23').replace('?', '%3F')}@{after}"


_PARAM = r"[\w%.~-]+=[^&#]*"
_AFTER_USERINFO = re.compile(rf"[^@/?#]*(?:/[^@/?#]*)?(?:\?(?:{_PARAM}(?:&{_PARAM})*)?)?")
"""What may follow a URL's user info: hosts, a database name, ``key=value`` parameters."""


def written_password(url: str) -> str | None:
    """The password of ``user:pass@word@host``, ``user:pass/word@host`` or
    ``user:p@ss#word@host``: a URL whose password holds an unencoded ``/``, or an ``@``
    with anything after it. libpq ends the user info at the first ``@`` or ``/`` and reads
    the rest as hosts, a database name and parameters, quoting pieces of the password in its
    errors; the URL parser ends the host part at the first ``/``, ``?`` or ``#``. The
    password runs to the first ``@`` after which the rest reads as hosts, a database name and
    ``key=value`` parameters. Used for display and scrubbing only; a database name or a
    parameter holding an ``@`` may look like part of one and is then over-masked, never
    shown."""
    _, sep, rest = url.partition("://")
    at = rest.find("@") if sep else -1
    while at != -1 and not _AFTER_USERINFO.fullmatch(rest, at + 1):
        at = rest.find("@", at + 1)
    user, colon, password = rest[: max(at, 0)].partition(":")
    if not colon or not password or any(c in user for c in "/?#"):
        return None
    return password if "/" in password or "@" in password else None


def password_pieces(password: str) -> list[str]:
    """``password`` and every run of it between its ``@``, ``/``, ``?`` and ``#``: libpq
    reads such a password in pieces, as a host name, a database name or a parameter."""
    cuts = [i for i, c in enumerate(password) if c in "@/?#"]
    starts, ends = [0, *(i + 1 for i in cuts)], [*cuts, len(password)]
    return [password[a:b] for a in starts for b in ends if b > a]


def names_password(key: str) -> bool:
    """A URL query key (as libpq decodes it) that carries a password: ``password``,
    ``sslpassword``… One rule for what is masked on display and kept out of a model's view.
    ``passfile`` names the file that holds the passwords, the way to keep them out of a URL:
    it is shown."""
    return "password" in key.lower()


def url_has_password(url: str) -> bool:
    """Whether a database URL carries a password (``user:pw@``, ``?password=``…), which
    must not be written where others read it: a model's context, a project's files."""
    if written_password(url):
        return True
    try:
        parts = urlsplit(quote_userinfo(url))
        keys = [k for k, _ in parse_qsl(parts.query)]  # as libpq decodes them
        return parts.password is not None or any(names_password(k) for k in keys)
    except ValueError:
        return True  # unreadable: assume the worst


OWN_PARAMS = frozenset({"pool_min", "pool_max", "prepare_threshold"})
"""Query parameters taskloom reads itself and removes before libpq sees the URL."""


def split_url(url: str) -> tuple[str, dict[str, str]]:
    """The libpq URL without taskloom's own query parameters (:data:`OWN_PARAMS`)."""
    parts = urlsplit(quote_userinfo(url))
    ours: dict[str, str] = {}
    theirs = []  # kept exactly as written: libpq decodes %XX but not "+" (urlencode's space)
    for piece in parts.query.split("&") if parts.query else []:
        pairs = parse_qsl(piece, keep_blank_values=True)
        if pairs and pairs[0][0] in OWN_PARAMS:
            ours[pairs[0][0]] = pairs[0][1]
        else:
            theirs.append(piece)
    return join_url(parts._replace(scheme="postgresql", query="&".join(theirs))), ours


def redact(url: str) -> str:
    """The URL for display (``tl.url``, CLI output): any password replaced by ``***``."""
    written = written_password(url)
    if written:
        url = url.replace(f":{written}@", ":***@", 1)
    parts = urlsplit(quote_userinfo(url))
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    query = (
        "&".join(_redact_param(piece) for piece in parts.query.split("&")) if parts.query else ""
    )
    return join_url(parts._replace(netloc=netloc, query=query))


def url_secrets(url: str) -> tuple[str, ...]:
    """The password of ``url`` (as written and decoded, and in the pieces an unencoded ``@``
    splits it into, since libpq splits at the first ``@`` and reports the rest as a host
    name) and password query values: what :func:`scrub` takes out of libpq's messages."""
    try:
        parts = urlsplit(quote_userinfo(url))
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return ()
    userinfo = parts.netloc.rpartition("@")[0]
    found = [value for key, value in query if names_password(key)]
    written = written_password(url)
    if written:
        found += [unquote(written), *password_pieces(written)]
    if ":" in userinfo:
        password = userinfo.split(":", 1)[1]
        found += [password, unquote(password), *password.split("@")]
    return tuple(sorted({s for s in found if len(s) > 1}, key=len, reverse=True))


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret replaced by ``***``."""
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def one_line(text: str) -> str:
    """``text`` on one line: libpq's continuation lines (``DETAIL:``, a hint on a line of its
    own) joined with a space, and the statement's echo (``LINE 1: …``, its caret) left out."""
    lines = [line.strip() for line in text.strip().splitlines()]
    return " ".join(line for line in lines if line and line != "^" and not line.startswith("LINE "))


class ScrubSecrets(logging.Filter):
    """Takes the passwords of every store's URL out of psycopg's and its pool's log records,
    and puts each record on one line, so a log reader sees one line per record.

    The pool reconnects in the background and logs libpq's reason as a warning, and libpq
    quotes what it could not read of a URL: an unencoded ``%`` token, or the part of a
    password after an unencoded ``@`` (as a host name). Errors the store raises are scrubbed
    where it raises them; these records reach the application's log handlers directly."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record: leave it to logging
            return True
        scrubbed = scrub(one_line(message), KNOWN_SECRETS)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        return True


KNOWN_SECRETS: list[str] = []
"""The passwords of every store's URL (:func:`url_secrets`) this process opened, longest
first: a message from libpq or the pool may quote any of them."""
for _name in ("psycopg", "psycopg.pool"):  # a filter applies to its own logger's records only
    logging.getLogger(_name).addFilter(ScrubSecrets())


def remember_secrets(secrets: Sequence[str]) -> None:
    """Add a URL's passwords to :data:`KNOWN_SECRETS`."""
    known = set(KNOWN_SECRETS) | set(secrets)
    KNOWN_SECRETS[:] = sorted(known, key=len, reverse=True)


def _redact_param(piece: str) -> str:
    """``key=value`` from a URL's query, its value hidden if the key names a password (as
    libpq decodes it: ``pass%77ord`` too)."""
    pairs = parse_qsl(piece, keep_blank_values=True)
    if pairs and names_password(pairs[0][0]):
        return f"{piece.split('=', 1)[0]}=***"
    return piece


def join_url(parts: SplitResult) -> str:
    """``urlunsplit`` that keeps the ``//`` of a host-less URL (``postgresql:///db``)."""
    url = urlunsplit(parts)
    if not parts.netloc:
        url = url.replace(f"{parts.scheme}:", f"{parts.scheme}://", 1)
    return url


def first_search_path_schema(search_path: str) -> str | None:
    """The schema ``search_path`` (as ``SHOW search_path`` prints it) names first, as
    PostgreSQL resolves it (unquoted names fold to lower case, long ones are cut to 63
    bytes), or ``None`` for the default's
    ``$user`` and an empty path. PostgreSQL skips a schema that does not exist, so a mistyped
    first name would put taskloom's tables in the next one (``public``) without a word."""
    text = search_path.strip()
    if text.startswith('"'):
        end = 1
        while True:
            end = text.find('"', end)
            if end == -1:
                return None
            if text[end + 1 : end + 2] != '"':
                break
            end += 2
        first = text[1:end].replace('""', '"')
    else:
        first = text.split(",", 1)[0].strip().lower()
    if first in ("", "$user"):
        return None
    return first.encode()[:63].decode("utf-8", "ignore")  # as PostgreSQL cuts a long name
