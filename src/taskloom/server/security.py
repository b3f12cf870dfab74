"""The checks in front of every route: who may ask (the token), from where (Host, Origin),
and how (JSON bodies); and the headers that keep the panel out of other sites' frames.

A loopback server has no token by default, so the browser it runs in is the way in for any
web page the user visits. Three things close it (with a token, the token does, and a reverse
proxy in front may rewrite Host and Origin as it likes): a page's request names the page's origin
(refused unless it is this server's own), a request through a rebound DNS name carries that
name as its Host (refused unless it is a loopback name), and a cross-site page cannot send
``application/json`` without a CORS preflight, which this server never grants (every body
sent to the API must be JSON). A pure ASGI middleware, so event streams pass through untouched.
"""

from __future__ import annotations

import hmac
import ipaddress
from urllib.parse import unquote_to_bytes, urlsplit

from starlette.datastructures import Headers, QueryParams
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CONTENT_POLICY = (
    b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    b" connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""The panel runs only its own script and style and talks only to its own server: should any
user or model text ever reach the page as markup, no script or style in it would run, and no
request could carry the page's data elsewhere."""
NO_TOKEN = "token required: send Authorization: Bearer TOKEN (the panel: open /?token=TOKEN)"
WRONG_TOKEN = "wrong token: the token sent is not this server's"
"""The 401 messages. Which of the two it is tells the caller nothing it did not know (whether
it sent a token), and tells a person what to fix: a panel opened with a mistyped token is
told the token is wrong, not to open it with one."""
SECURITY_HEADERS = [
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", CONTENT_POLICY),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


def is_loopback_name(name: str) -> bool:
    """``name`` (no port) is this machine: ``localhost`` or a loopback address (``127.0.0.2``
    and ``::1`` too)."""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _is_local_name(host: str) -> bool:
    """``host`` (a Host header, with any port) names this machine."""
    try:
        name = urlsplit(f"//{host}").hostname
    except ValueError:
        return False
    return name is not None and is_loopback_name(name)


def _netloc(url: str) -> str | None:
    try:
        return urlsplit(url).netloc.lower() or None
    except ValueError:
        return None


def _origin_ok(origin: str, host: str, path: str) -> bool:
    """The page's own origin; for ``/mcp``, any local one too (the MCP Inspector is a page on a
    port of its own)."""
    netloc = _netloc(origin)
    if netloc == host.lower():
        return True
    return path == "/mcp" and netloc is not None and _is_local_name(netloc)


def _is_public(path: str) -> bool:
    """The panel's shell and assets hold no data: they load before it has sent the token."""
    return path == "/" or path.startswith("/static/")


def _given_token(headers: Headers, query: QueryParams) -> str:
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return query.get("token", "")  # EventSource cannot send headers


def _utf8_url(scope: Scope) -> bool:
    """Whether the path and query decode to UTF-8. Starlette decodes bad bytes to U+FFFD, so
    ``/api/threads/%FF/board`` would act on the thread named "\ufffd", which anyone may
    create: another thread than the one asked for."""
    raw_path = scope.get("raw_path") or scope["path"].encode()
    query = scope.get("query_string", b"").replace(b"+", b" ")
    try:
        unquote_to_bytes(raw_path).decode("utf-8")
        unquote_to_bytes(query).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _own_address(scope: Scope) -> str:
    """The server's own address, which the browser checks apply to only when it is a loopback
    one: what to open instead of the refused name (a server bound to ``::1`` is not reached
    at ``127.0.0.1``)."""
    server = scope.get("server")
    if not server or server[1] is None:
        return "http://127.0.0.1:PORT/"
    address, port = str(server[0]), server[1]
    shown = f"[{address}]" if ":" in address else address
    return f"http://{shown}:{port}/"


class RequestGuard:
    """Refuse what the server must not answer; add the security headers to the rest."""

    def __init__(self, app: ASGIApp, *, token: str | None, loopback_only: bool) -> None:
        self.app = app
        self.token = token
        # With a token, the token is the guard (another site's page cannot know it), and a
        # reverse proxy in front may pass on any Host and Origin; without one, they are.
        self.browser_checks = loopback_only and token is None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            status, code, message = refusal
            # A 401 names the scheme that would be accepted, as HTTP requires.
            challenge = {"WWW-Authenticate": 'Bearer realm="taskloom"'} if status == 401 else None
            response = JSONResponse({"error": code, "message": message}, status, challenge)
            await response(scope, receive, self._with_headers(send))
            return
        await self.app(scope, receive, self._with_headers(send))

    @staticmethod
    def _with_headers(send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        return sending

    def _refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.browser_checks and not _is_local_name(host):
            return (
                421,
                "misdirected_request",
                "this server answers only to localhost names (DNS rebinding protection);"
                f" open it as {_own_address(scope)}",
            )
        if not _utf8_url(scope):
            return (
                400,
                "bad_request",
                "the URL is not valid UTF-8 once its %-escapes are decoded (thread ids are text)",
            )
        path: str = scope["path"]
        if scope["method"] not in SAFE_METHODS:
            origin = headers.get("origin")
            if self.browser_checks and origin is not None and not _origin_ok(origin, host, path):
                return 403, "cross_origin", f"requests from {origin} may not change anything here"
            content_type = headers.get("content-type", "").split(";")[0].strip().lower()
            has_body = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
            if path.startswith("/api/") and has_body and content_type != "application/json":
                return 415, "unsupported_media_type", "send the request body as application/json"
        if self.token is not None and not _is_public(path):
            given = _given_token(headers, QueryParams(scope.get("query_string", b"")))
            if not given:
                return 401, "unauthorized", NO_TOKEN
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return 401, "unauthorized", WRONG_TOKEN
        return None
