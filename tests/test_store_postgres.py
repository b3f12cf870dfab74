"""What only PostgreSQL has: lock waits, LISTEN/NOTIFY wake-ups, shared-server migrations."""

from __future__ import annotations

import contextlib
import logging
import queue
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import psycopg.sql
import pytest
from psycopg.conninfo import conninfo_to_dict

import taskloom
import taskloom.queue.doctor as doctor_module
from taskloom.domain.events import TODO_CHANGE, TODO_STATE, Event
from taskloom.domain.queue import TaskStatus
from taskloom.store.pg_url import join_url, split_url, url_secrets
from taskloom.store.postgres import OUTBOX_LOCK, PostgresStore, translate
from taskloom.store.queue_sql import DONE_SQL, claim_sql, done_many_sql
from tests.backends import needed_pg_server, pg_schema, pg_server, terminate_app, with_schema
from tests.conftest import subprocess_env

pytestmark = pytest.mark.postgres


def test_translate_placeholders() -> None:
    assert translate("SELECT ? , '?' , \"a?\" -- ?\n , 5 % ?") == (
        "SELECT %s , '?' , \"a?\" -- ?\n , 5 %% %s"
    )
    assert translate("SELECT 'it''s ?%'") == "SELECT 'it''s ?%%'"


def test_passwords_are_not_displayed() -> None:
    store = PostgresStore("postgresql://app:s3cret@db.example/tl?sslmode=require")
    assert store.url == "postgresql://app:***@db.example/tl?sslmode=require"
    store.close()
    store = PostgresStore("postgresql://app:s3cr3t/PW@db.example/tl")
    assert store.url == "postgresql://app:***@db.example/tl"
    store.close()
    store = PostgresStore("postgresql://db.example/tl?password=s3cret&pass%77ord=x&sslmode=off")
    assert store.url == "postgresql://db.example/tl?password=***&pass%77ord=***&sslmode=off"
    store.close()


@pytest.mark.parametrize(
    ("credentials", "query", "secret"),
    [
        ("app:my%pass1", "", "my%pass1"),  # a % left unencoded: libpq quotes the token
        ("app:s3cret@pw", "", "pw"),  # an @ left unencoded: libpq reads "pw@…" as the host
        ("app", "?password=hunter22", "hunter22"),
        ("app:s3cr3t/PW", "", "s3cr3t"),  # a / left unencoded: libpq reads "app:s3cr3t" as a host
    ],
)
def test_connection_errors_never_echo_the_password(
    credentials: str, query: str, secret: str
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # closed below: nothing listens there
    url = f"postgresql://{credentials}@127.0.0.1:{port}/tl{query}"
    with taskloom.connect(url) as tl, pytest.raises(taskloom.StoreError) as caught:
        tl.queue.add("x")
    assert str(caught.value).startswith("cannot connect to postgresql://app")
    assert secret not in str(caught.value) and "***" in str(caught.value)


def log_refused_pool(userinfo: str, caplog: pytest.LogCaptureFixture) -> None:
    """Let a store's pool try a loopback port where nothing listens, as ``userinfo``, until
    it logs its first "error connecting" warning (into ``caplog``), then close it."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # closed on leaving: nothing listens there
    store = PostgresStore(f"postgresql://{userinfo}@127.0.0.1:{port}/tl")
    with caplog.at_level(logging.WARNING, logger="psycopg.pool"):
        store.pool.open(wait=False)
        deadline = time.monotonic() + 10
        while "error connecting" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
        store.close()


def test_the_pools_background_log_never_carries_the_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The pool connects in the background and logs libpq's reason as a warning, which goes
    to the application's log handlers: the password libpq quotes from the URL is masked."""
    log_refused_pool("app:my%pass1", caplog)
    assert "error connecting" in caplog.text
    assert "my%pass1" not in caplog.text and "***" in caplog.text


def test_pool_options_are_ours_not_libpq() -> None:
    url, ours = split_url("postgres://u@h/db?pool_max=3&sslmode=disable")
    assert url == "postgresql://u@h/db?sslmode=disable"
    assert ours == {"pool_max": "3"}


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://u@h/db?pool_min=-1", "pool_min must be 0 or more"),
        ("postgresql://u@h/db?pool_min=0&pool_max=0", "pool_max 1 or more"),
        ("postgresql://u@h/db?pool_min=5&pool_max=2", "at least pool_min"),
        ("postgresql://u@h/db?pool_max=x", "must be integers"),
        ("postgresql://u@[::1/db", "not a valid PostgreSQL URL"),
    ],
)
def test_a_url_that_cannot_work_is_refused_before_connecting(url: str, message: str) -> None:
    with pytest.raises(taskloom.InvalidInput, match=message):
        PostgresStore(url)


def test_a_bad_libpq_option_fails_at_once_with_libpqs_reason() -> None:
    """The first connection honours the URL's own connect_timeout (here a bad one) instead of
    replacing it, so the pool never retries a URL that cannot work for 30 seconds."""
    with (
        taskloom.connect("postgresql://postgres@/postgres?connect_timeout=abc") as tl,
        pytest.raises(taskloom.StoreError, match="bad value for connect_timeout"),
    ):
        tl.queue.stats()


