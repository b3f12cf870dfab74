"""A PostgreSQL password written into a URL unencoded is never shown, whatever it holds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from taskloom.store.pg_url import redact, url_has_password
from tests.backends import needed_pg_server
from tests.conftest import subprocess_env

PASSWORDS = ["Sup3r@Secr3t#Wordy", "Sup3r@Secr3t?Wordy", "Sup3r@Secr3t/Wordy", "Sup3r@Secr3t"]
"""An ``@`` with a ``#``, ``?`` or ``/`` after it: libpq reads the password up to the ``@``
and the rest as a host, a query or a database name, and quotes those in its errors."""


def run(cwd: Path, *args: str, url: str, via: str) -> subprocess.CompletedProcess[str]:
    argv, env = ([*args, "--db", url], {}) if via == "--db" else (list(args), {"TASKLOOM_URL": url})
    return subprocess.run(
        [sys.executable, "-m", "taskloom", *argv],
        capture_output=True,
        text=True,
        env={**subprocess_env(), **env},
        cwd=cwd,
        timeout=60,
    )


@pytest.mark.parametrize("password", PASSWORDS)
@pytest.mark.parametrize("via", ["--db", "TASKLOOM_URL"])
def test_an_unencoded_password_is_never_printed(tmp_path: Path, password: str, via: str) -> None:
    """``user:Sup3r@Secr3t#Wordy@host`` was shown as ``user:***@Secr3t#Wordy@host``, and
    libpq's reason quoted ``Secr3t#Wordy`` as a host name; every piece is masked now."""
    info = conninfo_to_dict(needed_pg_server())
    host = info.get("host", "127.0.0.1")
    where = host if not host.startswith("/") else host.replace("/", "%2F")
    url = f"postgresql://{info.get('user', 'postgres')}:{password}@{where}/postgres"
    for args in (("board", "list", "t"), ("tasks", "stats"), ("doctor",)):
        result = run(tmp_path, *args, url=url, via=via)
        assert result.returncode == 1, result
        assert result.stderr.startswith("Error: cannot connect to postgresql://"), result.stderr
        assert result.stderr.count("\n") == 1, result.stderr
        shown = result.stdout + result.stderr
        assert not any(piece in shown for piece in ("Sup3r", "Secr3t", "Wordy")), shown


def test_the_displayed_url_keeps_what_is_not_the_password() -> None:
    """Hosts, the database and parameters stay readable, an ``@`` in a parameter too."""
    shown = redact("postgresql://app:Sup3r@Secr3t?Wordy@db1:5432,db2/tl?sslmode=require")
    assert shown == "postgresql://app:***@db1:5432,db2/tl?sslmode=require"
    shown = redact("postgresql://app:pw/x@db/tl?application_name=me@laptop")
    assert shown == "postgresql://app:***@db/tl?application_name=me@laptop"
    shown = redact("postgresql://admin@team:Sup3r@Secr3t#Wordy@db/tl")
    assert shown == "postgresql://admin@team:***@db/tl"
    assert redact("postgresql://db/tl?application_name=a:b@c") == (
        "postgresql://db/tl?application_name=a:b@c"
    )


def test_a_passfile_is_no_password_and_sslpassword_is() -> None:
    """``passfile`` keeps passwords out of the URL: such a URL may be written into a
    project's files (``taskloom init --db``) and is shown whole."""
    url = "postgresql://app@db/tl?passfile=/home/me/.pgpass"
    assert not url_has_password(url) and redact(url) == url
    assert url_has_password("postgresql://app@db/tl?sslpassword=k3y")
    assert redact("postgresql://app@db/tl?sslpassword=k3y") == (
        "postgresql://app@db/tl?sslpassword=***"
    )
