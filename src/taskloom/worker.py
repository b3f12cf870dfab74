"""A worker loop over the queue: claim a task, run a handler on it, finish it, claim the next.

Every user of a lease queue writes this loop, and each way of writing it wrong has been seen
in the field: a fixed lease that runs out under slow work hands the task to a second worker
(beads' five minutes); an exception kills the worker and leaves the task held until its lease
ends; Ctrl-C drops a task nobody will finish. Here a background thread renews the lease while
the handler runs (between a third and half-way through it, so a failed renewal is tried
again well before the lease lapses), the
handler's exception fails the task (retried until ``max_attempts``, then dead), and an
interrupt gives the task back before it propagates. Finishing a task and claiming the next is
one transaction (:meth:`Queue.done_and_claim`).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from taskloom.domain.errors import (
    InvalidInput,
    LeaseLost,
    NoRetry,
    NotFound,
    StoreBusy,
    TaskFailed,
    TaskloomError,
)
from taskloom.domain.queue import (
    MAX_TEXT_BYTES,
    MIN_LEASE_S,
    Task,
    check_agent,
    check_seconds,
    fit_text,
)
from taskloom.queue_sql import MAX_CLAIM_BATCH

if TYPE_CHECKING:
    from taskloom.client import Taskloom

log = logging.getLogger("taskloom.worker")
T = TypeVar("T")

Handler = Callable[[Task], "str | None"]
"""What a worker runs on each task: its answer is the task's result (text, or ``None``)."""
OutcomeKind = Literal["completed", "failed", "dead", "lost", "released"]
FINISH_RETRIES_S = (0.5, 1.0, 2.0)
"""Pauses between tries to record a task's end while the database stays busy (each try
already waited out the store's busy timeout): given up at once, the work done would be done
again once the lease ends."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one task ended for this worker. ``detail``: the result or the error, as stored."""

    task: Task
    kind: OutcomeKind
    seconds: float
    detail: str | None = None
    note: str = ""
    """Anything the worker had to change, e.g. a result cut to the queue's limit."""


@dataclass(slots=True)
class WorkSummary:
    """What :meth:`Worker.run` did. ``lost``: finished after its lease was lost (another
    worker holds it now; the result was refused). ``released``: given back unfinished when
    the worker was interrupted (the attempt does not count)."""

    completed: int = 0
    failed: int = 0
    dead: int = 0
    lost: int = 0
    released: int = 0

    @property
    def handled(self) -> int:
        return self.completed + self.failed + self.dead + self.lost

    def add(self, outcome: Outcome) -> None:
        """Count ``outcome`` (only counted: a worker may run for millions of tasks; see
        ``on_outcome`` for each one)."""
        setattr(self, outcome.kind, getattr(self, outcome.kind) + 1)


class _Renewal:
    """The background thread that keeps the leases of the tasks in hand alive.

    It looks every sixth of the lease and renews the leases a third of it old, so a renewal
    comes between a third and a half of the way through: nothing wakes it when a task is
    taken or finished (waking it per task cost a short-task worker two thirds of its rate).
    Its lock is held while leases are renewed and while the worker lets go of a task, so a
    renewal never runs beside (or after) the task's completion."""

    def __init__(self, tl: Taskloom, lease: float) -> None:
        self._tl = tl
        self._lease = lease
        self._every = lease / 3
        self._tick = lease / 6
        self._lock = threading.Lock()  # taken directly where nothing waits: half the cost
        self._cond = threading.Condition(self._lock)
        self._held: dict[str, Task] = {}
        self._lost: set[str] = set()
        self._due = math.inf
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="taskloom-lease", daemon=True)
        self._thread.start()

    def hold(self, *tasks: Task) -> None:
        """Renew these tasks' leases (all claimed just now) until each is let go."""
        with self._lock:
            if not self._held:
                self._due = time.monotonic() + self._every
            for task in tasks:
                self._held[task.id] = task
                self._lost.discard(task.id)

    def let_go(self, task: Task) -> bool:
        """Stop renewing ``task``'s lease; whether it was lost meanwhile."""
        with self._lock:
            self._held.pop(task.id, None)
            if not self._held:
                self._due = math.inf
            return task.id in self._lost

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()

    def _run(self) -> None:
        with self._cond:
            while not self._closing:
                wait = min(self._tick, self._due - time.monotonic())
                if wait > 0:
                    self._cond.wait(wait)
                else:
                    self._renew()  # sets _due ahead (MIN_LEASE_S keeps it ahead)

    def _renew(self) -> None:
        busy = False
        for task in list(self._held.values()):
            try:
                self._tl.queue.extend(task.id, task.lease_token or "", self._lease)
            except (LeaseLost, NotFound):
                log.warning("lease on task %s was lost while the worker held it", task.id)
                self._lost.add(task.id)
                del self._held[task.id]
            except TaskloomError as exc:  # a busy database: try again soon, well before it ends
                log.warning("could not renew the lease on task %s: %s", task.id, exc)
                busy = True
        if not self._held:
            self._due = math.inf
        else:
            self._due = time.monotonic() + (min(self._every / 4, 5.0) if busy else self._every)


