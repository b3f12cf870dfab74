"""``taskloom serve``: the HTTP API and SSE stream, on loopback unless a token is set."""

from __future__ import annotations

import ipaddress
import os
from typing import Annotated

import typer

from taskloom.cli.common import DbOption, err, open_db
from taskloom.domain.errors import InvalidInput


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(help="Require this token (also $TASKLOOM_TOKEN).", show_default=False),
    ] = None,
    db: DbOption = None,
) -> None:
    """Serve the JSON API and the live event stream.

    Example: taskloom serve --port 8765
    """
    import uvicorn

    from taskloom.server.app import create_app

    token = token or os.environ.get("TASKLOOM_TOKEN") or None
    if not _loopback(host) and token is None:
        raise InvalidInput(f"refusing to bind {host} without a token (--token or $TASKLOOM_TOKEN)")
    err.print(f"taskloom serving on http://{host}:{port}", markup=False)
    uvicorn.run(create_app(open_db(db), token=token), host=host, port=port, log_level="warning")
