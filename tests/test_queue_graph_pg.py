"""PostgreSQL's side of the work graph: two claims racing for one group, an add racing the
end of the task it depends on, and two adds racing to close one cycle."""

from __future__ import annotations

import re
import threading
import time

import psycopg
import pytest

import taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.domain.queue import Task
from taskloom.store.graph_sql import around_sql, reaches_itself_sql
from taskloom.store.queue_sql import claim_sql, done_and_claim_sql

pytestmark = pytest.mark.postgres


def _wait_for_lock_wait(conn: psycopg.Connection[object], what: str, count: int = 1) -> None:
    """Until ``count`` statements like ``what`` wait for a lock (a row, a table, or a unique
    index entry another transaction wrote): the race is then set up, whatever the machine's
    speed."""
    for _ in range(1000):
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND query LIKE %s",
            (f"%{what}%",),
        ).fetchone()
        if row and row[0] >= count:
            return
        time.sleep(0.01)
    raise AssertionError(f"no statement like {what!r} waited for a lock")


def test_a_claim_that_loses_a_race_for_a_group_takes_another_task(pg_url: str) -> None:
    """A claim in flight holds task A of group g (uncommitted). A second claim's snapshot
    shows A ready and no task of g in progress, so it takes B of g: the group's unique index
    makes it wait for the first and then fail, changing nothing. Run again on a new
    snapshot, it sees A in progress and takes the free task instead."""
    with taskloom.connect(pg_url) as tl:
        a, _ = tl.queue.add("A", group_key="g", priority=1)
        b, _ = tl.queue.add("B", group_key="g", priority=2)
        free, _ = tl.queue.add("free", priority=3)
        got: list[Task | None] = []
        errors: list[BaseException] = []

        def second() -> None:
            try:
                got.append(tl.queue.claim("second", lease=60))
            except BaseException as exc:
                errors.append(exc)

        with psycopg.connect(pg_url) as first, psycopg.connect(pg_url, autocommit=True) as watch:
            first.execute(
                "UPDATE tasks SET status = 'in_progress', claimed_by = 'first',"
                " lease_expires_at = 4e9, lease_token = 'x', attempts = 1 WHERE id = %s",
                (a.id,),
            )
            thread = threading.Thread(target=second)
            thread.start()
            _wait_for_lock_wait(watch, "UPDATE tasks SET status = 'in_progress'")
            first.commit()
            thread.join(30)
        assert not errors, errors
        assert got and got[0] is not None and got[0].id == free.id
        assert tl.queue.get(b.id).status == "ready"
        running = tl.queue.list(status="in_progress")
        assert sorted(t.title for t in running) == ["A", "free"]


def test_an_add_racing_the_end_of_its_dependency_is_blocked(pg_url: str) -> None:
    """An add reads the task it depends on (ready) and holds it until it commits: the
    failure that ends that task waits, and its trigger then finds the new dependent and
    blocks it. Without the hold the dependent would wait for ever, ready but never
    claimable."""
    with taskloom.connect(pg_url) as tl:
        a, _ = tl.queue.add("A", max_attempts=1)
        held = tl.queue.claim("w", lease=60)
        assert held is not None
        with tl.store.write() as tx:
            known = tl.store.tasks.statuses(tx, [a.id])  # what an add reads, and holds
            assert known[a.id][0] == "in_progress"
            failing = threading.Thread(
                target=tl.queue.fail, args=(a.id, held.lease_token or "", "broken")
            )
            failing.start()
            with psycopg.connect(pg_url, autocommit=True) as watch:
                _wait_for_lock_wait(watch, "UPDATE tasks SET status")
            tx.execute(
                "INSERT INTO tasks (id, title, created_at, depends_on) VALUES ('b', 'B', 1, ?)",
                (f'["{a.id}"]',),
            )
            tx.execute(
                "INSERT INTO task_deps (task_id, position, depends_on) VALUES ('b', 0, ?)",
                (a.id,),
            )
        failing.join(30)
        assert tl.queue.get(a.id).status == "dead"
        assert tl.queue.get("b").status == "blocked"