class Worker:
    """Run ``handler`` on the tasks ``agent_id`` can claim, one at a time.

    ``lease``: how long each claim holds a task before another worker may take it; it is
    renewed while the handler runs, so it is how soon a worker that hangs or dies gives its
    task up, not how long a task may take. ``kinds``: only tasks of these kinds. ``poll``:
    how often an idle worker looks for work. ``batch``: claim this many tasks at a time and
    acknowledge the completed ones together, as pgqueuer does (two commits per batch instead
    of one per task, for many short tasks; each lease is renewed until its task is recorded).
    ``retry_delay``: seconds before a failed task may be claimed again (by any worker), so a
    failure that passes (an outage) does not use up its attempts at once.
    ``on_start`` and ``on_outcome``: called with each task as its handler starts, and with its
    :class:`Outcome` as it ends (progress)."""

    def __init__(
        self,
        tl: Taskloom,
        agent_id: str,
        handler: Handler,
        *,
        lease: float = 300.0,
        kinds: str | Sequence[str] | None = None,
        poll: float = 1.0,
        batch: int = 1,
        retry_delay: float = 0.0,
        on_start: Callable[[Task], None] | None = None,
        on_outcome: Callable[[Outcome], None] | None = None,
    ) -> None:
        if not callable(handler):
            raise InvalidInput("a worker's handler must be callable: handler(task) -> result")
        self._tl = tl
        self._agent = check_agent(agent_id, "an agent id to work for")
        self._handler = handler
        self._lease = check_seconds(lease, "a lease", positive=True)
        if self._lease < MIN_LEASE_S:
            raise InvalidInput(f"a worker's lease must be at least {MIN_LEASE_S:g} second")
        self._kinds = kinds
        self._poll = check_seconds(poll, "a poll interval", positive=True)
        if type(batch) is not int or not 1 <= batch <= MAX_CLAIM_BATCH:
            raise InvalidInput(f"a worker's batch is a whole number from 1 to {MAX_CLAIM_BATCH}")
        self._batch = batch
        self._retry_delay = check_seconds(retry_delay, "a retry delay")
        self._on_start = on_start
        self._on_outcome = on_outcome
        self._stop = threading.Event()

    def stop(self) -> None:
        """Finish the task in hand, claim no other, and return from :meth:`run`. Safe from
        any thread, a signal handler or the handler itself."""
        self._stop.set()

    def run(self, *, max_tasks: int | None = None, until_empty: bool = False) -> WorkSummary:
        """Work until stopped, until ``max_tasks`` tasks are handled, or (``until_empty``)
        until no task is ready for this agent. A ``KeyboardInterrupt`` or ``SystemExit``
        in the handler gives the task back to the queue, then propagates."""
        if max_tasks is not None and (type(max_tasks) is not int or max_tasks < 1):
            raise InvalidInput("max_tasks is a whole number from 1 up, or None for no limit")
        self._stop.clear()
        summary = WorkSummary()
        renewal = _Renewal(self._tl, self._lease)
        try:
            if self._batch > 1:
                self._run_batches(renewal, summary, max_tasks, until_empty)
            else:
                self._run_one_by_one(renewal, summary, max_tasks, until_empty)
        finally:
            renewal.close()
        return summary

    def _run_one_by_one(
        self, renewal: _Renewal, summary: WorkSummary, max_tasks: int | None, until_empty: bool
    ) -> None:
        tasks = self._claim(until_empty, 1)
        task = tasks[0] if tasks else None
        while task is not None:
            renewal.hold(task)
            try:
                outcome, result = self._handle(task)
            except BaseException:  # an interrupt, or on_start failing: the task goes back
                self._give_back([task], renewal, summary)
                raise
            if renewal.let_go(task):
                outcome = Outcome(task, "lost", outcome.seconds)
            last = self._stop.is_set() or summary.handled + 1 == max_tasks
            task, outcome = self._finish(task, outcome, result, claim_next=not last)
            try:
                self._report(summary, outcome)
            except BaseException:  # on_outcome failed: the next task, claimed, goes back
                self._give_back([task] if task else [], renewal, summary)
                raise
            if task is None and not last:
                tasks = self._claim(until_empty, 1)
                task = tasks[0] if tasks else None

    def _run_batches(
        self, renewal: _Renewal, summary: WorkSummary, max_tasks: int | None, until_empty: bool
    ) -> None:
        while max_tasks is None or summary.handled < max_tasks:
            left = self._batch if max_tasks is None else max_tasks - summary.handled
            tasks = self._claim(until_empty, min(self._batch, left))
            if not tasks:
                return
            renewal.hold(*tasks)
            completed: list[tuple[Outcome, str | None]] = []
            handled = 0  # tasks whose handler has returned
            try:
                for task in tasks:
                    if self._stop.is_set():
                        break
                    outcome, result = self._handle(task)
                    handled += 1
                    if outcome.kind == "completed":
                        completed.append((outcome, result))  # renewed until acknowledged
                        continue
                    if renewal.let_go(task):
                        outcome = Outcome(task, "lost", outcome.seconds)
                    self._report(summary, self._finish(task, outcome, result, claim_next=False)[1])
            except BaseException:  # an interrupt, or a callback failing
                self._give_back(tasks[handled:], renewal, summary)
                raise
            finally:
                self._acknowledge(completed, renewal, summary)
            if handled < len(tasks):  # stopped: the tasks not started go back
                self._give_back(tasks[handled:], renewal, summary)
                return

    def _report(self, summary: WorkSummary, outcome: Outcome) -> None:
        summary.add(outcome)
        if self._on_outcome is not None:
            self._on_outcome(outcome)

    def _claim(self, until_empty: bool, n: int) -> list[Task]:
        """Up to ``n`` tasks, waiting for one unless ``until_empty``; none once stopped."""
        queue = self._tl.queue
        while not self._stop.is_set():
            try:
                tasks = queue.claim_batch(self._agent, n, lease=self._lease, kinds=self._kinds)
            except StoreBusy as exc:  # other writers held the database: look again
                log.warning("could not claim a task, the database is busy: %s", exc)
            else:
                if tasks or until_empty:
                    return tasks
            self._stop.wait(self._poll)
        return []

    def _handle(self, task: Task) -> tuple[Outcome, str | None]:
        """Run the handler: the outcome it asks for (before the queue has its say) and the
        result to store. An interrupt propagates."""
        if self._on_start is not None:
            self._on_start(task)
        started = time.monotonic()
        try:
            answer = self._handler(task)
        except NoRetry as exc:
            return self._outcome(task, "dead", started, _error(exc)), None
        except Exception as exc:
            log.debug("handler failed on task %s", task.id, exc_info=True)
            return self._outcome(task, "failed", started, _error(exc)), None
        try:
            result, note = fit_text(_as_text(answer), "a task's result", MAX_TEXT_BYTES)
        except InvalidInput as exc:
            return self._outcome(task, "failed", started, str(exc)), None
        return self._outcome(task, "completed", started, result, note), result

    def _outcome(
        self,
        task: Task,
        kind: OutcomeKind,
        started: float,
        detail: str | None = None,
        note: str = "",
    ) -> Outcome:
        return Outcome(task, kind, time.monotonic() - started, detail, note)

    def _finish(
        self, task: Task, outcome: Outcome, result: str | None, *, claim_next: bool
    ) -> tuple[Task | None, Outcome]:
        """Record ``outcome`` in the queue; the next task if one was claimed with it."""
        if outcome.kind not in ("completed", "failed", "dead"):
            return None, outcome
        try:
            done, nxt = _while_busy(
                lambda: self._record(task, outcome, result, claim_next), f"task {task.id}"
            )
        except (LeaseLost, NotFound):
            log.warning("task %s was no longer this worker's when it finished", task.id)
            return None, Outcome(task, "lost", outcome.seconds, outcome.detail, outcome.note)
        kind: OutcomeKind = "dead" if done.status == "dead" else outcome.kind
        return nxt, Outcome(done, kind, outcome.seconds, outcome.detail, outcome.note)

    def _record(
        self, task: Task, outcome: Outcome, result: str | None, claim_next: bool
    ) -> tuple[Task, Task | None]:
        queue, token = self._tl.queue, task.lease_token or ""
        if outcome.kind != "completed":
            error = outcome.detail or "failed"
            retry = outcome.kind == "failed"
            failed = queue.fail(task.id, token, error, retry=retry, retry_delay=self._retry_delay)
            return failed, None
        if not claim_next:
            return queue.done(task.id, token, result), None
        return queue.done_and_claim(
            task.id, token, self._agent, result=result, lease=self._lease, kinds=self._kinds
        )

    def _give_back(self, tasks: Sequence[Task], renewal: _Renewal, summary: WorkSummary) -> None:
        """Return unfinished tasks to the queue (the attempt does not count): all of them
        first, then the reports, which may fail as the one that brought us here did."""
        released = []
        for task in tasks:
            if renewal.let_go(task):
                continue
            try:
                self._tl.queue.release(task.id, task.lease_token or "")
            except TaskloomError as exc:  # its lease ends, or its process's death frees it
                log.warning("could not give task %s back: %s", task.id, exc)
                continue
            released.append(task)
        for task in released:
            self._report(summary, Outcome(task, "released", 0.0))

    def _acknowledge(
        self, completed: list[tuple[Outcome, str | None]], renewal: _Renewal, summary: WorkSummary
    ) -> None:
        """Record a batch's completed tasks in one statement (:meth:`Queue.done_many`)."""
        if not completed:
            return
        for outcome, _ in completed:
            renewal.let_go(outcome.task)
        items = [(o.task.id, o.task.lease_token or "", result) for o, result in completed]
        done, _ = _while_busy(lambda: self._tl.queue.done_many(items), "a batch")
        recorded = {task.id: task for task in done}
        for outcome, _ in completed:
            task = recorded.get(outcome.task.id)
            if task is None:
                log.warning("task %s was no longer this worker's when it finished", outcome.task.id)
                self._report(summary, Outcome(outcome.task, "lost", outcome.seconds))
            else:
                kept = Outcome(task, "completed", outcome.seconds, outcome.detail, outcome.note)
                self._report(summary, kept)


def _while_busy(record: Callable[[], T], what: str) -> T:
    """``record()`` (one transaction), tried again after each of :data:`FINISH_RETRIES_S`
    while the database is busy (a busy try changed nothing), then given up loudly."""
    for wait in FINISH_RETRIES_S:
        try:
            return record()
        except StoreBusy as exc:
            log.warning("could not finish %s, the database is busy: %s", what, exc)
            time.sleep(wait)
    return record()


def _error(exc: BaseException) -> str:
    text = str(exc).strip()
    if isinstance(exc, TaskFailed):
        return text or "failed"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _as_text(answer: object) -> str | None:
    """A handler's answer as a result: text as it is, ``None`` for none, anything else that
    JSON can write as JSON."""
    if answer is None or isinstance(answer, str):
        return answer
    try:
        return json.dumps(answer, ensure_ascii=False)
    except (TypeError, ValueError):
        raise InvalidInput(
            f"the handler returned {type(answer).__name__}, which is not text: return the"
            " result as text, as JSON-able data, or None"
        ) from None
