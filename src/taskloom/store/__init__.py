"""Storage backends behind one interface, chosen by URL."""

from __future__ import annotations

import os
from pathlib import Path

from taskloom.domain.errors import InvalidInput
from taskloom.store.base import Document, Row, Store, Transaction

DEFAULT_URL = "sqlite:///./.taskloom/taskloom.db"

__all__ = [
    "DEFAULT_URL",
    "Document",
    "Row",
    "Store",
    "Transaction",
    "check_url",
    "open_store",
    "resolve_url",
]


def resolve_url(url: str | None = None) -> str:
    """The explicit URL, else ``TASKLOOM_URL``, else the default file in ``./.taskloom/``.
    An explicit URL that is empty is refused, so ``--db "$UNSET_VAR"`` never quietly uses
    another database. An empty ``TASKLOOM_URL`` counts as unset, as environment variables do."""
    if url is not None and not isinstance(url, str):
        raise InvalidInput(
            "the database URL must be text (sqlite:///path.db, postgresql://…),"
            f" not {type(url).__name__}"
        )
    if url is not None and not url.strip():
        raise InvalidInput(
            "the database URL is empty: give one (sqlite:///path.db, postgresql://…),"
            " or leave --db out for $TASKLOOM_URL or the default"
        )
    return url or os.environ.get("TASKLOOM_URL", "").strip() or DEFAULT_URL


def check_url(url: str) -> str:
    """``url`` checked as :func:`open_store` would take it, without opening anything (no
    driver, no file, no server): for a URL written into another program's settings."""
    _parse(resolve_url(url))
    return url


def open_store(
    url: str | None = None,
    *,
    copy_source: bool = False,
    one_shot: bool = False,
    migrate_wait_s: float | None = None,
) -> Store:
    """Open a store. Accepts ``sqlite:///relative/or/absolute.db`` (``~`` is the home
    folder), a bare file path, or a ``postgresql://`` URL (needs the ``postgres`` extra).
    ``copy_source``: the store is only read, as the source of ``migrate-db``, so a database
    an earlier development build made is read as it is instead of refused. ``one_shot``:
    for a process that makes a call or two and exits (a hook): on PostgreSQL one plain
    connection, no pool, and a short wait for a server that does not answer.
    ``migrate_wait_s``: see :attr:`Store.migrate_wait_s`."""
    scheme, where = _parse(resolve_url(url))
    if scheme == "postgresql":
        try:
            from taskloom.store.postgres import PostgresStore
        except ImportError as exc:
            raise InvalidInput(
                f"PostgreSQL needs the postgres extra: pip install 'taskloom[postgres]' ({exc})"
            ) from None
        store: Store = PostgresStore(where, copy_source=copy_source, one_shot=one_shot)
    else:
        from taskloom.store.sqlite import SqliteStore

        store = SqliteStore(Path(where), copy_source=copy_source)
    store.migrate_wait_s = migrate_wait_s
    return store


def _parse(url: str) -> tuple[str, str]:
    """``("postgresql", url)`` or ``("sqlite", file path)``, or the error that says why
    ``url`` is neither."""
    scheme, colon, rest = url.partition(":")
    scheme = scheme.lower() if colon else ""  # a bare file path named "sqlite" is a file
    if scheme in ("postgresql", "postgres"):
        if not rest.startswith("//"):
            raise InvalidInput(
                f"not a valid PostgreSQL URL: write {scheme}://user@host/dbname"
                f" ({scheme}:///dbname for the local socket)"
            )
        return "postgresql", "postgresql:" + rest  # the scheme is not case-sensitive
    if scheme == "sqlite":
        path = _sqlite_path(rest)
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
    home = os.path.expanduser(path)
    if path.startswith("~") and home == path:  # ~nosuchuser: a folder named so in the cwd
        raise InvalidInput(f"cannot find the home folder {path.split('/')[0]!r} names")
    return "sqlite", home


def _sqlite_path(rest: str) -> str:
    """The file path of a ``sqlite:`` URL (what follows the colon). A ``?query`` is refused:
    SQLite's URI options (``?mode=ro``) are not taken, and the file would be created with the
    query in its name."""
    if not rest.startswith("///"):
        raise InvalidInput("a SQLite URL is sqlite:///path/to/file.db (three slashes)")
    path, question, _ = rest.removeprefix("///").partition("?")
    if question:  # not shown: the query may hold a password
        raise InvalidInput(
            "a SQLite URL takes no ?query options (such as ?mode=ro): write"
            " sqlite:///path/to/file.db"
        )
    return path
