"""Work that must not grow with the backlog: a task ending dead or canceled reads the tasks
downstream of it, not every ready task. Measured in what the database does (SQLite's
virtual-machine steps, PostgreSQL's rows read), never in time."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

import taskloom
from tests.backends import rows_read_sql, vm_steps

END = "UPDATE tasks SET status = 'canceled', completed_at = 1, changed_at = 1 WHERE id = ?"


def _with_backlog(url: str, ready: int) -> tuple[str, str]:
    """A queue of ``ready`` tasks, and a head task with one dependent: (head, dependent)."""
    with taskloom.connect(url) as tl:
        tl.queue.max_active = ready + 10
        tl.queue.add_many({"title": f"job {i}"} for i in range(ready))
        head, _ = tl.queue.add("head")
        child, _ = tl.queue.add("child", depends_on=[head.id])
    return head.id, child.id


def _sqlite_steps(path: Path, ready: int) -> int:
    """SQLite's virtual-machine steps (in thousands) to end a task with one dependent."""
    head, child = _with_backlog(f"sqlite:///{path}", ready)
    conn = sqlite3.connect(path, isolation_level=None)
    with vm_steps(conn) as steps:
        conn.execute(END, (head,))
    row = conn.execute("SELECT status FROM tasks WHERE id = ?", (child,)).fetchone()
    conn.close()
    assert row == ("blocked",)  # the walk still found its dependent
    return steps[0]


def test_ending_a_task_on_sqlite_reads_its_dependents_not_every_ready_task(
    tmp_path: Path,
) -> None:
    small = _sqlite_steps(tmp_path / "small.db", 100)
    large = _sqlite_steps(tmp_path / "large.db", 5_000)
    assert large <= small + 2, (small, large)


@pytest.mark.postgres
def test_ending_a_task_on_postgres_reads_its_dependents_not_every_ready_task(
    pg_url: str,
) -> None:
    ready = 5_000
    head, child = _with_backlog(pg_url, ready)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ANALYZE tasks")
        with conn.transaction():
            conn.execute(END.replace("?", "%s"), (head,))
            found = conn.execute(rows_read_sql("tasks")).fetchone()
            status = conn.execute("SELECT status FROM tasks WHERE id = %s", (child,)).fetchone()
    assert status == ("blocked",)
    assert found is not None and found[0] < ready // 10, found
