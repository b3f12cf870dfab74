"""The queue's work graph on every backend: dependencies by id and by dedup key, the blocked
state and its release, mutual-exclusion groups, a DAG added in one step, ready explained."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import taskloom
from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.domain.events import TASK_STATE
from taskloom.domain.queue import Task
from taskloom.domain.readiness import Readiness
from taskloom.domain.task_graph import batch_edges, topological
from taskloom.queue.handle import Queue
from taskloom.tools.registry import ToolContext
from tests.conftest import FakeClock


def claim_all(tl: Taskloom, agent: str = "w") -> list[str]:
    """Titles of everything one claim after another takes now (each left in progress)."""
    out = []
    while (task := tl.queue.claim(agent, lease=60)) is not None:
        out.append(task.title)
    return out


def finish(tl: Taskloom, title: str) -> None:
    """Claim the task titled ``title`` (it must be the one claim takes) and complete it."""
    task = tl.queue.claim("w", lease=60)
    assert task is not None and task.title == title, task
    tl.queue.done(task.id, task.lease_token or "")


# --- pure rules -------------------------------------------------------------------------------


def test_a_batch_graph_is_ordered_and_its_mistakes_named() -> None:
    edges = batch_edges(["a", "b", None, "c"], [["b"], [], ["a", "c"], []])
    assert edges == [[1], [], [0, 3], []]
    order = topological(edges)
    assert order.index(1) < order.index(0) < order.index(2) and order.index(3) < order.index(2)
    cycle = r"task 2: .* cycle \(task 2 -> task 4 -> task 3 -> task 2\)"
    with pytest.raises(InvalidInput, match=cycle):
        topological([[], [3], [1], [2]])
    with pytest.raises(InvalidInput, match=r"task 2: 'ref' 'a' is also task 1's"):
        batch_edges(["a", "a"], [[], []])
    with pytest.raises(InvalidInput, match=r"task 1: 'after' names 'x', no task of this batch"):
        batch_edges(["a"], [["x"]])
    with pytest.raises(InvalidInput, match=r"task 1: 'after' names the task itself"):
        batch_edges(["a"], [["a"]])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"depends_on": "abc"}, "'depends_on' must be a list of text"),
        ({"depends_on": [1]}, "'depends_on' must be a list of non-blank text"),
        ({"depends_on": ["a\x00b"]}, "not a task id"),
        ({"depends_on_keys": [" "]}, r"'depends_on_keys' must not be blank \(leave a blank"),
        ({"depends_on_keys": ["k" * 513]}, "longer than 512 bytes"),
        ({"group_key": ""}, "'group_key', when given, must not be blank"),
        ({"group_key": "g" * 201}, "longer than 200 bytes"),
        ({"group_key": 3}, "'group_key' must be text"),
        ({"depends_on": [f"t{i}" for i in range(101)]}, "at most 100 others"),
    ],
)
def test_bad_graph_fields_are_refused_before_anything_is_written(
    tl: Taskloom, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        tl.queue.add("t", **fields)
    with pytest.raises(InvalidInput, match=f"task 2: .*{message}"):
        tl.queue.add_many([{"title": "fine"}, {"title": "t", **fields}])
    assert tl.queue.stats()["total"] == 0


# --- dependencies -------------------------------------------------------------------------


def test_a_task_waits_for_every_dependency_to_be_completed(tl: Taskloom) -> None:
    a, _ = tl.queue.add("A", priority=5)
    b, _ = tl.queue.add("B", priority=5)
    c, _ = tl.queue.add("C", priority=1, depends_on=[a.id, b.id])
    assert c.depends_on == (a.id, b.id) and c.status == "ready"
    held = tl.queue.claim("w", lease=60)
    assert held is not None and held.id == a.id  # C is more urgent, but waits
    tl.queue.done(a.id, held.lease_token or "")
    assert claim_all(tl) == ["B"]
    b_held = tl.queue.get(b.id)
    tl.queue.done(b.id, b_held.lease_token or "")
    assert claim_all(tl) == ["C"]


def test_a_failure_with_retries_left_keeps_its_dependents_waiting(tl: Taskloom) -> None:
    a, _ = tl.queue.add("A", max_attempts=2)
    tl.queue.add("B", depends_on=[a.id])
    held = tl.queue.claim("w", lease=60)
    assert held is not None
    tl.queue.fail(a.id, held.lease_token or "", "flaky")
    assert [t.status for t in tl.queue.list()] == ["ready", "ready"]
    finish(tl, "A")
    finish(tl, "B")


def test_a_dependency_on_no_task_is_refused_naming_it(tl: Taskloom) -> None:
    with pytest.raises(InvalidInput, match="depends on task 'nope', which does not exist"):
        tl.queue.add("B", depends_on=["nope"])
    with pytest.raises(InvalidInput, match="task 2: depends on task 'nope'"):
        tl.queue.add_many([{"title": "A"}, {"title": "B", "depends_on": ["nope"]}])
    assert tl.queue.stats()["total"] == 0


def test_a_dependency_by_key_waits_for_work_added_later(tl: Taskloom) -> None:
    b, _ = tl.queue.add("B", depends_on_keys=["build:42"])
    assert b.depends_on_keys == ("build:42",) and claim_all(tl) == []
    why = tl.queue.why(b.id)
    assert [r.code for r in why] == ["waiting_on"] and "key 'build:42'" in why[0].text
    tl.queue.add("build", dedup_key="build:42")
    assert next(r.text for r in tl.queue.why(b.id)).startswith("waiting on task ")
    finish(tl, "build")
    finish(tl, "B")


def test_a_dependency_by_key_binds_to_the_task_holding_it_or_that_held_it(tl: Taskloom) -> None:
    done, _ = tl.queue.add("old build", dedup_key="k")
    finish(tl, "old build")
    tl.queue.add("after a completed one", depends_on_keys=["k"])
    assert claim_all(tl) == ["after a completed one"]  # completed already: met
    tl.queue.add("new build", dedup_key="k")
    waiting, _ = tl.queue.add("after the live one", depends_on_keys=["k"])
    assert [r.tasks for r in tl.queue.why(waiting.id)] != [(done.id,)]
    assert claim_all(tl) == ["new build"]


def test_a_dead_dependency_blocks_its_dependents_and_theirs_until_requeued(
    tl_fixed: Taskloom,
) -> None:
    q = tl_fixed.queue
    a, _ = q.add("A", max_attempts=1)
    b, _ = q.add("B", depends_on=[a.id])
    c, _ = q.add("C", depends_on=[b.id])
    other, _ = q.add("other")
    held = q.claim("w", lease=60)
    assert held is not None and held.id == a.id
    q.fail(a.id, held.lease_token or "", "broken")
    blocked = {t.title: t for t in q.list(status="blocked")}
    assert sorted(blocked) == ["B", "C"]
    reason = f"blocked: task {a.id}, which it depends on, is dead"
    assert blocked["B"].result == reason and blocked["C"].result == reason
    assert q.get(other.id).status == "ready" and q.stats()["blocked"] == 2
    why = q.why(c.id)
    assert why[0].code == "blocked" and why[0].text == reason
    # The dead task's event comes first, then its dependents', in the same transaction.
    with tl_fixed.store.read() as tx:
        events = [e for e in tx.events_after(0, limit=1000) if e.type == TASK_STATE]
    tail = [(e.data["title"], e.data["status"]) for e in events[-3:]]
    assert tail[0] == ("A", "dead") and sorted(tail[1:]) == [("B", "blocked"), ("C", "blocked")]
    assert q.doctor()["blocked"] == sorted([b.id, c.id])
    back = q.requeue(a.id)
    assert back.status == "ready"
    assert {t.title: (t.status.value, t.result) for t in q.list()} == {
        "A": ("ready", None), "B": ("ready", None), "C": ("ready", None), "other": ("ready", None)
    }  # fmt: skip


def test_a_canceled_dependency_blocks_and_may_be_requeued_for_its_dependents(
    tl: Taskloom,
) -> None:
    a, _ = tl.queue.add("A")
    b, _ = tl.queue.add("B", depends_on=[a.id])
    lone = tl.queue.cancel(tl.queue.add("lone")[0].id)
    tl.queue.cancel(a.id, "not now")
    got = tl.queue.get(b.id)
    assert got.status == "blocked" and got.result is not None and "is canceled" in got.result
    with pytest.raises(InvalidInput, match="only a dead task is requeued, or a canceled one"):
        tl.queue.requeue(lone.id)
    with pytest.raises(InvalidInput) as refused:  # what to requeue instead, not "add it again"
        tl.queue.requeue(b.id)
    assert refused.value.message == (
        f"task '{b.id}' is blocked: task {a.id}, which it depends on, is canceled: requeue that"
        " task instead, and this one is released with it"
    )
    again = tl.queue.requeue(a.id)
    assert again.status == "ready" and again.result is None
    assert tl.queue.get(b.id).status == "ready"


class CountingTx:
    """A transaction that counts the statements run through it."""

    def __init__(self, tx: Any, counted: list[str]) -> None:
        self._tx, self._counted = tx, counted

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._tx, name)
        if name not in ("execute", "execute_many", "query", "query_one"):
            return found

        def run(sql: str, *args: Any) -> Any:
            self._counted.append(sql)
            return found(sql, *args)

        return run


def statements_of(tl: Taskloom, action: Callable[[], Any]) -> list[str]:
    """The statements ``action`` runs in the store's write transactions."""
    counted: list[str] = []
    write = tl.store.write

    @contextlib.contextmanager
    def counting() -> Iterator[Any]:
        with write() as tx:
            yield CountingTx(tx, counted)

    tl.store.write = counting  # type: ignore[method-assign]
    try:
        action()
    finally:
        del tl.store.write
    return counted


