"""The worker loop: handlers' answers and failures reach the queue, the lease outlives slow
work, an interrupt gives the task back, and a stop claims nothing more. Both backends."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest

import taskloom
from taskloom import InvalidInput, NoRetry, Outcome, TaskFailed, Taskloom, Worker, WorkSummary
from taskloom.domain.queue import MAX_TEXT_BYTES, Task


def titles(tl: Taskloom, status: str) -> list[str]:
    return sorted(t.title for t in tl.queue.list(status=status))


def test_a_worker_drains_the_queue_most_urgent_first(tl: Taskloom) -> None:
    for title, priority in (("b", 5), ("a", 1), ("c", 9)):
        tl.queue.add(title, priority=priority)
    seen: list[Outcome] = []
    starts: list[str] = []

    def started(task: Task) -> None:
        assert task.status == "in_progress" and task.claimed_by == "w1"
        starts.append(task.title)

    worker = Worker(
        tl.queue, "w1", lambda t: f"did {t.title}", on_start=started, on_outcome=seen.append
    )
    summary = worker.run(until_empty=True)
    assert (summary.completed, summary.failed, summary.handled) == (3, 0, 3)
    assert starts == [o.task.title for o in seen] == ["a", "b", "c"]
    assert [o.kind for o in seen] == ["completed"] * 3
    assert [o.task for o in seen] == [tl.queue.get(o.task.id) for o in seen]  # as stored
    for task in tl.queue.list(status="completed"):
        assert task.result == f"did {task.title}" and task.claimed_by == "w1"
        assert task.attempts == 1 and task.lease_token is None


def test_a_failing_handler_fails_the_task_until_it_is_dead(tl: Taskloom) -> None:
    task, _ = tl.queue.add("flaky", max_attempts=2)

    def boom(t: Task) -> str:
        raise ValueError(f"boom on attempt {t.attempts}")

    summary = Worker(tl.queue, "w1", boom).run(until_empty=True)
    assert (summary.failed, summary.dead, summary.completed) == (1, 1, 0)
    dead = tl.queue.get(task.id)
    assert dead.status == "dead" and dead.attempts == 2
    assert dead.last_error == "ValueError: boom on attempt 2"


def test_task_failed_keeps_its_message_and_no_retry_goes_dead_at_once(tl: Taskloom) -> None:
    retried, _ = tl.queue.add("retried", priority=1, max_attempts=3)
    hopeless, _ = tl.queue.add("hopeless", priority=2, max_attempts=3)

    def handler(t: Task) -> str:
        if t.title == "hopeless":
            raise NoRetry("the input is malformed")
        if t.attempts == 1:
            raise TaskFailed("upstream returned 503")
        return "ok"

    summary = Worker(tl.queue, "w1", handler).run(until_empty=True)
    assert (summary.completed, summary.failed, summary.dead) == (1, 1, 1)
    assert tl.queue.get(retried.id).status == "completed"
    assert tl.queue.get(retried.id).last_error == "upstream returned 503"
    gone = tl.queue.get(hopeless.id)
    assert gone.status == "dead" and gone.attempts == 1
    assert gone.last_error == "the input is malformed"


def test_the_lease_is_renewed_while_the_handler_runs(tl: Taskloom, db_url: str) -> None:
    task, _ = tl.queue.add("slow")
    other = taskloom.connect(db_url)
    stolen: list[Task | None] = []

    def slow(t: Task) -> str:
        time.sleep(1.6)  # past the first lease's end
        stolen.append(other.queue.claim("w2", lease=60))  # its sweep sees no expired lease
        time.sleep(0.6)
        return "done slowly"

    try:
        summary = Worker(tl.queue, "w1", slow, lease=1.0).run(until_empty=True)
    finally:
        other.close()
    assert stolen == [None]
    assert summary.completed == 1
    done = tl.queue.get(task.id)
    assert done.status == "completed" and done.attempts == 1 and done.result == "done slowly"


def test_a_result_refused_for_a_lost_lease_is_counted_lost(tl: Taskloom) -> None:
    task, _ = tl.queue.add("taken away")
    tl.queue.add("next one", priority=200)

    def handler(t: Task) -> str:
        if t.id == task.id:
            tl.queue.cancel(t.id, "no longer wanted")
        return "finished"

    summary = Worker(tl.queue, "w1", handler).run(until_empty=True)
    assert (summary.lost, summary.completed) == (1, 1)
    canceled = tl.queue.get(task.id)
    assert canceled.status == "canceled" and canceled.result == "no longer wanted"


def test_a_lease_lost_while_the_handler_runs_is_noticed_by_its_renewal(
    tl: Taskloom, caplog: pytest.LogCaptureFixture
) -> None:
    """The renewal finds the lease gone (here canceled): the worker records nothing and
    counts the task lost, and the next claim of another task is renewed as usual."""
    task, _ = tl.queue.add("taken away")
    later, _ = tl.queue.add("slow but fine", priority=200)

    def handler(t: Task) -> str:
        if t.id == task.id:
            tl.queue.cancel(t.id, "no longer wanted")
        time.sleep(1.6)  # past a renewal (a third of the lease old, looked for every sixth)
        return "finished"

    seen: list[Outcome] = []
    with caplog.at_level(logging.WARNING, logger="taskloom.queue.worker"):
        summary = Worker(tl.queue, "w1", handler, lease=1.0, on_outcome=seen.append).run(
            until_empty=True
        )
    assert [(o.task.id, o.kind) for o in seen] == [(task.id, "lost"), (later.id, "completed")]
    assert f"lease on task {task.id} was lost while the worker held it" in caplog.text
    assert f"lease on task {later.id}" not in caplog.text
    assert (summary.lost, summary.completed) == (1, 1)
    assert tl.queue.get(task.id).result == "no longer wanted"
    done = tl.queue.get(later.id)
    assert done.status == "completed" and done.attempts == 1


def test_stop_finishes_the_task_in_hand_and_claims_no_other(tl: Taskloom) -> None:
    for n in range(3):
        tl.queue.add(f"t{n}", priority=n)
    worker: Worker

    def handler(t: Task) -> str:
        worker.stop()
        return "one"

    worker = Worker(tl.queue, "w1", handler)
    summary = worker.run()
    assert summary.completed == 1
    assert titles(tl, "completed") == ["t0"]
    assert titles(tl, "ready") == ["t1", "t2"]  # not claimed along with the completion


def test_max_tasks_stops_after_that_many(tl: Taskloom) -> None:
    for n in range(3):
        tl.queue.add(f"t{n}", priority=n)
    summary = Worker(tl.queue, "w1", lambda t: None).run(max_tasks=2)
    assert summary.completed == 2
    assert titles(tl, "ready") == ["t2"]
    assert tl.queue.list(status="in_progress") == []


def test_an_interrupt_gives_the_task_back_then_propagates(tl: Taskloom) -> None:
    task, _ = tl.queue.add("interrupted")
    seen: list[Outcome] = []

    def handler(t: Task) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Worker(tl.queue, "w1", handler, on_outcome=seen.append).run(until_empty=True)
    back = tl.queue.get(task.id)
    assert back.status == "ready" and back.attempts == 0 and back.claimed_by is None
    assert [o.kind for o in seen] == ["released"]


def test_answers_become_results(tl: Taskloom) -> None:
    data, _ = tl.queue.add("data", priority=1)
    huge, _ = tl.queue.add("huge", priority=2)
    odd, _ = tl.queue.add("odd", priority=3)

    def handler(t: Task) -> object:
        return {"data": {"n": 1}, "huge": "x" * (MAX_TEXT_BYTES + 10), "odd": object()}[t.title]

    seen: list[Outcome] = []
    Worker(tl.queue, "w1", handler, on_outcome=seen.append).run(until_empty=True)  # type: ignore[arg-type]
    assert tl.queue.get(data.id).result == '{"n": 1}'
    assert tl.queue.get(huge.id).result == "x" * MAX_TEXT_BYTES
    cut = next(o for o in seen if o.task.id == huge.id)
    assert f"longer than {MAX_TEXT_BYTES} bytes" in cut.note
    refused = tl.queue.get(odd.id)
    assert refused.status == "dead" and refused.attempts == 3  # failed on every attempt
    assert "returned object, which is not text" in (refused.last_error or "")


def run_until_completed(
    tl: Taskloom, worker: Worker, task_id: Callable[[], str]
) -> list[WorkSummary]:
    """Run ``worker`` in a thread until the task ``task_id()`` names (called once the worker
    runs) is completed, 30 s at most, then stop it; what ``run()`` returned."""
    summaries: list[WorkSummary] = []
    thread = threading.Thread(target=lambda: summaries.append(worker.run()))
    thread.start()
    try:
        deadline, tid = time.monotonic() + 30, task_id()
        while tl.queue.get(tid).status != "completed" and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        worker.stop()
        thread.join(timeout=30)
    assert not thread.is_alive()
    return summaries


def test_an_idle_worker_picks_up_work_added_later(tl: Taskloom) -> None:
    added: list[Task] = []

    def add_later() -> str:
        time.sleep(0.3)  # the worker has found nothing and waits
        added.append(tl.queue.add("added later")[0])
        return added[0].id

    summaries = run_until_completed(
        tl, Worker(tl.queue, "w1", lambda t: "late", poll=0.05), add_later
    )
    assert tl.queue.get(added[0].id).result == "late" and summaries[0].completed == 1


def counting_claims(tl: Taskloom, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many tasks each of the worker's own claims (not its completions') asked for."""
    asked: list[int] = []
    claim_batch = tl.queue.claim_batch

    def counted(agent_id: str, n: int, **kwargs: object) -> list[Task]:
        asked.append(n)
        return claim_batch(agent_id, n, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tl.queue, "claim_batch", counted)
    return asked


