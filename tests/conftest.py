"""Shared fixtures. Every store test runs against each backend in ``BACKENDS``."""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import queue
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

import taskloom
from taskloom.client import Taskloom
from tests.backends import needed_pg_server, pg_schema, pg_server


class FakeClock:
    """A clock tests move by hand, so timestamps and budgets are exact."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The store backend under test; PostgreSQL is skipped loudly (or fails in CI) if absent."""
    if request.param == "postgres":
        needed_pg_server()
    return str(request.param)


@pytest.fixture
def fresh_url(backend: str, tmp_path: Path) -> Iterator[Callable[[str], str]]:
    """``fresh_url(name)``: a URL to an empty database on this backend, one per name."""
    urls: dict[str, str] = {}
    with contextlib.ExitStack() as stack:

        def make(name: str) -> str:
            if name not in urls:
                if backend == "sqlite":
                    urls[name] = f"sqlite:///{tmp_path / name}"
                else:
                    urls[name] = stack.enter_context(pg_schema(pg_server()[0] or ""))
            return urls[name]

        yield make


@pytest.fixture
def db_url(fresh_url: Callable[[str], str]) -> str:
    return fresh_url("taskloom.db")


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh schema on the PostgreSQL server, for tests of PostgreSQL alone (skipped loudly,
    or failed in CI, without a server)."""
    with pg_schema(needed_pg_server()) as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """For the few tests about SQLite itself (WAL, busy timeout, file handling)."""
    return f"sqlite:///{tmp_path / 'taskloom.db'}"


@pytest.fixture
def tl(db_url: str) -> Iterator[Taskloom]:
    with taskloom.connect(db_url) as t:
        yield t


@pytest.fixture
def tl_fixed(db_url: str, clock: FakeClock) -> Iterator[Taskloom]:
    """A Taskloom with a hand-moved clock and predictable ids (id-1, id-2, …)."""
    counter = itertools.count(1)
    with taskloom.connect(db_url, clock=clock, new_id=lambda: f"id-{next(counter)}") as t:
        yield t


@pytest.fixture
def make_tl(fresh_url: Callable[[str], str]) -> Iterator[Callable[..., Taskloom]]:
    opened: list[Taskloom] = []

    def make(name: str = "taskloom.db", **kwargs: object) -> Taskloom:
        t = taskloom.connect(fresh_url(name), **kwargs)  # type: ignore[arg-type]
        opened.append(t)
        return t

    yield make
    for t in opened:
        t.close()


@pytest.fixture(autouse=True)
def _no_ambient_db(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never touch a real ./.taskloom or a developer's TASKLOOM_URL."""
    monkeypatch.delenv("TASKLOOM_URL", raising=False)
    monkeypatch.chdir(tmp_path)


SRC = Path(__file__).resolve().parents[1] / "src"


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    # No empty entry: it stands for the working folder, which a test may have removed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    env.pop("TASKLOOM_URL", None)
    return env


@contextlib.contextmanager
def serving(app: Any, *, host: str = "127.0.0.1", **config: Any) -> Iterator[int]:
    """``app`` served by uvicorn in a thread on a free port of ``host`` (``config``: more
    ``uvicorn.Config`` settings) while the block runs; yields the port."""
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.create_server((host, 0), family=family) as probe:
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say loudly when the PostgreSQL half of the conformance suite did not run."""
    if pg_server.cache_info().currsize and pg_server()[0] is None:
        terminalreporter.write_line("!" * 80, red=True, bold=True)
        terminalreporter.write_line(pg_server()[1], red=True, bold=True)
        terminalreporter.write_line("!" * 80, red=True, bold=True)


class Server:
    """`taskloom serve` as its own OS process, restartable on the same port."""

    def __init__(self, db_url: str, *args: str) -> None:
        self.db_url = db_url
        self.args = args  # more ``serve`` options (``--token=…``)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "taskloom",
                "serve",
                f"--port={self.port}",
                f"--db={self.db_url}",
                *self.args,
            ],
            env=subprocess_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                # 401: up, and asking for the token it was given
                if httpx.get(f"{self.url}/api/threads", timeout=1).status_code in (200, 401):
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise AssertionError("taskloom serve did not start")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)


def damaged(path: Path) -> None:
    """A database whose index of task ids is overwritten: the rest still reads."""
    with taskloom.connect(f"sqlite:///{path}") as tl:
        tl.queue.add_many([{"title": f"task {i}"} for i in range(50)])
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (root,) = conn.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_tasks_1'"
    ).fetchone()
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with path.open("r+b") as f:
        f.seek((root - 1) * size + 8)  # past the page's header: its cells point nowhere
        f.write(b"\xff" * (size - 8))


@pytest.fixture
def openai_server() -> Iterator[tuple[Any, str]]:
    """A local server speaking OpenAI's chat completions: ``(provider, base_url)``."""
    from tests.test_llm_guard import FakeProvider, serve

    provider = FakeProvider()
    for url in serve(provider, "openai"):
        yield provider, url + "/v1"


@pytest.fixture
def anthropic_server() -> Iterator[tuple[Any, str]]:
    """A local server speaking Anthropic's messages API: ``(provider, base_url)``."""
    from tests.test_llm_guard import FakeProvider, serve

    provider = FakeProvider()
    for url in serve(provider, "anthropic"):
        yield provider, url


def run_together(
    target: Callable[..., None], args: list[tuple[Any, ...]], timeout: float
) -> list[Any]:
    """Start one spawned process per ``args`` (each called as ``target(*a, start, results)``),
    release them at once, and return what each put on ``results``; every one must exit 0."""
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=target, args=(*a, start, results)) for a in args]
    for proc in procs:
        proc.start()
    start.set()
    found: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(found) < len(procs):
        try:
            found.append(results.get(timeout=0.5))
        except queue.Empty:
            died = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
            assert not died, f"a process exited with {died[0]} (its traceback is on stderr)"
            assert time.monotonic() < deadline, f"the processes did not finish in {timeout} s"
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    return found