def dead_chain(tl: Taskloom, n: int) -> list[str]:
    """A chain of ``n`` tasks whose head ended dead, the rest blocked by it; their ids."""
    plan = [{"title": f"c{n}-0", "ref": "t0", "priority": 0}]
    plan += [{"title": f"c{n}-{i}", "ref": f"t{i}", "after": [f"t{i - 1}"]} for i in range(1, n)]
    ids = [t.id for t, _ in tl.queue.add_many(plan)]
    head = tl.queue.claim("w", lease=60)
    assert head is not None and head.id == ids[0]
    tl.queue.fail(head.id, head.lease_token or "", "broken", retry=False)
    return ids


def test_requeue_releases_a_long_blocked_chain_in_as_many_statements_as_a_short_one(
    tl: Taskloom,
) -> None:
    """A requeue released the tasks a dead head blocked with one UPDATE each (on
    PostgreSQL 1.2-1.6 s for a chain of 3,000); the release is one statement, and each task
    released still gets its own event, its status and result as before."""
    q = tl.queue
    short, long = dead_chain(tl, 4), dead_chain(tl, 60)
    assert q.stats()["blocked"] == 3 + 59
    with tl.store.read() as tx:
        head = tx.event_head()
    assert len(statements_of(tl, lambda: q.requeue(short[0]))) == len(
        statements_of(tl, lambda: q.requeue(long[0]))
    )
    assert q.stats()["blocked"] == 0
    for task_id in short + long:
        task = q.get(task_id)
        assert (task.status.value, task.result) == ("ready", None), task
    with tl.store.read() as tx:
        events = [e for e in tx.events_after(head, limit=1000) if e.type == TASK_STATE]
    assert sorted(e.data["id"] for e in events) == sorted(short + long)
    assert {(e.data["status"], e.data["result"]) for e in events} == {("ready", None)}