def test_a_completion_that_finds_the_queue_empty_ends_a_drain_without_asking_again(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    for title in ("a", "b", "c"):
        tl.queue.add(title)
    asked = counting_claims(tl, monkeypatch)
    summary = Worker(tl.queue, "w1", lambda t: None).run(until_empty=True)
    assert summary.completed == 3 and tl.queue.stats()["ready"] == 0
    assert asked == [1]  # the first claim; each completion claimed the next, the last none


def test_a_polling_worker_waits_its_poll_before_looking_again(
    tl: Taskloom, monkeypatch: pytest.MonkeyPatch
) -> None:
    task, _ = tl.queue.add("only")
    asked = counting_claims(tl, monkeypatch)
    run_until_completed(tl, Worker(tl.queue, "w1", lambda t: None, poll=600), lambda: task.id)
    assert tl.queue.get(task.id).status == "completed"
    assert asked == [1]  # its completion found nothing; the next look is a poll away


def test_bad_settings_are_refused(tl: Taskloom) -> None:
    with pytest.raises(InvalidInput, match="agent id"):
        Worker(tl.queue, " ", lambda t: None)
    for lease in (0, 1e-9, 0.5):  # 1e-9: the lease thread renewed without end, holding its lock
        with pytest.raises(InvalidInput, match="lease"):
            Worker(tl.queue, "w", lambda t: None, lease=lease)
    with pytest.raises(InvalidInput, match="callable"):
        Worker(tl.queue, "w", "not a function")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="max_tasks"):
        Worker(tl.queue, "w", lambda t: None).run(max_tasks=0)


