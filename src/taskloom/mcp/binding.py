"""What an MCP request is bound to: its thread, its agent and the tools it is served.

Over stdio the binding is the command line (``taskloom mcp --thread T --agent A --tools P``).
Over streamable HTTP it is each request's headers: ``X-Taskloom-Thread``,
``X-Taskloom-Agent`` and ``X-Taskloom-Tools`` (or the ``?tools=`` query parameter), never
tool arguments. A client of protocol 2025-11-25 keeps a session (``Mcp-Session-Id``): the
session keeps the first thread, agent and tools its requests name, and a later request that
names others is refused, so a session cannot switch agents midway. A client of protocol
2026-07-28 has no session: each request is bound by its own headers.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any

from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from taskloom.domain.errors import InvalidInput
from taskloom.tools.registry import Choice
from taskloom.tools.spec import ToolContext

THREAD_HEADER = "x-taskloom-thread"
AGENT_HEADER = "x-taskloom-agent"
TOOLS_HEADER = "x-taskloom-tools"
TOOLS_QUERY = "tools"
SESSION_HEADER = "mcp-session-id"
MAX_PINNED_SESSIONS = 10_000
"""How many HTTP sessions' bindings a server remembers (the least recently used go first)."""


@dataclass(frozen=True, slots=True)
class Binding:
    """A request's thread and agent (:class:`ToolContext`) and its choice of tools."""

    ctx: ToolContext
    tools: Choice = None


def _header(headers: Any, name: str, title: str) -> str | None:
    """A header's value as UTF-8 text, trimmed (``None`` if absent or blank).

    Starlette decodes header bytes as Latin-1, so ``é`` sent as UTF-8 would read as ``Ã©``,
    another thread than ``taskloom mcp --thread é``; Latin-1 gives the bytes back unchanged."""
    value = headers.get(name)
    if value is None:
        return None
    try:
        value = value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        raise InvalidInput(f"the {title} header is not valid UTF-8") from None
    return value.strip() or None


def _tools(request: Any) -> str | None:
    """The tools a request asks for: its header or its query parameter (not two choices)."""
    header = _header(getattr(request, "headers", None) or {}, TOOLS_HEADER, "X-Taskloom-Tools")
    params = getattr(request, "query_params", None) or {}
    query = (params.get(TOOLS_QUERY) or "").strip() or None
    if header is not None and query is not None and header != query:
        raise InvalidInput(
            "the X-Taskloom-Tools header and the ?tools= parameter choose different tools:"
            " send one of them"
        )
    return header or query


def from_request(request: Any) -> Binding:
    """The binding an HTTP request's headers (and query) name. Raises :class:`InvalidInput`
    if a header is not UTF-8 text."""
    headers = getattr(request, "headers", None) or {}
    ctx = ToolContext(
        thread_id=_header(headers, THREAD_HEADER, "X-Taskloom-Thread"),
        agent_id=_header(headers, AGENT_HEADER, "X-Taskloom-Agent"),
    )
    return Binding(ctx, _tools(request))


class Bindings:
    """The binding of each request a server answers: ``fixed`` (stdio) for every request,
    or (``fixed`` is ``None``) each HTTP request's own, pinned to its session."""

    def __init__(self, fixed: Binding | None, tools: Choice = None) -> None:
        self._fixed = fixed
        self._tools = tools
        self._pinned: collections.OrderedDict[str, Binding] = collections.OrderedDict()

    @property
    def fixed(self) -> bool:
        """Whether every request has the one binding (stdio)."""
        return self._fixed is not None

    def session(self, request_ctx: Any) -> str | None:
        """The request's HTTP session id (``None`` over stdio, and without a session: a
        request of protocol 2026-07-28 has none, whatever ``Mcp-Session-Id`` it sends)."""
        if self._fixed is not None:
            return None
        if getattr(request_ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS:
            return None
        headers = getattr(request_ctx.request, "headers", None) or {}
        session = headers.get(SESSION_HEADER)
        return str(session) if session is not None else None

    def of(self, request_ctx: Any) -> Binding:
        """The request's binding. Raises :class:`InvalidInput` for a header that is not
        UTF-8, or one that names another thread, agent or tools than its session's first."""
        if self._fixed is not None:
            return self._fixed
        found = from_request(request_ctx.request)
        session = self.session(request_ctx)
        if session is None:  # stateless: each request is its own session
            return Binding(found.ctx, found.tools or self._tools)
        first = self._pinned.get(session, Binding(ToolContext()))
        for header, was, now in (
            ("X-Taskloom-Thread", first.ctx.thread_id, found.ctx.thread_id),
            ("X-Taskloom-Agent", first.ctx.agent_id, found.ctx.agent_id),
            ("X-Taskloom-Tools", first.tools, found.tools),
        ):
            if was is not None and now is not None and was != now:
                raise InvalidInput(
                    f"this MCP session is bound to thread {first.ctx.thread_id!r} and agent"
                    f" {first.ctx.agent_id!r} by its first calls: its {header} header cannot"
                    " change: start a new session for another thread, agent or tools"
                )
        both = Binding(
            ToolContext(
                thread_id=first.ctx.thread_id or found.ctx.thread_id,
                agent_id=first.ctx.agent_id or found.ctx.agent_id,
            ),
            first.tools or found.tools,
        )
        if both != Binding(ToolContext()):  # something to pin
            self._pinned[session] = both
            self._pinned.move_to_end(session)
            while len(self._pinned) > MAX_PINNED_SESSIONS:
                self._pinned.popitem(last=False)
        return Binding(both.ctx, both.tools or self._tools)