def test_a_dependency_ended_by_a_sweep_blocks_its_dependents(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """A lease that runs out on the last attempt (dead), and a ready task past its
    ``expires_at`` (canceled), block what depends on them as an explicit end does: the
    database's trigger, not the queue's method, blocks them."""
    q = tl_fixed.queue
    lapsed, _ = q.add("lapsed", max_attempts=1, priority=1)
    after_lapsed, _ = q.add("after lapsed", depends_on=[lapsed.id])
    expiring, _ = q.add("expiring", ttl_s=5, delay_s=4)
    after_expiring, _ = q.add("after expiring", depends_on=[expiring.id])
    held = q.claim("w", lease=2)
    assert held is not None and held.id == lapsed.id
    clock.advance(6)
    assert q.claim("v", lease=60) is None  # the sweep ends both; nothing is left to run
    assert q.get(lapsed.id).status == "dead" and q.get(expiring.id).status == "canceled"
    assert {t.title: t.result for t in q.list(status="blocked")} == {
        "after lapsed": f"blocked: task {lapsed.id}, which it depends on, is dead",
        "after expiring": f"blocked: task {expiring.id}, which it depends on, is canceled",
    }
    assert q.requeue(lapsed.id).status == "ready"
    assert q.get(after_lapsed.id).status == "ready"
    with pytest.raises(InvalidInput, match="expired at"):  # not after its expires_at
        q.requeue(expiring.id)
    assert q.get(after_expiring.id).status == "blocked"


def test_a_blocked_task_can_be_canceled_and_waits_end_on_it(tl: Taskloom) -> None:
    a, _ = tl.queue.add("A", max_attempts=1)
    b, _ = tl.queue.add("B", depends_on=[a.id])
    held = tl.queue.claim("w", lease=60)
    assert held is not None
    tl.queue.fail(a.id, held.lease_token or "", "no", retry=False)
    waited = tl.queue.wait(b.id, timeout=5)
    assert waited.status == "blocked"
    assert tl.queue.cancel(b.id, "give up").status == "canceled"


def test_a_task_added_after_a_dead_or_blocked_one_starts_blocked(tl: Taskloom) -> None:
    a, _ = tl.queue.add("A", max_attempts=1)
    b, _ = tl.queue.add("B", depends_on=[a.id])
    held = tl.queue.claim("w", lease=60)
    assert held is not None
    tl.queue.fail(a.id, held.lease_token or "", "no")
    c, _ = tl.queue.add("C", depends_on=[a.id])
    d, _ = tl.queue.add("D", depends_on=[b.id])
    answers = tl.queue.add_many(
        [{"title": "E", "ref": "e", "depends_on": [b.id]}, {"title": "F", "after": ["e"]}]
    )
    reason = f"blocked: task {a.id}, which it depends on, is dead"
    for task in (c, d, *(t for t, _ in answers)):
        assert (task.status, task.result) == ("blocked", reason), task.title
    tl.queue.requeue(a.id)
    assert tl.queue.stats()["blocked"] == 0


def test_a_new_task_taking_a_key_releases_the_tasks_blocked_on_the_old_one(tl: Taskloom) -> None:
    old, _ = tl.queue.add("build", dedup_key="k", max_attempts=1)
    b, _ = tl.queue.add("B", depends_on_keys=["k"])
    held = tl.queue.claim("w", lease=60)
    assert held is not None and held.id == old.id
    tl.queue.fail(old.id, held.lease_token or "", "no")
    assert tl.queue.get(b.id).status == "blocked"
    new, added = tl.queue.add("build again", dedup_key="k")
    assert added and tl.queue.get(b.id).status == "ready"
    assert [r.tasks for r in tl.queue.why(b.id)] == [(new.id,)]
    finish(tl, "build again")
    finish(tl, "B")


def test_a_requeued_task_takes_back_the_tasks_waiting_for_its_key(tl: Taskloom) -> None:
    """The key's next holder was canceled; the dead one requeued holds the key again, and
    what waits for the key waits for it, as for a new task taking the key."""
    old, _ = tl.queue.add("build", dedup_key="k", max_attempts=1)
    b, _ = tl.queue.add("B", depends_on_keys=["k"])
    held = tl.queue.claim("w", lease=60)
    assert held is not None and held.id == old.id
    tl.queue.fail(old.id, held.lease_token or "", "no")
    second, _ = tl.queue.add("build again", dedup_key="k")
    tl.queue.cancel(second.id, "wrong branch")
    assert tl.queue.get(b.id).status == "blocked"
    assert tl.queue.requeue(old.id).status == "ready"
    assert tl.queue.get(b.id).status == "ready"
    assert [r.tasks for r in tl.queue.why(b.id)] == [(old.id,)]
    finish(tl, "build")
    finish(tl, "B")


def test_a_requeue_that_would_close_a_cycle_through_its_key_is_refused(tl: Taskloom) -> None:
    q = tl.queue
    r, _ = q.add("R", dedup_key="x", depends_on_keys=["y"])
    after_r, _ = q.add("after R", depends_on=[r.id])
    q.cancel(r.id)  # "after R" is blocked by it: R may be requeued
    z, _ = q.add("Z", dedup_key="x")
    y, _ = q.add("Y", dedup_key="y", depends_on_keys=["x"])  # on Z; R now waits for Y
    q.cancel(z.id)
    with pytest.raises(InvalidInput, match=f"make a cycle: task {y.id} waits for its dedup key"):
        q.requeue(r.id)
    assert [q.get(t.id).status.value for t in (r, after_r, y)] == ["canceled", "blocked", "blocked"]


def test_a_cycle_through_dedup_keys_is_refused_and_nothing_is_added(tl: Taskloom) -> None:
    tl.queue.add("A", dedup_key="ka", depends_on_keys=["kb"])
    with pytest.raises(InvalidInput, match=r"its dependencies make a cycle: task .* waits for"):
        tl.queue.add("B", dedup_key="kb", depends_on_keys=["ka"])
    cycle = r"task 1: its dependencies make a cycle \(task 1 -> task 2"
    with pytest.raises(InvalidInput, match=cycle):
        tl.queue.add_many(
            [
                {"title": "C", "dedup_key": "kc", "depends_on_keys": ["kd"]},
                {"title": "D", "dedup_key": "kd", "depends_on_keys": ["kc"]},
            ]
        )
    with pytest.raises(InvalidInput, match="depends on itself"):
        tl.queue.add("E", dedup_key="ke", depends_on_keys=["ke"])
    assert [t.title for t in tl.queue.list()] == ["A"]


def test_prune_keeps_what_blocks_a_task_and_a_pruned_dependency_is_met(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    a, _ = q.add("A")
    finish(tl_fixed, "A")
    q.add("B", depends_on=[a.id], priority=5)
    dead, _ = q.add("D", max_attempts=1, priority=1)
    c, _ = q.add("C", depends_on=[dead.id])
    held = q.claim("w", lease=60)
    assert held is not None and held.id == dead.id
    q.fail(dead.id, held.lease_token or "", "no")
    clock.advance(30 * 86400)
    assert q.prune(86400) == 1  # A, completed; D stays: C is blocked by it
    assert {t.title for t in q.list()} == {"B", "C", "D"}
    finish(tl_fixed, "B")  # its dependency, A, was pruned: met
    assert q.get(c.id).status == "blocked"


def test_prune_keeps_a_dead_dependency_of_a_canceled_task_that_may_come_back(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """A canceled task that others are blocked by may be requeued: the dead task it depends
    on stays, or the requeue would take it for a completed dependency pruned, and run it."""
    q = tl_fixed.queue
    x, _ = q.add("X", max_attempts=1)
    y, _ = q.add("Y", depends_on=[x.id])
    z, _ = q.add("Z", depends_on=[y.id])
    held = q.claim("w", lease=60)
    assert held is not None and held.id == x.id
    q.fail(x.id, held.lease_token or "", "no")
    q.cancel(y.id, "not this one")  # Z stays blocked
    clock.advance(30 * 86400)
    assert q.prune(86400) == 0
    assert q.requeue(y.id).status == "blocked"
    assert q.why(y.id)[0].text == f"blocked: task {x.id}, which it depends on, is dead"
    assert q.claim("w") is None
    # Canceled since, and nothing left downstream that may run: all of it goes in one prune.
    q.cancel(z.id)
    q.cancel(y.id)
    clock.advance(30 * 86400)
    assert q.prune(86400) == 3 and q.list() == []


# --- groups -----------------------------------------------------------------------------------


def test_a_group_runs_one_task_at_a_time(tl: Taskloom) -> None:
    one, _ = tl.queue.add("one", group_key="repo", priority=1)
    tl.queue.add("two", group_key="repo", priority=2)
    tl.queue.add("free", priority=3)
    assert claim_all(tl) == ["one", "free"]
    held = tl.queue.get(one.id)
    why = tl.queue.ready(explain=True).waiting
    assert [(t.title, [r.code for r in r_]) for t, r_ in why] == [("two", ["group_held"])]
    tl.queue.done(one.id, held.lease_token or "")
    assert claim_all(tl) == ["two"]


def test_a_batch_claim_takes_at_most_one_task_of_a_group(tl: Taskloom) -> None:
    for i in range(4):
        tl.queue.add(f"g{i}", group_key="g", priority=i)
    tl.queue.add("free", priority=10)
    batch = tl.queue.claim_batch("w", 10, lease=60)
    assert [t.title for t in batch] == ["g0", "free"]
    assert tl.queue.claim_batch("w", 10, lease=60) == []


def test_a_batch_claim_passes_over_a_task_of_the_group_that_waits(tl: Taskloom) -> None:
    tl.queue.add("waits", group_key="g", priority=1, depends_on_keys=["never"])
    tl.queue.add("runs", group_key="g", priority=2)
    tl.queue.add("also", group_key="g", priority=3)
    assert [t.title for t in tl.queue.claim_batch("w", 10, lease=60)] == ["runs"]


def test_done_and_claim_takes_the_next_task_of_the_group_and_a_dependent(tl: Taskloom) -> None:
    a, _ = tl.queue.add("A", group_key="g", priority=1)
    tl.queue.add("B", group_key="g", priority=2)
    tl.queue.add("after A", depends_on=[a.id], priority=0)
    held = tl.queue.claim("w", lease=60)
    assert held is not None and held.id == a.id
    _, nxt = tl.queue.done_and_claim(a.id, held.lease_token or "", "w", lease=60)
    assert nxt is not None and nxt.title == "after A"
    _, nxt = tl.queue.done_and_claim(nxt.id, nxt.lease_token or "", "w", lease=60)
    assert nxt is not None and nxt.title == "B"


def test_a_lapsed_lease_holds_its_group_until_a_claim_takes_it_back(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    q.add("one", group_key="g", priority=1)
    q.add("two", group_key="g", priority=2)
    assert q.claim("w", lease=10) is not None
    clock.advance(11)
    assert [t.title for t in q.ready().ready] == ["one"]  # its own lapsed lease holds nothing
    assert q.ready_count("v") == 1
    got = q.claim("v", lease=10)  # the sweep returns "one", which is more urgent
    assert got is not None and got.title == "one" and got.attempts == 2


def _explained_high_first(q: Queue, high: Task, low: Task) -> Readiness:
    """``ready --explain`` and ``why`` for agent ``v``: ``high`` can run, and ``low`` waits
    for it, its group's turn."""
    found = q.ready("v", explain=True)
    assert [t.title for t in found.ready] == ["high"] and found.count == 1
    why = [(t.title, [(r.code, r.tasks) for r in rs]) for t, rs in found.waiting]
    assert why == [("low", [("group_queued", (high.id,))])]
    assert q.why(high.id, "v") == []
    assert [(r.code, r.tasks) for r in q.why(low.id, "v")] == [("group_queued", (high.id,))]
    return found


def lapsed_low_holder(q: Queue, clock: FakeClock) -> tuple[Task, Task]:
    """Group ``g``: ``low`` claimed by ``w`` and its lease lapsed (no sweep has run since),
    and ``high``, more urgent, ready: the tasks ``low`` and ``high``."""
    low, _ = q.add("low", group_key="g", priority=5)
    held = q.claim("w", lease=10)
    assert held is not None and held.id == low.id
    high, _ = q.add("high", group_key="g", priority=1)
    clock.advance(11)
    return low, high


def test_ready_explained_after_a_less_urgent_holders_lease_lapsed_names_what_a_claim_takes(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """``tasks ready --explain`` listed a group's lapsed holder as ready, and the more urgent
    task of its group as held by it, while a claim sweeps the holder back and takes the more
    urgent task: the explanation now says what a claim hands out."""
    q = tl_fixed.queue
    low, high = lapsed_low_holder(q, clock)
    found = _explained_high_first(q, high, low)
    tool = tl_fixed.tools.dispatch("task_ready", {"explain": True}, ToolContext(agent_id="v"))
    assert [t["title"] for t in tool.data["ready"]] == ["high"]
    assert [t["title"] for t in tool.data["waiting"]] == ["low"]
    got = q.claim("v", lease=10)
    assert got is not None and got.id == found.ready[0].id == high.id
    assert q.get(low.id).status == "ready"


def test_ready_explained_after_a_more_urgent_holders_lease_lapsed_names_what_a_claim_takes(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    high, _ = q.add("high", group_key="g", priority=1)
    held = q.claim("w", lease=10)
    assert held is not None and held.id == high.id
    low, _ = q.add("low", group_key="g", priority=5)
    clock.advance(11)
    _explained_high_first(q, high, low)
    got = q.claim("v", lease=10)
    assert got is not None and got.id == high.id and got.attempts == 2


def test_ready_explained_after_a_lapsed_holder_with_no_attempts_left_frees_its_group(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    spent, _ = q.add("spent", group_key="g", priority=1, max_attempts=1)
    assert q.claim("w", lease=10) is not None
    nxt, _ = q.add("next", group_key="g", priority=5)
    clock.advance(11)
    found = q.ready("v", explain=True)
    assert [t.title for t in found.ready] == ["next"]
    why = [(t.title, [r.code for r in rs]) for t, rs in found.waiting]
    assert why == [("spent", ["no_attempts"])]
    got = q.claim("v", lease=10)
    assert got is not None and got.id == nxt.id and q.get(spent.id).status == "dead"


def test_why_says_a_task_of_a_group_waits_for_a_more_urgent_one(tl: Taskloom) -> None:
    q = tl.queue
    first, _ = q.add("first", group_key="g", priority=1)
    second, _ = q.add("second", group_key="g", priority=2)
    assert [(r.code, r.tasks) for r in q.why(second.id)] == [("group_queued", (first.id,))]
    assert q.why(first.id) == []
    claimed = q.claim("w")
    assert claimed is not None and claimed.id == first.id


@pytest.mark.slow
def test_racing_claims_never_hold_two_tasks_of_one_group(db_url: str) -> None:
    """Eight threads, each with its own connection, claim as fast as they can from groups
    of ten: at any moment at most one task of a group is in progress (the database's
    index would refuse a second), and every task is done once."""
    groups, per_group = 5, 10
    with taskloom.connect(db_url) as tl:
        tl.queue.add_many(
            [
                {"title": f"{g}-{i}", "group_key": f"g{g}"}
                for g in range(groups)
                for i in range(per_group)
            ]
        )
    done: list[str] = []
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            with taskloom.connect(db_url) as tl:
                idle = 0
                while idle < 50:
                    task = tl.queue.claim(f"w{n}", lease=60)
                    if task is None:
                        idle += 1
                        threading.Event().wait(0.01)
                        continue
                    idle = 0
                    running = tl.queue.list(status="in_progress", limit=1000)
                    mine = [t for t in running if t.group_key == task.group_key]
                    assert [t.id for t in mine] == [task.id], mine
                    tl.queue.done(task.id, task.lease_token or "")
                    done.append(task.id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert len(done) == len(set(done)) == groups * per_group


# --- a DAG in one step ------------------------------------------------------------------------


def test_add_many_takes_a_graph_with_forward_references(tl: Taskloom) -> None:
    answers = tl.queue.add_many(
        [
            {"title": "deploy", "ref": "deploy", "after": ["test", "docs"]},
            {"title": "test", "ref": "test", "after": ["build"]},
            {"title": "build", "ref": "build"},
            {"title": "docs", "ref": "docs"},
        ]
    )
    ids = {t.title: t.id for t, _ in answers}
    deploy = answers[0][0]
    assert deploy.depends_on == (ids["test"], ids["docs"])
    order = []
    while (task := tl.queue.claim("w", lease=60)) is not None:
        order.append(task.title)
        tl.queue.done(task.id, task.lease_token or "")
    assert order.index("build") < order.index("test") < order.index("deploy")
    assert order.index("docs") < order.index("deploy") and len(order) == 4


def test_a_cycle_through_thousands_of_tasks_is_named_in_one_short_line(tl: Taskloom) -> None:
    n = 3000
    tasks = [{"title": f"t{i}", "ref": f"r{i}", "after": [f"r{(i + 1) % n}"]} for i in range(n)]
    with pytest.raises(InvalidInput) as refused:
        tl.queue.add_many(tasks)
    assert refused.value.message == (
        "task 1: its dependencies make a cycle (task 1 -> task 2 -> task 3 -> task 4 ->"
        " … 2,993 more … -> task 2998 -> task 2999 -> task 3000 -> task 1)"
    )
    assert tl.queue.list() == []


def test_add_many_is_all_or_nothing_and_names_the_bad_task(tl: Taskloom) -> None:
    tl.queue.add("existing", dedup_key="x")
    for tasks, message in (
        ([{"title": "a", "ref": "a"}, {"title": "b", "after": ["a", "c"]}], "task 2: 'after'"),
        ([{"title": "a", "ref": "a", "after": ["b"]}, {"title": "b", "ref": "b", "after": ["a"]}],
         "task 1: its dependencies make a cycle \\(task 1 -> task 2 -> task 1\\)"),
        ([{"title": "a"}, {"title": "b", "depends_on": ["missing"]}], "task 2: depends on task"),
        ([{"title": "a", "ref": 3}], "task 1: 'ref' must be non-blank text"),
    ):  # fmt: skip
        with pytest.raises(InvalidInput, match=message):
            tl.queue.add_many(tasks)
    assert [t.title for t in tl.queue.list()] == ["existing"]


def test_a_ref_to_a_dedup_hit_means_the_live_task(tl: Taskloom) -> None:
    live, _ = tl.queue.add("build", dedup_key="build")
    answers = tl.queue.add_many(
        [
            {"title": "build", "ref": "b", "dedup_key": "build"},
            {"title": "test", "after": ["b"]},
        ]
    )
    assert answers[0] == (live, False)
    assert answers[1][0].depends_on == (live.id,)


# --- ready, explained -------------------------------------------------------------------------


def test_ready_says_what_can_run_and_why_the_rest_cannot(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    q = tl_fixed.queue
    a, _ = q.add("A", priority=1, group_key="g")
    q.add("B", priority=2, group_key="g")
    q.add("C", priority=3, depends_on=[a.id])
    q.add("D", priority=4, delay_s=60)
    q.add("E", priority=5, target_agent="other")
    q.add("F", priority=6, depends_on_keys=["later"])
    found = q.ready("me", explain=True)
    assert [t.title for t in found.ready] == ["A"] and found.count == 1
    why = {t.title: {r.code: r for r in rs} for t, rs in found.waiting}
    assert sorted(why) == ["B", "C", "D", "E", "F"]
    assert why["B"]["group_queued"].tasks == (a.id,)
    assert why["C"]["waiting_on"].tasks == (a.id,)
    assert why["C"]["waiting_on"].text == f"waiting on task {a.id} (ready)"
    assert why["D"]["not_before"].text == "not before 2026-01-01T12:01:00.000Z"
    assert why["E"]["reserved_for"].text == "reserved for agent 'other'"
    assert "key 'later' (no task holds it yet)" in why["F"]["waiting_on"].text
    assert [t.title for t in q.ready().ready] == ["A", "E"]  # any agent: E is someone's
    held = q.claim("me", lease=60)
    assert held is not None and held.id == a.id
    why = {t.title: {r.code for r in rs} for t, rs in q.ready("me", explain=True).waiting}
    assert why["B"] == {"group_held"} and why["C"] == {"waiting_on"}
    data = q.ready(explain=True, limit=1).to_dict(0)
    assert data["count"] == 1 and len(data["waiting"]) == 1
    assert data["waiting"][0]["why"][0]["code"] in {"group_held", "waiting_on"}


def test_ready_on_no_database_is_empty_and_makes_none(tmp_path: Any) -> None:
    with taskloom.connect(f"sqlite:///{tmp_path / 'none.db'}") as tl:
        assert tl.queue.ready(explain=True).count == 0
    assert not (tmp_path / "none.db").exists()


# --- lapsed leases, shown as what they are ----------------------------------------------------


def test_a_lapsed_lease_is_shown_as_lease_expired(tl_fixed: Taskloom, clock: FakeClock) -> None:
    q = tl_fixed.queue
    task, _ = q.add("short")
    q.add("waiting")
    assert q.claim("w", lease=10) is not None
    assert q.stats()["in_progress"] == 1 and q.stats()["lease_expired"] == 0
    clock.advance(11)
    stats = q.stats()
    assert stats["in_progress"] == 0 and stats["lease_expired"] == 1 and stats["total"] == 2
    assert [t.title for t in q.list(status="ready")] == ["short", "waiting"]
    assert [t.title for t in q.list(status="lease_expired")] == ["short"]
    assert q.list(status="in_progress") == []
    assert [t.title for t in q.ready().ready] == ["short", "waiting"]
    report = q.doctor()
    assert report["lease_expired"] == [task.id] and report["fixed"] == []
    assert q.doctor(fix=True)["fixed"] == [task.id] == report["lease_expired"]
    assert q.get(task.id).status == "ready"