def test_a_busy_database_delays_the_worker_without_stopping_it(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from taskloom.store import sqlite as sqlite_store

    monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT_MS", 100)
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("wait for the lock")
    path = sqlite_url.removeprefix("sqlite:///")
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the database
    threading.Timer(0.8, lambda: holder.execute("COMMIT")).start()
    try:
        summary = Worker(tl.queue, "w1", lambda t: "got it", poll=0.1).run(max_tasks=1)
    finally:
        holder.close()
    assert summary.completed == 1 and tl.queue.get(task.id).result == "got it"


def test_a_completion_outlasting_the_retries_pauses_is_recorded_within_the_lease_told_once(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The database stays locked from the handler's end for longer than the pauses between
    tries add up to: the worker gave up there, raised, and the work was done again once the
    lease ended. It now tries on, its last pause repeated, while the lease lasts. The outage
    is one warning, and one line when it is over, not a warning per try."""
    import sqlite3

    from taskloom.queue import worker as worker_module
    from taskloom.store import sqlite as sqlite_store

    monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(worker_module, "FINISH_RETRIES_S", (0.05, 0.1))
    tl = taskloom.connect(sqlite_url)
    task, _ = tl.queue.add("finish while locked")
    holder = sqlite3.connect(
        sqlite_url.removeprefix("sqlite:///"), isolation_level=None, check_same_thread=False
    )

    release = threading.Timer(1.5, lambda: holder.execute("COMMIT"))

    def handler(t: Task) -> str:
        holder.execute("BEGIN IMMEDIATE")  # held for 1.5 s: ten times the pauses' sum
        release.start()
        return "done after the lock"

    caplog.set_level(logging.INFO, logger="taskloom.queue.worker")
    try:
        summary = Worker(tl.queue, "w1", handler, lease=10).run(max_tasks=1)
    finally:
        release.join()
        holder.close()
    assert summary.completed == 1
    done = tl.queue.get(task.id)
    assert (done.status, done.result, done.attempts) == ("completed", "done after the lock", 1)
    told = [r for r in caplog.records if "record the end of task" in r.getMessage()]
    assert [r.levelno for r in told] == [logging.WARNING, logging.INFO], told
    assert re.search(r"again, after (\d+) failed tries", told[1].getMessage())
    assert int(re.search(r"after (\d+)", told[1].getMessage())[1]) > 3  # type: ignore[index]


def test_a_worker_starting_runs_at_once_a_task_a_dead_worker_of_this_host_held(
    tl: Taskloom, db_url: str
) -> None:
    """A worker killed mid-task left its claim for the lease's length (here 10 minutes):
    the next worker on the host found nothing ready. It now gives such claims back as it
    starts (only a dead process's: a live one's claim stays)."""
    tl.queue.add("one")
    tl.queue.add("two")
    claim = f"import taskloom; taskloom.connect({db_url!r}).queue.claim('gone', lease=600)"
    subprocess.run([sys.executable, "-c", claim], check=True, timeout=60)  # then it is gone
    held = tl.queue.claim("alive", lease=600)  # this process: alive
    assert held is not None
    [orphan] = tl.queue.list(status="in_progress", agent="gone")
    seen: list[str] = []
    summary = Worker(tl.queue, "w1", lambda t: seen.append(t.id) and None).run(until_empty=True)
    assert seen == [orphan.id] and summary.completed == 1
    assert tl.queue.get(orphan.id).status == "completed"
    assert tl.queue.get(held.id).claimed_by == "alive"


def test_a_batch_worker_acknowledges_its_completions_together(tl: Taskloom) -> None:
    for n in range(7):
        tl.queue.add(f"t{n}", priority=n, max_attempts=1)
    seen: list[Outcome] = []

    def handler(t: Task) -> str:
        if t.title == "t3":
            raise TaskFailed("no good")
        return f"did {t.title}"

    summary = Worker(tl.queue, "w1", handler, batch=3, on_outcome=seen.append).run(until_empty=True)
    assert (summary.completed, summary.dead, summary.handled) == (6, 1, 7)
    # The failure is recorded at once; its batch's completions when the batch ends.
    assert [o.task.title for o in seen] == ["t0", "t1", "t2", "t3", "t4", "t5", "t6"]
    assert [o.task for o in seen] == [tl.queue.get(o.task.id) for o in seen]  # as stored
    for task in tl.queue.list(status="completed"):
        assert task.result == f"did {task.title}" and task.attempts == 1
    assert tl.queue.get(next(o.task.id for o in seen if o.task.title == "t3")).status == "dead"


def test_a_batch_keeps_every_lease_until_its_task_is_recorded(tl: Taskloom, db_url: str) -> None:
    for n in range(3):
        tl.queue.add(f"t{n}", priority=n)
    other = taskloom.connect(db_url)
    stolen: list[Task | None] = []

    def slow(t: Task) -> str:
        time.sleep(0.7)  # the batch takes 2.1 s, twice its 1 s lease
        stolen.append(other.queue.claim("w2", lease=60))
        return "slow"

    try:
        summary = Worker(tl.queue, "w1", slow, lease=1.0, batch=3).run(until_empty=True)
    finally:
        other.close()
    assert stolen == [None, None, None]  # neither the waiting nor the finished ones
    assert summary.completed == 3
    assert all(t.attempts == 1 for t in tl.queue.list(status="completed"))


def test_a_stop_or_an_interrupt_mid_batch_gives_back_what_was_not_done(tl: Taskloom) -> None:
    for n in range(4):
        tl.queue.add(f"t{n}", priority=n)
    worker: Worker

    def stop_after_two(t: Task) -> str:
        if t.title == "t1":
            worker.stop()
        return "ok"

    worker = Worker(tl.queue, "w1", stop_after_two, batch=4)
    summary = worker.run()
    assert (summary.completed, summary.released) == (2, 2)
    assert titles(tl, "completed") == ["t0", "t1"]
    assert titles(tl, "ready") == ["t2", "t3"]
    assert all(t.attempts == 0 for t in tl.queue.list(status="ready"))

    def interrupt_at_t3(t: Task) -> str:
        if t.title == "t3":
            raise KeyboardInterrupt
        return "ok"

    with pytest.raises(KeyboardInterrupt):
        Worker(tl.queue, "w1", interrupt_at_t3, batch=4).run()
    assert titles(tl, "completed") == ["t0", "t1", "t2"]  # acknowledged before it propagated
    back = tl.queue.list(status="ready")
    assert [t.title for t in back] == ["t3"] and back[0].attempts == 0


def test_max_tasks_caps_a_batch_worker(tl: Taskloom) -> None:
    for n in range(7):
        tl.queue.add(f"t{n}", priority=n)
    summary = Worker(tl.queue, "w1", lambda t: None, batch=3).run(max_tasks=5)
    assert summary.completed == 5
    assert titles(tl, "ready") == ["t5", "t6"] and tl.queue.list(status="in_progress") == []
    with pytest.raises(InvalidInput, match="batch"):
        Worker(tl.queue, "w1", lambda t: None, batch=0)
    with pytest.raises(InvalidInput, match="invalid task kind"):
        Worker(tl.queue, "w1", lambda t: None, kinds=["Not A Kind"])  # at once, not at run()
    with pytest.raises(InvalidInput, match="until_empty"):
        Worker(tl.queue, "w1", lambda t: None).run(until_empty="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("batch", [1, 3])
def test_a_failing_callback_gives_back_the_tasks_in_hand(tl: Taskloom, batch: int) -> None:
    """``on_outcome`` raising after a completion that claimed the next task, or ``on_start``
    raising before the handler: the error propagates, and no task stays held by a worker
    that has stopped (until its lease ran out, doctor called it orphaned)."""
    for i in range(4):
        tl.queue.add(f"t{i}", priority=i)

    def broken(outcome: Outcome) -> None:
        raise ZeroDivisionError("a broken progress callback")

    with pytest.raises(ZeroDivisionError):
        Worker(tl.queue, "w", lambda t: "ok", on_outcome=broken, batch=batch).run(until_empty=True)
    done = ["t0"] if batch == 1 else ["t0", "t1", "t2"]  # a batch is acknowledged whole first
    assert tl.queue.stats()["in_progress"] == 0 and titles(tl, "completed") == done
    assert all(t.attempts == 0 for t in tl.queue.list(status="ready"))

    def refuse(task: Task) -> None:
        raise RuntimeError("on_start failed")

    with pytest.raises(RuntimeError):
        Worker(tl.queue, "w", lambda t: "ok", on_start=refuse, batch=batch).run(until_empty=True)
    assert tl.queue.stats()["in_progress"] == 0 and len(titles(tl, "ready")) == 4 - len(done)


def test_a_retry_delay_keeps_a_failed_task_for_later(tl: Taskloom) -> None:
    """Without one, a failing handler used up all three attempts within a millisecond."""
    task, _ = tl.queue.add("CI is down")

    def down(t: Task) -> str:
        raise TaskFailed("CI is down")

    summary = Worker(tl.queue, "w", down, retry_delay=3600).run(until_empty=True)
    assert (summary.failed, summary.dead) == (1, 0)
    later = tl.queue.get(task.id)
    assert later.status == "ready" and later.attempts == 1
    assert later.not_before is not None and later.not_before > time.time() + 3000


def test_a_failures_outcome_tells_the_error_as_stored_with_secrets_redacted(
    tl: Taskloom,
) -> None:
    """What ``on_outcome`` gets (``tasks work`` prints it) is the stored error: a key the
    handler's error quoted is redacted there as in the task."""
    token = "ghp_" + "a" * 36
    tl.queue.add("leaks", max_attempts=2)

    def leak(t: Task) -> str:
        raise TaskFailed(f"push refused: GITHUB_TOKEN={token}")

    seen: list[Outcome] = []
    Worker(tl.queue, "w1", leak, on_outcome=seen.append).run(until_empty=True)
    assert [o.kind for o in seen] == ["failed", "dead"]
    for outcome in seen:
        assert outcome.detail == "push refused: GITHUB_TOKEN=[redacted]"
        assert outcome.detail == tl.queue.get(outcome.task.id).last_error


@pytest.mark.parametrize("queue", ["queue", None])
def test_a_worker_given_something_else_than_a_queue_is_refused_at_once(
    tl: Taskloom, queue: object
) -> None:
    """``Worker(tl, …)`` (the client, not ``tl.queue``) was accepted and failed at ``run``
    with an AttributeError from inside the loop."""
    tl.queue.add("review")
    with pytest.raises(InvalidInput, match=r"a worker works on a queue \(tl.queue\), not Taskl"):
        Worker(tl, "w1", lambda t: "done")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="a worker works on a queue"):
        Worker(queue, "w1", lambda t: "done")  # type: ignore[arg-type]
    assert tl.queue.stats()["ready"] == 1
