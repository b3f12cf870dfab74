"""Storage backends behind one interface, chosen by URL."""

from __future__ import annotations

import os
from pathlib import Path

from taskloom.domain.errors import InvalidInput
from taskloom.store.base import Document, Row, Store, Transaction

DEFAULT_URL = "sqlite:///./.taskloom/taskloom.db"

__all__ = ["DEFAULT_URL", "Document", "Row", "Store", "Transaction", "open_store", "resolve_url"]


def resolve_url(url: str | None = None) -> str:
    """The explicit URL, else ``TASKLOOM_URL``, else the default file in ``./.taskloom/``."""
    return url or os.environ.get("TASKLOOM_URL") or DEFAULT_URL


def open_store(url: str | None = None) -> Store:
    """Open a store. Accepts ``sqlite:///relative/or/absolute.db``, a bare file path, or a
    ``postgresql://`` URL (needs the ``postgres`` extra)."""
    url = resolve_url(url)
    scheme, colon, rest = url.partition(":")
    scheme = scheme.lower() if colon else ""  # a bare file path named "sqlite" is a file
    if scheme in ("postgresql", "postgres"):
        if not rest.startswith("//"):
            raise InvalidInput(
                f"not a valid PostgreSQL URL: write {scheme}://user@host/dbname"
                f" ({scheme}:///dbname for the local socket)"
            )
        url = "postgresql:" + rest  # the scheme is not case-sensitive
        try:
            from taskloom.store.postgres import PostgresStore
        except ImportError as exc:
            raise InvalidInput(
                f"PostgreSQL needs the postgres extra: pip install 'taskloom[postgres]' ({exc})"
            ) from None
        return PostgresStore(url)
    if scheme == "sqlite":
        if not rest.startswith("///"):
            raise InvalidInput("a SQLite URL is sqlite:///path/to/file.db (three slashes)")
        path = rest.removeprefix("///")
    elif "://" in url:
        scheme = url.split("://", 1)[0]
        raise InvalidInput(f"unsupported database URL scheme '{scheme}' (use sqlite or postgresql)")
    else:
        path = url
        if "dbname=" in path or ("=" in path and " " in path):
            raise InvalidInput(
                "that looks like a libpq connection string; use a URL such as "
                "postgresql://user@host/dbname"
            )
    if not path or path == ":memory:":
        raise InvalidInput("an in-memory database cannot be shared; give a file path")
    from taskloom.store.sqlite import SqliteStore

    return SqliteStore(Path(path))
