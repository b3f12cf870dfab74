"""A PgBouncer of the test's own, in transaction pooling mode, in front of the test server.

The server is not touched: PgBouncer is one more client of it. Skipped, with the reason,
where ``pgbouncer`` is not installed. PgBouncer refuses to run as root, so as root it runs
as the owner of its folder, ``nobody``."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import psycopg
import pytest


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def pgbouncer(server: str, schema: str) -> Iterator[str]:
    """A URL through a transaction-pooling PgBouncer to ``server``, whose sessions use
    ``schema`` (PgBouncer refuses a URL's ``options``, so its ``connect_query`` sets it)."""
    binary = shutil.which("pgbouncer") or next(
        (p for p in ("/usr/sbin/pgbouncer",) if os.access(p, os.X_OK)), None
    )
    if binary is None:
        message = "pgbouncer is not installed: the tests through a pooler did not run"
        if os.environ.get("TASKLOOM_REQUIRE_PGBOUNCER") == "1":
            pytest.fail(message)
        pytest.skip(message + " (apt-get install pgbouncer)")
    with psycopg.connect(server) as conn:
        info = conn.info
        host, port, dbname, user = info.host, info.port, info.dbname, info.user
        password = info.password
    target = f"host={host} port={port} dbname={dbname} user={user}"
    if password:
        target += f" password={password}"
    folder = tempfile.mkdtemp(prefix="tl_pgbouncer_")
    os.chmod(folder, 0o755)
    run_as: list[str] = []
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        run_as = ["-u", "nobody"]
    listen = _free_port()
    config = os.path.join(folder, "pgbouncer.ini")
    with open(config, "w") as f:
        f.write(
            f"[databases]\npooled = {target} connect_query='SET search_path TO {schema}'\n"
            f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {listen}\n"
            f"unix_socket_dir =\nauth_type = any\npool_mode = transaction\n"
            f"default_pool_size = 5\nlogfile = {folder}/pgbouncer.log\n"
        )
    os.chmod(config, 0o644)
    process = subprocess.Popen(
        [binary, *run_as, config], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"postgresql://{user}@127.0.0.1:{listen}/pooled"
    try:
        for _ in range(100):
            with contextlib.suppress(psycopg.Error):
                psycopg.connect(url, connect_timeout=2).close()
                break
            if process.poll() is not None:
                stderr = process.stderr.read().decode() if process.stderr else ""
                pytest.fail(f"pgbouncer did not start: {stderr}")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
