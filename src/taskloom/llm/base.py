"""The one protocol the guard needs from a model: a system prompt and a user prompt in, text out.

Providers map their own failures (HTTP errors, timeouts, malformed or refused answers) onto
:class:`~taskloom.domain.errors.ProviderError` at this boundary, so the summarizer and the
map-reduce can count failures without knowing httpx. API keys live only in the client's
private headers: never in a repr, a log line, an error message or a payload we store. Every
error message is built here and passes :meth:`HttpChat.redact`, because httpx puts a header
it cannot send into its exception text, and a provider's 401 body may echo the key.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from taskloom.domain.errors import ProviderError
from taskloom.domain.text import terminal_safe

if TYPE_CHECKING:
    import httpx

REDACTED = "[redacted]"
MAX_REPLY_BYTES = 8 * 1024 * 1024
"""A reply larger than this is refused: no answer the guard asks for comes near it."""
ERROR_PREVIEW_CHARS = 300
RETRY_STATUSES = frozenset({429, 503, 529})
"""Answers that mean "busy, try again shortly" (529: Anthropic's "overloaded"): retried, the
others fail at once."""
MAX_RETRIES = 2
"""Retries after the first attempt: a provider still busy after three tries fails the call."""
MAX_RETRY_WAIT = 10.0
"""The longest ``Retry-After`` (seconds) waited for; a longer one fails the call at once."""
RETRY_BACKOFF = 0.5
"""The first wait when the provider names none; it doubles on each retry."""


@runtime_checkable
class ChatModel(Protocol):
    """Anything that can answer one prompt. ``name`` is shown in logs and reports."""

    name: str

    def complete(self, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
        """Return the model's text answer, or raise ``ProviderError``."""
        ...


class Answer(str):
    """A model's answer that also says whether the model stopped at ``max_tokens``.

    It is a plain ``str`` to every caller, so the protocol stays "text out"; the map-reduce and
    the summarizer read ``truncated`` to tell a cut-off answer from a complete one.
    """

    truncated: bool

    def __new__(cls, text: str, *, truncated: bool = False) -> Answer:
        answer = super().__new__(cls, text)
        answer.truncated = truncated
        return answer


def is_truncated(answer: str) -> bool:
    """Whether ``answer`` is known to be cut at ``max_tokens`` (any ``ChatModel`` may answer)."""
    return bool(getattr(answer, "truncated", False))


def clean_key(key: str | None, provider: str) -> str | None:
    """``key`` without surrounding whitespace, or ``None`` when there is none.

    A key pasted with a trailing newline or a non-breaking space would make httpx raise an
    error whose text holds the header value; a character a header cannot carry (a smart quote) is
    refused with an error that names its position, never the key.
    """
    if key is None:
        return None
    key = key.strip()
    for position, char in enumerate(key, start=1):
        if not "!" <= char <= "~":
            raise ProviderError(
                f"{provider} API key has a character an HTTP header cannot carry "
                f"(U+{ord(char):04X} at position {position} of {len(key)}): set the key again "
                "without it"
            )
    return key or None


def retry_after(header: str | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (a number or an HTTP date), or ``None``."""
    if not header:
        return None
    try:
        return max(0.0, float(header))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def retry_wait(status: int, header: str | None, attempt: int) -> float | None:
    """How long to wait before retry ``attempt`` (0 for the first), or ``None`` to fail now:
    not a busy status, out of retries, or asked to wait longer than ``MAX_RETRY_WAIT``."""
    if status not in RETRY_STATUSES or attempt >= MAX_RETRIES:
        return None
    asked = retry_after(header)
    wait = RETRY_BACKOFF * 2**attempt if asked is None else asked
    return wait if wait <= MAX_RETRY_WAIT else None


_URL_PASSWORD = re.compile(
    r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:/?#@]*:)(?P<password>.*)@", re.S
)
"""``scheme://user:`` and the password after it, up to the last ``@``. Tolerant on purpose:
``urlsplit`` gives up on (or misreads) a password holding ``#``, ``/`` or ``?`` and on a
bad host, which would leave the password shown whole."""
MIN_REDACTED_CHARS = 4


def _url_password(url: str) -> str | None:
    """The password of ``url``'s ``user:password@`` part, however malformed the rest is."""
    match = _URL_PASSWORD.match(url)
    return (match.group("password") or None) if match else None


def mask_url(url: str) -> str:
    """``url`` with the password of its ``user:password@`` part replaced by ``[redacted]``."""
    match = _URL_PASSWORD.match(url)
    if match is None or not match.group("password"):
        return url
    return f"{match.group('head')}{REDACTED}@{url[match.end() :]}"


def _credentials_apart(url: str) -> tuple[httpx.URL, httpx.BasicAuth | None]:
    """``url`` without its ``user:password@`` part, and that part as the basic auth it
    stands for: httpx logs each request's URL as it is, password included."""
    import httpx

    parsed = httpx.URL(url)
    if not parsed.userinfo:
        return parsed, None
    auth = httpx.BasicAuth(parsed.username, parsed.password)
    return parsed.copy_with(username=None, password=None), auth


PROXY_VARIABLES = ("all_proxy", "http_proxy", "https_proxy")
"""The environment variables httpx takes its proxies from (in either case)."""


def _proxy_variables() -> str:
    """The proxy variables set in the environment, by name only (their URLs may hold a
    password), for an error about them."""
    names = sorted(name for name in os.environ if name.lower() in PROXY_VARIABLES)
    return " / ".join(f"${name}" for name in names) or "the environment"


class Reply(NamedTuple):
    """One HTTP answer: its status, its ``Retry-After`` and ``Location`` headers and its body."""

    status: int
    retry_after: str | None
    body: bytes
    location: str | None = None


def stream_events(raw: bytes) -> list[Any] | None:
    """The ``data`` of each server-sent event in ``raw``, decoded as JSON (``[DONE]`` left
    out), or ``None`` when ``raw`` is no such stream: not text, a line that is no field of
    an event, or data that is not JSON."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    events: list[Any] = []
    data: list[str] = []
    for line in [*text.splitlines(), ""]:
        if not line.strip():
            joined = "\n".join(data)
            data = []
            if joined and joined.strip() != "[DONE]":
                try:
                    events.append(json.loads(joined))
                except (ValueError, RecursionError):
                    return None
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line.startswith((":", "event:", "id:", "retry:")):
            return None
    return events or None


def reply_error(data: Any) -> str:
    """The error a provider put in a 200 reply (``{"error": …}``), for the failure message."""
    if isinstance(data, dict) and data.get("error"):
        return f": error {json.dumps(data['error'])[:ERROR_PREVIEW_CHARS]}"
    return ""


class HttpChat:
    """Shared plumbing of the HTTP providers: one httpx client per OS thread (the map-reduce
    calls from a small pool), secret headers and a URL's password kept out of ``repr`` and
    out of every error, one wall-clock deadline per request, and a short retry of a busy
    answer (429, 503, 529) that honours ``Retry-After``."""

    provider = "http"

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        temperature: float,
        timeout: float,
        headers: dict[str, str],
        api_key: str | None = None,
    ) -> None:
        self.model = model
        self.name = f"{self.provider}:{model}"
        self.base_url = base_url.rstrip("/")
        self._url_secret = _url_password(self.base_url)
        self.temperature = temperature
        self.timeout = timeout
        self._secret: str | None = None
        self._key_error: str | None = None
        try:
            self._secret = clean_key(api_key, self.provider)
        except ProviderError as exc:  # raised by every call: the guard degrades, as for any
            self._key_error = exc.message  # provider failure, instead of failing at import
        auth = self.auth_headers(self._secret) if self._secret else {}
        self._headers = {"content-type": "application/json", **headers, **auth}
        self._local = threading.local()

    def auth_headers(self, key: str) -> dict[str, str]:
        """The headers that carry ``key``; each provider names its own."""
        raise NotImplementedError

    def __repr__(self) -> str:
        base = mask_url(self.base_url)
        return f"{type(self).__name__}(model={self.model!r}, base_url={base!r})"

    def said(self, text: str) -> str:
        """``text`` as an error says it: redacted, then on one line with its controls shown
        (``\\x1b``), not obeyed: a proxy's HTML error page or a reply's escape codes would
        break the one-line failures an extract lists and a terminal that prints them."""
        return terminal_safe(" ".join(self.redact(text).split()))

    def redact(self, text: str) -> str:
        """``text`` with this client's key and its URL's password replaced, wherever an error
        or a body echoed them. A secret shorter than ``MIN_REDACTED_CHARS`` is left alone: as
        a substring it is everywhere, and a one-character password would turn an error into
        "[Errno [redacted][redacted]…" while hiding next to nothing."""
        for secret in (self._secret, self._url_secret):
            if secret and len(secret) >= MIN_REDACTED_CHARS:
                text = text.replace(secret, REDACTED)
        return text

    def _client(self) -> httpx.Client:
        client: httpx.Client | None = getattr(self._local, "client", None)
        if client is None:
            import httpx

            try:
                client = httpx.Client(timeout=self.timeout)
            except httpx.InvalidURL:  # its text quotes a piece of a proxy's password
                raise ProviderError(
                    f"{self.name} cannot use the proxy {_proxy_variables()} names: its URL"
                    " cannot be parsed (percent-encode a '#', '/', '?' or '@' in its password)"
                ) from None
            except (ImportError, ValueError) as exc:  # SOCKS without socksio, a bad scheme
                raise ProviderError(
                    f"{self.name} cannot use the proxy {_proxy_variables()} names: {exc}"
                ) from None
            self._local.client = client
        return client

    def post_json(self, url: str, body: dict[str, Any]) -> Any:
        """POST ``body`` and return the decoded JSON reply, within ``timeout`` seconds overall.

        ``timeout`` bounds the whole call, not each socket read: the body is read as a stream
        against a deadline, so a server sending one byte a second cannot hold the call.
        """
        with self.mapped_errors():
            if self._key_error:
                raise ProviderError(self._key_error)
            raw = self._attempts(url, body)
            try:
                return json.loads(raw)
            except (ValueError, RecursionError):
                if not raw.strip():
                    raise ProviderError(f"{self.name} sent an empty reply") from None
                events = stream_events(raw)
                if events:  # streamed, though not asked to (a gateway that always streams)
                    return self.joined(events)
                preview = self._preview(raw)
                raise ProviderError(
                    f"{self.name} sent a reply that is not JSON: {preview}"
                ) from None

    def _attempts(self, url: str, body: dict[str, Any]) -> bytes:
        """The body of a successful reply, retrying a busy one at most ``MAX_RETRIES`` times:
        a single 429 neither fails the call nor, three times over, opens the summarizer's
        breaker. All attempts and the waits between them share one deadline, ``timeout``
        from the start of the call: a retry whose wait would pass it is not made."""
        deadline = time.monotonic() + self.timeout
        attempt = 0
        while True:
            reply = self._read(url, body, deadline)
            if 200 <= reply.status < 300:
                return reply.body
            changed = self.adjusted(body, reply) if reply.status == 400 else None
            if changed is not None:  # each change drops a field, so this ends
                body = changed
                continue
            wait = retry_wait(reply.status, reply.retry_after, attempt)
            if wait is None or time.monotonic() + wait >= deadline:
                raise ProviderError(self._refused(reply, attempt, wait))
            time.sleep(wait)
            attempt += 1

    def joined(self, events: list[Any]) -> Any:
        """The reply the events of a streamed one (server-sent events, each's ``data`` as
        JSON) make together, in the shape of a reply that is not streamed."""
        raise ProviderError(f"{self.name} streamed its reply, which this client cannot read")

    def adjusted(self, body: dict[str, Any], reply: Reply) -> dict[str, Any] | None:
        """The request to send instead of ``body`` after ``reply`` (an HTTP 400) refused a
        field of it, or ``None`` to fail the call. A provider whose models differ in the
        fields they take overrides it; the change must drop a field ``body`` has."""
        return None

    def _refused(self, reply: Reply, attempt: int, wait: float | None) -> str:
        """The error for a reply that ends the call; ``wait``: the retry its deadline left out."""
        tries = f" (after {attempt + 1} attempts)" if attempt else ""
        late = "" if wait is None else f" (a retry in {wait:g} s would pass the call's timeout)"
        preview = self._preview(reply.body)
        said = f": {preview}" if preview.strip() else ""
        where = f"{self._redirect(reply)}{self.hint(reply)}"
        return f"{self.name} answered HTTP {reply.status}{tries}{said}{late}{where}"

    def hint(self, reply: Reply) -> str:
        """What to change when ``reply`` ends the call, for the error (``""``: nothing)."""
        return ""

    def _redirect(self, reply: Reply) -> str:
        """What a redirect (never followed: the key goes only to ``base_url``) points at, so
        the reader can set ``base_url`` to it (an ``http://`` URL moved to ``https://``)."""
        if not 300 <= reply.status < 400 or not reply.location:
            return ""
        where = self.redact(mask_url(reply.location))[:ERROR_PREVIEW_CHARS]
        return (
            f"; it redirects to {where!r}, which is not followed (the API key is sent to"
            " base_url only): set base_url to the URL it should use"
        )

    def _read(self, url: str, body: dict[str, Any], deadline: float) -> Reply:
        """One attempt, ended at ``deadline``: each socket wait is bounded by the time left,
        so a server that stalls shortly before the deadline cannot hold the call a whole
        ``timeout`` past it."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise ProviderError(self._timed_out())
        parts: list[bytes] = []
        size = 0
        target, auth = _credentials_apart(url)
        request = self._client().stream(
            "POST", target, json=body, headers=self._headers, timeout=left, auth=auth
        )
        with request as response:
            for part in response.iter_bytes():
                size += len(part)
                if time.monotonic() > deadline:
                    raise ProviderError(self._timed_out())
                if size > MAX_REPLY_BYTES:
                    raise ProviderError(f"{self.name} sent a reply over {MAX_REPLY_BYTES:,} bytes")
                parts.append(part)
            status, headers = response.status_code, response.headers
        return Reply(status, headers.get("retry-after"), b"".join(parts), headers.get("location"))

    def _preview(self, raw: bytes) -> str:
        """The start of a reply for an error message, redacted before it is cut: a key that
        straddles the cut is still redacted whole, not kept as its first characters."""
        text = self.redact(raw[: ERROR_PREVIEW_CHARS * 4].decode("utf-8", "replace"))
        return text[:ERROR_PREVIEW_CHARS]

    def _bad_url(self, exc: Exception) -> str:
        """The error for a URL httpx refuses. With a password in ``base_url`` httpx's own
        text is left out: it quotes the piece it misread ("Invalid port: 'pa'" for
        ``user:pa#ss@``), part of the password that no redaction of the whole one finds."""
        base = mask_url(self.base_url)
        if self._url_secret is None:
            return self.redact(f"{self.name} request failed: InvalidURL: {exc}")
        return (
            f"{self.name} request failed: InvalidURL: base_url {base!r} cannot be parsed"
            " (percent-encode a '#', '/', '?' or '@' in its password)"
        )

    def _timed_out(self) -> str:
        return f"{self.name} timed out after {self.timeout:g} s"

    @contextmanager
    def mapped_errors(self) -> Iterator[None]:
        """Turn every failure of a call into a ``ProviderError`` without this client's key,
        on one line (see :meth:`said`).

        A malformed reply (a string where an object belongs, nesting deeper than the parser
        goes) raises ``TypeError`` or ``RecursionError``, which must not crash ``wrap`` nor
        lose the good chunks of an extract.
        """
        import httpx

        try:
            yield
        except ProviderError as exc:
            raise ProviderError(self.said(exc.message)) from None
        except httpx.TimeoutException:
            raise ProviderError(self._timed_out()) from None
        except httpx.InvalidURL as exc:
            raise ProviderError(self.said(self._bad_url(exc))) from None
        except (httpx.HTTPError, httpx.StreamError) as exc:
            message = f"{self.name} request failed: {type(exc).__name__}: {exc}"
            raise ProviderError(self.said(message)) from None
        except (ValueError, LookupError, TypeError, AttributeError, RecursionError) as exc:
            message = f"{self.name} sent an unexpected response: {type(exc).__name__}: {exc}"
            raise ProviderError(self.said(message)[:ERROR_PREVIEW_CHARS]) from None