def test_an_outage_is_reported_with_the_servers_reason_and_left_at_once(pg_url: str) -> None:
    """The server goes away (its sessions killed, new connections refused), then comes back.
    Calls during the outage get the reason a fresh connection fails with, not the pool's
    timeout; the first call after it works, though the pool is still in its reconnect
    backoff."""
    url = pg_url + ("&" if "?" in pg_url else "?") + "pool_min=1&pool_max=1"
    with taskloom.connect(url) as tl:
        tl.queue.add("before")
        with tl.store.read() as tx:
            pid = tx.query_one("SELECT pg_backend_pid() AS pid")["pid"]  # type: ignore[index]
        store = tl.store
        assert isinstance(store, PostgresStore)
        real = store.conninfo
        store.conninfo = store.pool.conninfo = "postgresql://postgres@127.0.0.1:1/postgres"
        with psycopg.connect(real, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for _ in range(2):
            with pytest.raises(taskloom.StoreBusy, match=r"database unreachable: .*127\.0\.0\.1"):
                tl.queue.stats()
        store.conninfo = store.pool.conninfo = real
        assert tl.queue.stats()["ready"] == 1
        tl.queue.add("after")
        assert tl.queue.stats()["ready"] == 2


def test_queue_trigger_takes_the_same_outbox_lock_as_python() -> None:
    """Readers trust ids below a drained lock; a trigger on another lock class would break that."""
    folder = files("taskloom.store") / "migrations" / "postgres"
    triggers = [m for m in folder.iterdir() if "RETURNS trigger" in m.read_text()]
    assert triggers  # the schema's task-event trigger, and any later file's
    for migration in triggers:
        sql = migration.read_text()
        lock = f"pg_advisory_xact_lock_shared({OUTBOX_LOCK}, hashtext(current_schema()))"
        assert sql.count(lock) == sql.count("INSERT INTO events"), migration.name


def test_held_row_lock_maps_to_store_busy(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with taskloom.connect(pg_url) as tl:
        tl.board("t").add("x")
    monkeypatch.setattr("taskloom.store.pg_driver.LOCK_TIMEOUT_MS", 50)
    with psycopg.connect(pg_url) as blocker:
        blocker.execute("SELECT 1 FROM documents WHERE key = 't' FOR UPDATE")
        with taskloom.connect(pg_url) as other, pytest.raises(taskloom.StoreBusy):
            other.board("t").add("y")
    with taskloom.connect(pg_url) as tl:
        assert tl.board("t").list()["version"] == 1


def test_migrations_once_under_concurrent_opens(pg_url: str) -> None:
    errors: list[BaseException] = []

    def open_and_write(n: int) -> None:
        try:
            with taskloom.connect(pg_url) as tl:
                tl.board(f"t{n}").add("x")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_and_write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with psycopg.connect(pg_url) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == sorted(set(versions)) and versions[0] == 1


def test_listen_wakes_another_store(pg_url: str) -> None:
    """Two stores stand in for two server processes: a write through one wakes the other."""
    with taskloom.connect(pg_url) as setup:  # its notification is sent by the close
        setup.board("t").add("schema first")
    with (
        taskloom.connect(pg_url) as writer,
        taskloom.connect(pg_url) as server,
        _listening(server) as woken,
    ):
        event_id = writer.board("t").add("hello")["version"]
        got = woken.get(timeout=10)
        with server.store.read() as tx:
            events = tx.events_after(got - 1, thread_id="t")
    assert events[0].id == got and events[0].data["version"] == event_id


@contextlib.contextmanager
def _listening(tl: taskloom.Taskloom) -> Iterator[queue.Queue[int]]:
    """The wake-ups ``tl``'s store hears, from when its LISTEN is in place until the end."""
    assert isinstance(tl.store, PostgresStore)
    woken: queue.Queue[int] = queue.Queue()
    ready = threading.Event()
    stop = tl.store.listen(woken.put, ready=ready.set)
    try:
        assert ready.wait(10)
        yield woken
    finally:
        stop()


def _drain(woken: queue.Queue[int], quiet_s: float = 1.0) -> list[int]:
    got = []
    while True:
        try:
            got.append(woken.get(timeout=quiet_s))
        except queue.Empty:
            return got


def test_a_burst_of_writes_wakes_listeners_once_per_burst_after_the_last_commit(
    pg_url: str,
) -> None:
    """Writers notify after committing, folding a burst into few notifications; the last one
    comes after the last commit, so a listener reading then sees every event."""
    woken: queue.Queue[int] = queue.Queue()
    with taskloom.connect(pg_url) as writer, taskloom.connect(pg_url) as server:
        writer.queue.add("schema first")
        assert isinstance(server.store, PostgresStore)
        with server.store.read() as tx:
            head = tx.event_head()
        ready = threading.Event()
        stop = server.store.listen(woken.put, ready=ready.set)
        try:
            assert ready.wait(10)
            added = [writer.queue.add(f"job {i}")[0] for i in range(60)]
            notes = _drain(woken)
        finally:
            stop()
        with server.store.read() as tx:
            events = tx.events_after(head)
    assert 1 <= len(notes) < 60
    assert [e.data["id"] for e in events] == [t.id for t in added]
    assert notes[-1] >= events[-1].id


def test_closing_a_store_sends_its_pending_notification(pg_url: str) -> None:
    """A short-lived writer (one CLI command) still wakes the servers before it exits."""
    woken: queue.Queue[int] = queue.Queue()
    with taskloom.connect(pg_url) as server:
        server.queue.add("schema first")
        assert isinstance(server.store, PostgresStore)
        ready = threading.Event()
        stop = server.store.listen(woken.put, ready=ready.set)
        try:
            assert ready.wait(10)
            with taskloom.connect(pg_url) as writer:
                task, _ = writer.queue.add("from a CLI")
            notes = _drain(woken)
        finally:
            stop()
        with server.store.read() as tx:
            last = tx.events_after(notes[-1] - 1)
    assert last[-1].data["id"] == task.id


def test_other_schemas_are_invisible(pg_url: str) -> None:
    server = pg_server()[0] or ""
    with (
        pg_schema(server) as other_url,
        taskloom.connect(pg_url) as a,
        taskloom.connect(other_url) as b,
    ):
        a.board("t").add("in a")
        assert b.board("t").list()["cards"] == []
        assert b.threads() == []


def test_survives_server_side_disconnects(pg_url: str) -> None:
    """Pooled connections killed by the server (restart, failover) are replaced transparently."""
    name = f"tl-kill-{uuid.uuid4().hex[:12]}"
    with taskloom.connect(f"{pg_url}&application_name={name}&pool_min=3") as tl:
        tl.board("t").add("before")
        with psycopg.connect(pg_url, autocommit=True) as admin:
            row = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity"
                " WHERE application_name = %s",
                (name,),
            ).fetchone()
        assert row is not None and row[0] >= 1
        assert tl.board("t").add("after")["version"] == 2
        assert tl.board("t").list()["version"] == 2


class CuttingProxy:
    """A TCP proxy to the test server that, once armed with a marker, passes on the
    statement holding it and then breaks the connection as the server's answer comes back:
    the statement ran (and, on its own, committed), and the client never hears of it."""

    def __init__(self, server_url: str) -> None:
        info = conninfo_to_dict(server_url)
        host, port = info.get("host") or "/var/run/postgresql", info.get("port") or "5432"
        self.target: tuple[int, Any] = (
            (socket.AF_UNIX, f"{host}/.s.PGSQL.{port}")
            if host.startswith("/")
            else (socket.AF_INET, (host, int(port)))
        )
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.marker: bytes | None = None
        self.down = False  # set: every new connection is closed at once, as in an outage
        parts = urlsplit(server_url)
        user = parts.netloc.rpartition("@")[0]
        netloc = f"{user}@127.0.0.1:{self.listener.getsockname()[1]}"
        self.url = join_url(parts._replace(netloc=netloc, query=f"{parts.query}&sslmode=disable"))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                if self.down:
                    client.close()
                    continue
                server = socket.socket(self.target[0])
                server.connect(self.target[1])
                cut = threading.Event()
                for src, dst, up in ((client, server, True), (server, client, False)):
                    args = (src, dst, up, cut, (client, server))
                    threading.Thread(target=self._pipe, args=args, daemon=True).start()

    def _pipe(self, src: Any, dst: Any, up: bool, cut: threading.Event, pair: Any) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                if up and self.marker and self.marker in data:
                    self.marker = None
                    cut.set()
                if not up and cut.is_set():
                    break  # the answer is dropped, with the connection
                dst.sendall(data)
        for sock in pair:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


def test_a_queue_write_whose_answer_is_lost_is_never_run_twice(pg_url: str) -> None:
    """A claim or a completion is one statement, its own transaction: once sent it may have
    committed, so a connection lost before its answer is an error saying so, never a second
    run (which claimed a second task, or called a completed task "finished by someone
    else")."""
    proxy = CuttingProxy(pg_url)
    with taskloom.connect(proxy.url) as tl:
        q = tl.queue
        q.add_many([{"title": "a"}, {"title": "b"}])
        first = q.claim("w1")
        assert first is not None
        proxy.marker = b"status = 'completed'"
        with pytest.raises(taskloom.StoreError, match="whether it was applied is unknown"):
            q.done(first.id, first.lease_token or "", "ok")
        assert q.get(first.id).status == "completed"  # applied, once
        proxy.marker = b"SET status = 'in_progress'"
        with pytest.raises(taskloom.StoreError, match="whether it was applied is unknown"):
            q.claim("w2")
        (second,) = q.list(status="in_progress")
        assert (second.claimed_by, second.attempts) == ("w2", 1)
        assert q.claim("w3") is None  # nothing was claimed twice, nothing is left over


def test_a_board_write_whose_commit_answer_is_lost_says_its_outcome_is_unknown(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write whose connection breaks at its COMMIT may have committed: a plain failure
    invited a retry that added the card twice. The broken connection also marks an outage,
    so while the server cannot be reached each call fails at once with the reason, rather
    than after waiting out the pool (whose connections are all gone)."""
    monkeypatch.setattr("taskloom.store.postgres.POOL_TIMEOUT_S", 3.0)
    proxy = CuttingProxy(pg_url)
    with taskloom.connect(f"{proxy.url}&pool_max=1") as tl:
        tl.board("t").add("first")
        proxy.marker = b"COMMIT"
        with pytest.raises(taskloom.StoreError, match="whether it was applied is unknown"):
            tl.board("t").add("second")
        proxy.down = True
        with pytest.raises(taskloom.StoreBusy, match="database unreachable"):
            tl.board("t").list()
        proxy.down = False
        titles = [c["title"] for c in tl.board("t").list()["cards"]]
        assert titles == ["first", "second"]  # it had committed, once


def test_errors_are_one_line_without_the_statements_echo(pg_url: str) -> None:
    with (
        taskloom.connect(pg_url) as tl,
        pytest.raises(taskloom.StoreError) as caught,
        tl.store.read() as tx,
    ):
        tx.query("SELECT no_such_column FROM tasks")
    message = str(caught.value)
    assert "no_such_column" in message and "\n" not in message and "LINE 1" not in message


@pytest.mark.parametrize("password", ["ab#cd", "ab?cd", "ab#c%ZZd"])
def test_a_password_holding_hash_or_question_mark_is_found_as_libpq_finds_it(
    password: str,
) -> None:
    """libpq reads the user info up to the first ``@``; Python's URL parser stopped at the
    ``#`` or ``?``, saw no password, and showed it (and wrote it into agents' files)."""
    url = f"postgresql://app:{password}@db.example:5499/tl?pool_max=2&sslmode=disable"
    store = PostgresStore(url)
    assert store.url == "postgresql://app:***@db.example:5499/tl?pool_max=2&sslmode=disable"
    conninfo, ours = split_url(url)
    assert ours == {"pool_max": "2"} and "pool_max" not in conninfo
    if "%ZZ" not in password:  # libpq refuses that one, quoting it (scrubbed: url_secrets)
        assert conninfo_to_dict(conninfo)["password"] == password
    assert password in url_secrets(url)
    store.close()


def test_queue_writes_survive_server_side_disconnects(pg_url: str) -> None:
    """A connection the server closed while it sat in the pool is found before a lone
    statement is sent on it, and replaced."""
    name = f"tl-kill-{uuid.uuid4().hex[:12]}"
    with taskloom.connect(f"{pg_url}&application_name={name}&pool_min=2") as tl:
        tl.queue.add("before")
        terminate_app(pg_url, name)
        time.sleep(0.2)  # the farewell reaches the pooled connections
        claimed = tl.queue.claim("w")
        assert claimed is not None and claimed.title == "before"
        assert tl.queue.done(claimed.id, claimed.lease_token or "").status == "completed"


def test_a_role_that_may_not_create_tables_uses_a_schema_its_owner_set_up(pg_url: str) -> None:
    with taskloom.connect(pg_url) as owner:
        owner.queue.add("set up by the owner")
        schema = psycopg.sql.Identifier(owner.store.schema)  # type: ignore[attr-defined]
    role = f"tl_user_{uuid.uuid4().hex[:12]}"
    grants = [
        "CREATE ROLE {r} NOLOGIN",
        "GRANT USAGE ON SCHEMA {s} TO {r}",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {s} TO {r}",
        "GRANT USAGE ON ALL SEQUENCES IN SCHEMA {s} TO {r}",
    ]
    with psycopg.connect(pg_url, autocommit=True) as admin:
        for grant in grants:
            admin.execute(psycopg.sql.SQL(grant).format(r=psycopg.sql.Identifier(role), s=schema))
        try:
            as_role = pg_url.replace("options=", f"options=-crole%3D{role}%20", 1)
            with taskloom.connect(as_role) as tl:
                claimed = tl.queue.claim("w")
                assert claimed is not None and claimed.title == "set up by the owner"
                tl.queue.done(claimed.id, claimed.lease_token or "")
                assert tl.board("t").add("works")["version"] == 1
                with tl.store.read() as tx:  # what the panel reads: the event log's head
                    head = tx.event_head()
                with tl.store.read() as tx:
                    assert tx.events_after(head - 1)[0].type == TODO_CHANGE
        finally:
            drop = "DROP OWNED BY {r}; DROP ROLE {r}"
            admin.execute(psycopg.sql.SQL(drop).format(r=psycopg.sql.Identifier(role)))


def test_reader_never_passes_a_late_committing_smaller_id(pg_url: str) -> None:
    """Appender A draws id 1 and stays open; B draws id 2 and commits. A reader must not
    deliver 2 and move its cursor past 1: it delivers nothing while A is open, then both in
    order."""
    with (
        taskloom.connect(pg_url) as a,
        taskloom.connect(pg_url) as b,
        taskloom.connect(pg_url) as reader,
    ):
        b.board("warmup").add("schema")
        with reader.store.read() as tx:
            start = tx.events_after(0)[-1].id or 0
        held = a.store.write()
        tx_a = held.__enter__()
        first = tx_a.append_event(Event(TODO_STATE, "a", {"n": 1}, created_at="t"))
        b.board("b").add("commits first")
        with reader.store.read() as tx:
            assert tx.events_after(start) == []
        held.__exit__(None, None, None)
        with reader.store.read() as tx:
            assert [e.id for e in tx.events_after(start)] == [first, first + 1]


def test_a_transaction_left_open_stalls_no_writer_behind_the_reader(pg_url: str) -> None:
    """An admin's plain-SQL fix left open held the outbox lock shared; the server's reader
    queued for it exclusively (ten seconds), and every claim, add and board edit of every
    process queued behind the reader."""
    with taskloom.connect(pg_url) as tl, taskloom.connect(pg_url) as reader:
        task, _ = tl.queue.add("fix me")
        with reader.store.read() as tx:
            head = tx.event_head()
        with psycopg.connect(pg_url) as admin:  # a transaction, left open
            admin.execute("UPDATE tasks SET priority = priority + 1 WHERE id = %s", (task.id,))
            done = threading.Event()

            def read() -> None:
                while not done.is_set():
                    with reader.store.read() as tx:
                        assert tx.events_after(head) == []  # not past the open one
                    with reader.store.read() as tx:
                        assert tx.event_head() == head  # the last horizon it knew

            thread = threading.Thread(target=read)
            thread.start()
            try:
                for i in range(20):  # each waited for the reader's lock timeout
                    tl.board("t").add(f"card {i}")
                assert not admin.execute(
                    "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                ).fetchone()
            finally:
                done.set()
                thread.join()
            admin.rollback()
        with reader.store.read() as tx:
            assert len(tx.events_after(head)) == 20


def test_finishing_a_lease_reads_one_row_whatever_the_statistics_say(pg_url: str) -> None:
    """Statistics taken while nothing was leased, then 400 leases: done/fail/extend must find
    their task by primary key, not walk every leased task through the lease index."""
    with taskloom.connect(pg_url) as tl:
        with tl.store.write() as tx:
            for i in range(3000):
                tx.execute(
                    "INSERT INTO tasks (id, title, created_at) VALUES (?, ?, ?)",
                    (f"t{i:05d}", "t", 1.0 + i),
                )
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("ANALYZE tasks")
        held = tl.queue.claim_batch("a", 400, lease=600)
        task_id, token = held[-1].id, held[-1].lease_token
        fenced = {
            "done": (DONE_SQL, [1.0, 1.0, None, task_id, token]),
            "done_many": (
                done_many_sql("postgres"),
                [f'[["{task_id}", "{token}", null]]', 1.0, 1.0],
            ),
        }
        with tl.store.read() as tx:
            for name, (sql, params) in fenced.items():
                plan = "\n".join(r["QUERY PLAN"] for r in tx.query("EXPLAIN " + sql, params))
                assert "Index Scan using tasks_pkey" in plan, (name, plan)
                assert "tasks_leases" not in plan, (name, plan)


def test_a_plan_that_must_sort_is_never_sent_to_the_jit(pg_url: str) -> None:
    """taskloom's connections price sorting out (``enable_sort = off``), so a plan that must
    still sort costs over ten billion, far past ``jit_above_cost``: without ``jit = off`` each
    such statement compiled for ~250 ms."""
    with taskloom.connect(pg_url) as tl:
        tl.queue.add("one")
        with tl.store.read() as tx:
            plan = "\n".join(
                r["QUERY PLAN"]
                for r in tx.query(
                    "EXPLAIN ANALYZE SELECT upper(title), priority + 1 FROM tasks"
                    " WHERE priority > 0 ORDER BY title",
                    (),
                )
            )
    assert "Sort" in plan and "JIT" not in plan, plan
    assert "cost=100000000" in plan, plan  # sorting priced out on this connection


def test_claim_plan_walks_the_ready_index_without_statistics(pg_url: str) -> None:
    """A fresh, never-analysed queue of 5,000 ready tasks: the claim must read the ordered
    partial index, not sort every ready task (the planner's choice without the guard)."""
    with taskloom.connect(pg_url) as tl, tl.store.write() as tx:
        for i in range(5000):
            tx.execute(
                "INSERT INTO tasks (id, title, created_at) VALUES (?, ?, ?)",
                (f"t{i:05d}", "t", 1.0 + i),
            )
    now = 2e9
    params = ["a", 1, "h", now, now + 300, "tok", now, "a", now, now]
    for n in (1, 10):
        with taskloom.connect(pg_url) as tl, tl.store.read() as tx:
            plan = "\n".join(
                r["QUERY PLAN"]
                for r in tx.query(
                    "EXPLAIN " + claim_sql("postgres", 0, n),
                    params + (["a", now, now] if n > 1 else []),  # a batch's group rule
                )
            )
        assert "Index Scan using tasks_ready" in plan, plan
        assert "Sort" not in plan, plan


def test_claims_reuse_their_generic_plan(pg_url: str) -> None:
    """psycopg prepares a statement on its fifth run; PostgreSQL then keeps re-planning it
    unless the generic plan costs no more than the custom ones. A bound ``LIMIT $n`` is costed
    as a tenth of the table, which made every claim a fresh plan (~0.06 ms each)."""
    with taskloom.connect(pg_url) as tl:
        for i in range(300):
            tl.queue.add(f"t{i}")
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("ANALYZE tasks")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SET enable_sort = off")
        for n, rounds in ((1, 20), (10, 20)):
            sql = translate(claim_sql("postgres", 0, n))
            for _ in range(rounds):
                batch = ["a", 1.0, 1.0] if n > 1 else []  # a batch's group rule
                params = ["a", 1, "h", 1.0, 2.0, "tok", 1.0, "a", 1.0, 1.0, *batch]
                conn.execute(sql, params).fetchall()
            custom, generic = conn.execute(
                "SELECT custom_plans, generic_plans FROM pg_prepared_statements"
                " WHERE statement LIKE %s",
                (f"%LIMIT {n} FOR UPDATE%",),
            ).fetchone() or (None, None)
            assert custom is not None and generic is not None, "claim was not prepared"
            assert custom <= 5 and generic >= 10, (n, custom, generic)


def test_one_thread_keeps_to_one_server_connection(pg_url: str) -> None:
    """The pool hands its connections out in turn, so a second one (opened while the first
    was still connecting, or borrowed by the notifier) made a one-thread worker alternate
    between two server processes, ~30 µs more CPU per statement."""
    with taskloom.connect(pg_url) as tl:
        pids = set()
        for i in range(10):
            tl.queue.add(f"t{i}")  # each commit pokes the notifier
            task = tl.queue.claim("a", lease=60)
            assert task is not None
            tl.queue.done(task.id, task.lease_token or "")
            pids |= {r["pid"] for r in tl.store.autocommit("SELECT pg_backend_pid() AS pid", ())}
            time.sleep(0.06)  # let the notifier send between rounds
    assert len(pids) == 1, pids


def test_url_options_reach_libpq_exactly_as_written(pg_url: str) -> None:
    """libpq decodes ``%20`` but not ``+``: the URL's query must not be re-encoded."""
    url, ours = split_url(
        "postgresql://u@h/db?options=-c%20x%3D1&pool_min=2&application_name=a%20b"
    )
    assert url == "postgresql://u@h/db?options=-c%20x%3D1&application_name=a%20b"
    assert ours == {"pool_min": "2"}
    with taskloom.connect(pg_url + "&application_name=my%20app") as tl, tl.store.read() as tx:
        row = tx.query_one("SELECT current_setting('application_name') AS name")
    assert row is not None and row["name"] == "my app"


def test_a_closed_store_opens_again_on_its_next_call(pg_url: str) -> None:
    tl = taskloom.connect(pg_url)
    tl.board("t").add("before")
    tl.close()
    tl.board("t").add("after")  # a closed pool cannot reopen: the store makes a new one
    assert [c["title"] for c in tl.board("t").list()["cards"]] == ["before", "after"]
    tl.close()


def test_a_long_non_ascii_schema_still_gets_wake_ups() -> None:
    """A channel name holds 63 bytes, not characters."""
    server = needed_pg_server()
    schema = "é" * 30 + uuid.uuid4().hex[:4]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(psycopg.sql.SQL("CREATE SCHEMA {}").format(psycopg.sql.Identifier(schema)))
    try:
        url = with_schema(server, schema)
        woken: queue.Queue[int] = queue.Queue()
        with taskloom.connect(url) as writer, taskloom.connect(url) as server_tl:
            writer.board("t").add("schema first")
            assert isinstance(server_tl.store, PostgresStore)
            assert len(server_tl.store.channel.encode()) <= 63
            ready = threading.Event()
            stop = server_tl.store.listen(woken.put, ready=ready.set)
            try:
                assert ready.wait(10)
                writer.board("t").add("hello")
                assert woken.get(timeout=10) > 0
            finally:
                stop()
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            drop = psycopg.sql.SQL("DROP SCHEMA {} CASCADE")
            conn.execute(drop.format(psycopg.sql.Identifier(schema)))


def test_a_cli_write_wakes_listeners_before_the_command_exits(pg_url: str) -> None:
    """A CLI command never closes its store: its last notification is sent at exit."""
    woken: queue.Queue[int] = queue.Queue()
    with taskloom.connect(pg_url) as setup:
        setup.board("t").add("schema first")  # its own notification is sent by the close
    with taskloom.connect(pg_url) as server_tl:
        assert isinstance(server_tl.store, PostgresStore)
        ready = threading.Event()
        stop = server_tl.store.listen(woken.put, ready=ready.set)
        try:
            assert ready.wait(10)
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "taskloom",
                    "board",
                    "add",
                    "t",
                    "from a shell",
                    "--db",
                    pg_url,
                ],
                capture_output=True,
                text=True,
                env=subprocess_env(),
                timeout=60,
            )
            assert done.returncode == 0, done.stderr
            assert woken.get(timeout=10) > 0
        finally:
            stop()


def test_workers_polling_an_empty_queue_wake_no_listener(pg_url: str) -> None:
    """An empty claim, and the sweep it runs, change nothing: no notification is sent."""
    with taskloom.connect(pg_url) as setup:  # its notifications are sent by the close
        setup.queue.add("leased", ttl_s=3600)  # a TTL: the expiry sweep has work to look at
        assert setup.queue.claim("w", lease=600) is not None
    with (
        taskloom.connect(pg_url) as server_tl,
        taskloom.connect(pg_url) as worker,
        _listening(server_tl) as woken,
    ):
        for _ in range(5):
            worker.queue._sweep_due = 0.0  # every poll sweeps, as after a quiet second
            assert worker.queue.claim("w") is None
        assert _drain(woken, quiet_s=0.5) == []


def test_closing_while_a_transaction_is_open_ends_it_cleanly(pg_url: str) -> None:
    tl = taskloom.connect(pg_url)
    tl.board("t").add("x")
    with tl.store.read() as tx:
        assert tx.query("SELECT 1 AS one")[0]["one"] == 1
        tl.close()  # another thread closing the store under this one
    assert [c["title"] for c in tl.board("t").list()["cards"]] == ["x"]
    tl.close()


@contextlib.contextmanager
def _holding_row(
    pg_url: str, sql: str, params: tuple[Any, ...], *, release_after: float
) -> Iterator[dict[str, bool]]:
    """Another session changes or locks a task and keeps its transaction open (as a worker
    whose claim is still committing), then commits after ``release_after`` seconds:
    ``state["open"]`` says whether it still held the row."""
    conn = psycopg.connect(pg_url)
    conn.execute(sql, params)
    state = {"open": True}

    def commit() -> None:
        state["open"] = False
        conn.commit()

    timer = threading.Timer(release_after, commit)
    timer.start()
    try:
        yield state
    finally:
        timer.join()
        conn.close()


def test_eviction_never_cancels_a_task_whose_claim_is_committing(pg_url: str) -> None:
    """A task picked for eviction from the statement's snapshot may be claimed meanwhile: it
    stays with its worker, and exactly the excess is evicted (not one task more)."""
    with taskloom.connect(pg_url) as tl:
        tl.queue.max_active = 2
        oldest, _ = tl.queue.add("oldest")
        second, _ = tl.queue.add("second")
        claim = (
            "UPDATE tasks SET status = 'in_progress', claimed_by = 'w1', lease_token = 'tok',"
            " lease_expires_at = 4e9, attempts = attempts + 1 WHERE id = %s"
        )
        with _holding_row(pg_url, claim, (oldest.id,), release_after=1.0):
            third, added = tl.queue.add("third")
        assert added and third.status is TaskStatus.READY
        kept = tl.queue.get(oldest.id)
        assert kept.status is TaskStatus.IN_PROGRESS and kept.lease_token == "tok"
        evicted = tl.queue.get(second.id)
        assert evicted.status is TaskStatus.CANCELED and "evicted" in (evicted.result or "")
        assert tl.queue.stats()["canceled"] == 1


def test_a_requeue_racing_another_is_told_the_task_is_no_longer_dead(pg_url: str) -> None:
    """Two people requeue one dead task at once: the second read it dead before the first
    committed, then found nothing to change; it says so (it failed with an IndexError)."""
    with taskloom.connect(pg_url) as tl:
        task, _ = tl.queue.add("t", max_attempts=1)
        claimed = tl.queue.claim("w")
        assert claimed is not None
        tl.queue.fail(task.id, claimed.lease_token or "", "boom")
        first = "UPDATE tasks SET status = 'ready', attempts = 0, changed_at = 1 WHERE id = %s"
        lost = pytest.raises(taskloom.InvalidInput, match="no longer dead: it changed meanwhile")
        with _holding_row(pg_url, first, (task.id,), release_after=1.0), lost:
            tl.queue.requeue(task.id)
        back = tl.queue.get(task.id)
        assert back.status is TaskStatus.READY and back.changed_at == 1  # the first one's


def test_sweeps_skip_a_task_another_transaction_holds(pg_url: str) -> None:
    """Expiry and lease sweeps never wait for a row lock, so they cannot deadlock with each
    other or with an add (the caller's claim or add failed with 'deadlock detected')."""
    with taskloom.connect(pg_url) as tl:
        expired, _ = tl.queue.add("expires", ttl_s=0.05)
        leased, _ = tl.queue.add("leased")
        tl.queue.claim("w", lease=0.05)  # the older task: "expires"
        tl.queue.claim("w", lease=0.05)
        time.sleep(0.1)
        lock = "SELECT id FROM tasks WHERE id IN (%s, %s) FOR UPDATE"
        with _holding_row(pg_url, lock, (expired.id, leased.id), release_after=3.0) as held:
            tl.queue._sweep_due = 0.0
            assert tl.queue.claim("w2") is None
            assert held["open"], "the sweep waited for the other transaction"
        tl.queue._sweep_due = 0.0
        tl.queue.claim("w3")  # sweeps again, now that they are free
        assert {tl.queue.get(expired.id).status, tl.queue.get(leased.id).status} != {
            TaskStatus.IN_PROGRESS
        }


def test_reclaim_keeps_a_claim_made_after_it_found_the_worker_dead(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``reclaim`` (``doctor --fix``) finds a dead worker's claim, and while it checks the pid
    the lease runs out and another worker claims the task: the new claim stays."""
    with taskloom.connect(pg_url) as tl:
        task, _ = tl.queue.add("t")
        dead = subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"],
            capture_output=True,
            text=True,
            check=True,
        )
        claimed = tl.queue.claim("a", lease=600)
        assert claimed is not None
        with tl.store.write() as tx:
            tx.execute("UPDATE tasks SET pid = ? WHERE id = ?", (int(dead.stdout), task.id))

        def checking(pid: int) -> bool:
            with psycopg.connect(pg_url, autocommit=True) as other:  # meanwhile, elsewhere
                other.execute(
                    "UPDATE tasks SET claimed_by = 'b', pid = NULL, lease_token = 'new'"
                    " WHERE id = %s",
                    (task.id,),
                )
            return False

        monkeypatch.setattr(doctor_module, "alive", checking)
        assert tl.queue.reclaim() == []
        now = tl.queue.get(task.id)
        assert now.status is TaskStatus.IN_PROGRESS and now.lease_token == "new"


def test_long_schema_names_alike_at_the_start_get_their_own_channels() -> None:
    """Cut to 63 bytes, two schemas whose names began with the same 47 bytes shared a
    channel, and each deployment woke the other's servers."""
    server = needed_pg_server()
    stem = "a" * 53 + uuid.uuid4().hex[:4]
    schemas = [f"{stem}_one", f"{stem}_two"]
    with psycopg.connect(server, autocommit=True) as conn:
        for schema in schemas:
            conn.execute(psycopg.sql.SQL("CREATE SCHEMA {}").format(psycopg.sql.Identifier(schema)))
    try:
        channels = []
        for schema in schemas:
            with taskloom.connect(with_schema(server, schema)) as tl:
                tl.board("t").add("x")
                assert isinstance(tl.store, PostgresStore)
                channels.append(tl.store.channel)
        assert channels[0] != channels[1]
        assert all(len(c.encode()) <= 63 and c.startswith("taskloom_events:aaa") for c in channels)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            for schema in schemas:
                drop = psycopg.sql.SQL("DROP SCHEMA {} CASCADE")
                conn.execute(drop.format(psycopg.sql.Identifier(schema)))


def test_a_mistyped_first_schema_is_refused_not_skipped_for_public() -> None:
    """PostgreSQL skips a search_path schema that does not exist: a typo in the team's schema
    put its tasks in ``public``, beside another deployment's."""
    server = needed_pg_server()
    typo = f"team_typo_{uuid.uuid4().hex[:8]}"
    tl = taskloom.connect(with_schema(server, f"{typo},public"))
    with pytest.raises(taskloom.StoreError, match=f"first schema, '{typo}', does not exist"):
        tl.queue.stats()
    tl.close()


PG_FOREIGN = {
    "another app's tables": ("CREATE TABLE users (id int)",),
    "a table taskloom also has": ("CREATE TABLE tasks (id int)",),
    "golang-migrate": (
        "CREATE TABLE schema_migrations (version bigint PRIMARY KEY, dirty boolean)",
        "INSERT INTO schema_migrations VALUES (3, false)",
    ),
    "rails": (
        "CREATE TABLE schema_migrations (version varchar PRIMARY KEY)",
        "INSERT INTO schema_migrations VALUES ('20240101000000')",
    ),
}


@pytest.mark.parametrize("made", PG_FOREIGN.values(), ids=PG_FOREIGN.keys())
def test_a_schema_of_another_application_is_refused_and_left_as_it_was(
    pg_url: str, made: tuple[str, ...]
) -> None:
    """As on SQLite: taskloom's tables went in beside the other application's, or the
    migrations failed half-way ("relation tasks already exists", a boolean column given a
    file name), or a framework's history was blamed on a newer taskloom."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for sql in made:
            conn.execute(sql)
    before = _tables(pg_url)
    tl = taskloom.connect(pg_url)
    with pytest.raises(taskloom.StoreError, match=r"is not a taskloom database \(it has tables: "):
        tl.board("t").add("x")
    tl.close()
    assert _tables(pg_url) == before


def _tables(url: str) -> list[str]:
    """Every table of the URL's schema, whoever may read it."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace"
            " AND relkind = 'r' ORDER BY 1"
        ).fetchall()
    return [str(r[0]) for r in rows]


def test_a_schema_named_with_capitals_is_used() -> None:
    """``current_schema()::regnamespace`` read "TeamB" as teamb: "schema teamb does not
    exist" (or, with a teamb beside it, the wrong schema's tables were checked)."""
    server = needed_pg_server()
    name = f"TeamB_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(psycopg.sql.SQL("CREATE SCHEMA {}").format(psycopg.sql.Identifier(name)))
        admin.execute(
            psycopg.sql.SQL("CREATE SCHEMA {}").format(psycopg.sql.Identifier(name.lower()))
        )
        admin.execute(
            psycopg.sql.SQL("CREATE TABLE {}.users (id int)").format(
                psycopg.sql.Identifier(name.lower())
            )
        )
    try:
        with taskloom.connect(with_schema(server, f'"{name}"')) as tl:
            assert tl.board("t").add("in TeamB")["version"] == 1
            assert tl.store.schema == name  # type: ignore[attr-defined]
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            for schema in (name, name.lower()):
                admin.execute(
                    psycopg.sql.SQL("DROP SCHEMA {} CASCADE").format(psycopg.sql.Identifier(schema))
                )


def test_another_applications_tables_count_though_the_role_cannot_see_them(pg_url: str) -> None:
    """The information schema lists only tables the role has a privilege on: a taskloom role
    with none on the other application's tables saw an empty schema and migrated into it."""
    role = f"tl_noperm_{uuid.uuid4().hex[:8]}"
    schema = urlsplit(pg_url).query.split("search_path%3D")[-1].split("&")[0]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE users (id int PRIMARY KEY)")
        conn.execute(psycopg.sql.SQL("CREATE ROLE {} LOGIN").format(psycopg.sql.Identifier(role)))
        conn.execute(
            psycopg.sql.SQL("GRANT USAGE, CREATE ON SCHEMA {} TO {}").format(
                psycopg.sql.Identifier(schema), psycopg.sql.Identifier(role)
            )
        )
    parts = urlsplit(pg_url)
    as_role = urlunsplit(parts._replace(netloc=f"{role}@{parts.netloc.rsplit('@', 1)[-1]}"))
    try:
        tl = taskloom.connect(as_role)
        with pytest.raises(taskloom.StoreError, match=r"\(it has tables: users"):
            tl.board("t").add("x")
        tl.close()
        assert _tables(pg_url) == ["users"]
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(
                psycopg.sql.SQL("REVOKE ALL ON SCHEMA {} FROM {}").format(
                    psycopg.sql.Identifier(schema), psycopg.sql.Identifier(role)
                )
            )
            conn.execute(psycopg.sql.SQL("DROP ROLE {}").format(psycopg.sql.Identifier(role)))