def test_a_prune_racing_an_add_that_depends_on_a_dead_task_keeps_that_task(pg_url: str) -> None:
    """An add holds the dead task it depends on until it commits; the prune waited for it,
    but had decided which dead tasks stay before the new dependent was committed, and
    deleted the task: the dependent stayed blocked by a task no one could requeue."""
    with taskloom.connect(pg_url) as tl:
        x, _ = tl.queue.add("X", max_attempts=1)
        held = tl.queue.claim("w", lease=60)
        assert held is not None
        tl.queue.fail(x.id, held.lease_token or "", "broken")
        pruned: list[int] = []
        with tl.store.write() as tx:
            known = tl.store.tasks.statuses(tx, [x.id])  # what an add reads, and holds
            assert known[x.id][0] == "dead"
            pruning = threading.Thread(target=lambda: pruned.append(tl.queue.prune(0)))
            pruning.start()
            with psycopg.connect(pg_url, autocommit=True) as watch:
                _wait_for_lock_wait(watch, "FROM tasks")
            tx.execute(
                "INSERT INTO tasks (id, title, created_at, depends_on, status, result)"
                " VALUES ('b', 'B', 1, ?, 'blocked', 'blocked by X')",
                (f'["{x.id}"]',),
            )
            tx.execute(
                "INSERT INTO task_deps (task_id, position, depends_on) VALUES ('b', 0, ?)",
                (x.id,),
            )
        pruning.join(30)
        assert pruned == [0]
        assert tl.queue.get(x.id).status == "dead"
        tl.queue.requeue(x.id)
        assert tl.queue.get("b").status == "ready"


def test_two_adds_closing_halves_of_one_key_cycle_at_once_are_not_both_taken(
    pg_url: str,
) -> None:
    """A waits for key b, C for key d. B (key b, waits for c) and D (key d, waits for a),
    added at once, lock different keys, and each closes half of the cycle A-B-C-D-A without
    seeing the other's half: both were taken, and the four tasks waited for ever. Held at
    their writes of the graph until both are in flight, one of them is refused."""
    with taskloom.connect(pg_url) as tl:
        tl.queue.add("A", dedup_key="a", depends_on_keys=["b"])
        tl.queue.add("C", dedup_key="c", depends_on_keys=["d"])
    said: list[str] = []

    def add(title: str, key: str, waits: str) -> None:
        with taskloom.connect(pg_url) as own:
            try:
                own.queue.add(title, dedup_key=key, depends_on_keys=[waits])
                said.append(f"{title} added")
            except InvalidInput as exc:
                said.append(str(exc))

    with psycopg.connect(pg_url) as hold, psycopg.connect(pg_url, autocommit=True) as watch:
        hold.execute("LOCK TABLE task_deps IN EXCLUSIVE MODE")  # reads go on, writes wait
        racing = [
            threading.Thread(target=add, args=("B", "b", "c")),
            threading.Thread(target=add, args=("D", "d", "a")),
        ]
        for thread in racing:
            thread.start()
        _wait_for_lock_wait(watch, "", count=2)
        hold.commit()
        for thread in racing:
            thread.join(30)
    assert len(said) == 2 and sum(s.endswith(" added") for s in said) == 1, said
    assert any("its dependencies make a cycle" in s for s in said), said


def test_claims_test_dependencies_task_by_task_on_a_large_graph(pg_url: str) -> None:
    """A graph of 3,000 tasks, analysed: every claim statement tests a candidate's
    dependencies through the indexes. A hashed subplan would read every dependency (and
    every unfinished task) again for each claim, which made a graph drain six times slower
    than a flat queue."""
    tasks: list[dict[str, object]] = [{"title": "root", "ref": "r0"}]
    tasks += [{"title": f"t{i}", "ref": f"r{i}", "after": [f"r{i - 1}"]} for i in range(1, 3000)]
    with taskloom.connect(pg_url) as tl:
        tl.queue.max_active = 10_000
        tl.queue.add_many(tasks)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ANALYZE")
    now = 2e9
    claim = ["a", 1, "h", now, now + 300, "tok", now, "a", now, now]
    statements = {
        "claim": (claim_sql("postgres", 0, 1), claim),
        "claim_batch": (claim_sql("postgres", 0, 10), [*claim, "a", now, now]),
        "done_and_claim": (done_and_claim_sql(0), [now, now, None, "x", "tok", *claim]),
    }
    with taskloom.connect(pg_url) as tl, tl.store.read() as tx:
        for name, (sql, params) in statements.items():
            plan = [r["QUERY PLAN"] for r in tx.query("EXPLAIN " + sql, params)]
            assert any("task_deps" in line for line in plan), (name, plan)
            assert hashed_subplans(plan) <= {"done"}, (name, "\n".join(plan))


