"""``taskloom serve``: the HTTP API and SSE stream, on loopback unless a token is set."""

from __future__ import annotations

import logging
import os
import socket
import urllib.parse
from datetime import timedelta
from typing import Annotated, Any

import typer

from taskloom.cli.common import DbOption, check_range, err, open_announced
from taskloom.cli.mcp import (
    DEFAULT_TASK_POLL_S,
    DEFAULT_TASK_TTL_S,
    TaskPollOption,
    TaskTtlOption,
    task_settings,
)
from taskloom.cli.retention import (
    AGE,
    AGE_EXAMPLES,
    MAX_AGE_DAYS,
    days_alias,
    one_age,
    parse_age,
    save,
)
from taskloom.domain.errors import Interrupted, InvalidInput

MAX_RETAIN_EVENTS = 2**63 - 1  # the database's largest integer
MAX_POLL_S = 86400


POOL_LOG = logging.StreamHandler()
"""The PostgreSQL pool's warnings (connections lost, reconnects failing) on stderr."""


def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(help="Require this token (also $TASKLOOM_TOKEN).", show_default=False),
    ] = None,
    retain_events: Annotated[
        int | None,
        typer.Option(
            help="Set the database's event retention to keep at most this many events"
            " (0: keep all); default: as set (taskloom retention).",
            show_default=False,
        ),
    ] = None,
    older_than: Annotated[
        str | None,
        typer.Option(
            AGE,
            help="Set the database's event retention to drop events older than this:"
            f" {AGE_EXAMPLES}, up to {MAX_AGE_DAYS}d (0 or none: no age limit); default: as"
            " set.",
            show_default=False,
        ),
    ] = None,
    retain_days: Annotated[
        float | None,
        typer.Option("--retain-days", hidden=True, help="--older-than's old name, in days."),
    ] = None,
    poll_s: Annotated[
        float | None,
        typer.Option(
            "--poll",
            "--poll-s",
            help="Seconds between looks for changes nothing announced, as in tasks work"
            " (default: 0.025 on SQLite, where other processes' writes arrive so; 2 on"
            " PostgreSQL, whose writers wake every server at once).",
            show_default=False,
        ),
    ] = None,
    task_ttl: TaskTtlOption = DEFAULT_TASK_TTL_S,
    task_poll: TaskPollOption = DEFAULT_TASK_POLL_S,
    db: DbOption = None,
) -> None:
    """Serve the web panel, the JSON API, the live event stream and MCP at /mcp.

    Open the printed address in a browser. Pruned events cost viewers nothing: a reader whose
    cursor was pruned is sent the current snapshots. SIGTERM or SIGINT (Ctrl+C) shuts it down
    gracefully, and it exits 0 once the shutdown is done (a second Ctrl+C hurries it: exit
    130).

    Example: taskloom serve --port 8765
    """
    import uvicorn

    from taskloom.mcp import McpConfig
    from taskloom.server.app import SHUTDOWN_GRACE_S, create_app
    from taskloom.server.http import CleanStopServer, DeadlineH11Protocol
    from taskloom.server.security import is_loopback_name

    if not host.strip():  # "" binds every interface, and the printed address has no host
        raise InvalidInput("--host must not be empty (0.0.0.0 binds every interface)")
    # An empty --token is refused below, not read as no token: `--token "$UNSET"` would
    # serve without one. An empty $TASKLOOM_TOKEN is unset.
    if token is None:
        token = os.environ.get("TASKLOOM_TOKEN") or None
    if token is not None and (not token.strip() or token != token.strip()):
        raise InvalidInput("the token must not be blank or start or end with spaces")
    if token is not None and not all("!" <= c <= "~" for c in token):
        # Clients send it in an HTTP header, which carries ASCII only: a "tök" token accepted
        # here would be refused on every request that sends it as a header.
        raise InvalidInput(
            "the token must be printable ASCII, without spaces (it is sent in a header)"
        )
    if not is_loopback_name(host) and token is None:
        raise InvalidInput(f"refusing to bind {host} without a token (--token or $TASKLOOM_TOKEN)")
    check_range(port, "--port", 1, 65535)
    retention: dict[str, Any] = {}
    if retain_events is not None:
        check_range(retain_events, "--retain-events", 0, MAX_RETAIN_EVENTS)
        retention["keep"] = retain_events or None
    one_age(older_than, retain_days, "--retain-days")
    if older_than is not None:
        retention["older_than"] = parse_age(older_than)
    if retain_days is not None:
        seconds = days_alias(retain_days, "--retain-days")
        # (a tiny positive age rounds up to the smallest a timedelta holds, not to "none")
        retention["older_than"] = (
            max(timedelta(seconds=seconds), timedelta.resolution) if seconds else None
        )
    if poll_s is not None and not 0 < poll_s <= MAX_POLL_S:
        raise InvalidInput(f"--poll must be more than 0 and at most {MAX_POLL_S}")
    mcp = McpConfig(tasks=task_settings(task_ttl, task_poll))
    tl = open_announced(db)
    app = create_app(
        tl, token=token, poll_s=poll_s, loopback_only=is_loopback_name(host), mcp_config=mcp
    )
    _check_listen(host, port)
    if retention:  # the database's own policy, which every writer applies
        err.print(f"event retention: {save(tl, **retention)}", markup=False)
    shown = f"[{host}]" if ":" in host else host  # an IPv6 address in a URL
    err.print(f"taskloom panel on http://{shown}:{port}/  (Ctrl+C stops)", markup=False)
    if token is not None:
        err.print(_token_hint(f"http://{shown}:{port}/", token), markup=False)
    logging.getLogger("psycopg").addHandler(POOL_LOG)  # a server's log shows outages
    # Past the streams' own grace, connections still open are closed, so a client that stops
    # reading cannot keep a stopped server waiting for its socket to drain.
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=DeadlineH11Protocol,  # bounded request heads: see taskloom.server.http
        log_level="warning",
        timeout_graceful_shutdown=int(SHUTDOWN_GRACE_S) + 1,
    )
    mcp_app = app.state.mcp
    server = CleanStopServer(config, on_stop=None if mcp_app is None else mcp_app.give_up)
    server.run()
    if not server.started:  # uvicorn logged why (as its own run() does, exit 3)
        raise typer.Exit(3)
    if server.hurried:
        raise Interrupted("the shutdown was hurried; open connections were cut")


def _token_hint(url: str, token: str) -> str:
    """How to open the panel of a server with a token: on a terminal, the address with the
    token percent-encoded (a base64 token's ``+`` typed as is read as a space); into a log
    (systemd, docker), never the token itself."""
    if not err.is_terminal:
        return "open it with ?token=YOUR_TOKEN (percent-encoded) added to the address"
    return f"open {url}?token={urllib.parse.quote(token, safe='')}"


def _check_listen(host: str, port: int) -> None:
    """Refuse an address the server could not listen on (in use, not this host's), before
    saying the panel is up: uvicorn would log its own error and exit 3 after that line."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        socket.create_server((host, port), family=family).close()
    except OSError as exc:
        raise InvalidInput(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