def hashed_subplans(plan: list[str]) -> set[str]:
    """What each hashed subplan of an ``EXPLAIN`` reads: the name after its first node's
    ``on`` (a table, or a CTE)."""
    hashed = {n for line in plan for n in re.findall(r"hashed SubPlan (\d+)", line)}
    read = set()
    for at, line in enumerate(plan):
        found = re.search(r"SubPlan (\d+)$", line.strip())
        if found and found.group(1) in hashed:
            node = re.search(r" on (\w+)", plan[at + 1])
            read.add(node.group(1) if node else plan[at + 1].strip())
    return read


def _chain(pg_url: str, n: int) -> list[str]:
    """A chain of ``n`` tasks, each after the one before, analysed; their ids in order."""
    tasks = [
        {"title": f"t{i}", "ref": f"r{i}", "after": [f"r{i - 1}"] if i else []} for i in range(n)
    ]
    with taskloom.connect(pg_url) as tl:
        ids = [t.id for t, _ in tl.queue.add_many(tasks)]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ANALYZE")
    return ids


def test_a_dead_task_blocks_a_long_chain_by_index_lookups(pg_url: str) -> None:
    """Ending the head of a chain dead blocks all of it, one index lookup a step: a walk
    that read the whole of ``task_deps`` at every step took seconds for a few thousand
    tasks, holding the dead task's lock throughout."""
    ids = _chain(pg_url, 600)
    with psycopg.connect(pg_url) as conn:
        scans = "SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relid = 'task_deps'::regclass"
        before = conn.execute(scans).fetchone()
        conn.execute("UPDATE tasks SET status = 'dead' WHERE id = %s", (ids[0],))
        after = conn.execute(scans).fetchone()
        assert before is not None and after is not None
        assert after[0] - before[0] <= 1, f"{after[0] - before[0]} scans of task_deps"
        conn.commit()
    with taskloom.connect(pg_url) as tl:
        assert tl.queue.stats()["blocked"] == 599


def test_walks_downstream_look_dependents_up_by_index(pg_url: str) -> None:
    """A requeue's and a key's walks downstream (``around``, ``reaches_itself``) find each
    step's dependents through the index, never by reading all of ``task_deps``."""
    ids = _chain(pg_url, 600)
    statements = {
        "around": (around_sql("postgres"), [f'["{ids[0]}"]']),
        "reaches_itself": (reaches_itself_sql("postgres"), [ids[0], ids[0]]),
    }
    with taskloom.connect(pg_url) as tl, tl.store.read() as tx:
        for name, (sql, params) in statements.items():
            plan = [r["QUERY PLAN"] for r in tx.query("EXPLAIN " + sql, params)]
            assert not any("Seq Scan on task_deps" in line for line in plan), (name, plan)


def test_a_requeue_reads_the_tasks_of_a_long_blocked_chain_once_each(pg_url: str) -> None:
    """A requeue's walk downstream (``around``) was joined to the tasks as the inner side of
    a nested loop: the whole walk read again for each task, about nine million rows and
    1.1-1.6 s for a chain of 3,000. The tasks are now read by id, the walk once; the chain
    is released all the same."""
    ids = _chain(pg_url, 600)
    with taskloom.connect(pg_url) as tl:
        head = tl.queue.claim("w", lease=60)
        assert head is not None and head.id == ids[0]
        tl.queue.fail(head.id, head.lease_token or "", "broken", retry=False)
        assert tl.queue.stats()["blocked"] == 599
        with tl.store.read() as tx:
            explain = "EXPLAIN (ANALYZE, TIMING OFF) " + around_sql("postgres")
            plan = [r["QUERY PLAN"] for r in tx.query(explain, [f'["{ids[0]}"]'])]
        loops = [
            int(n) for line in plan for n in re.findall(r"CTE Scan on down.*loops=(\d+)", line)
        ]
        assert loops and max(loops) == 1, "\n".join(plan)
        tl.queue.requeue(ids[0])
        assert tl.queue.stats()["blocked"] == 0 and tl.queue.stats()["ready"] == 600
