"""A worker loop over the queue: claim a task, run a handler on it, finish it, claim the next.

Every user of a lease queue writes this loop, and each way of writing it wrong loses work: a
fixed lease that runs out under slow work hands the task to a second worker; an exception
kills the worker and leaves the task held until its lease ends; Ctrl-C drops a task nobody
will finish. Here a background thread renews the lease while the handler runs (between a
third and half-way through it, so a failed renewal is tried again well before the lease
lapses), the handler's exception fails the task (retried until ``max_attempts``, then dead),
and an interrupt gives the task back before it propagates. Finishing a task and claiming the
next is one transaction (:meth:`Queue.done_and_claim`).
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, TypeVar

from taskloom.domain.errors import (
    InvalidInput,
    LeaseLost,
    NoRetry,
    NotFound,
    StoreBusy,
    TaskFailed,
    TaskloomError,
)
from taskloom.domain.lease import MAX_CLAIM_BATCH
from taskloom.domain.queue import (
    MAX_TEXT_BYTES,
    MIN_LEASE_S,
    Task,
    TaskStatus,
    check_agent,
    check_kinds,
    check_seconds,
    fit_text,
)
from taskloom.queue.handle import Queue

log = logging.getLogger("taskloom.queue.worker")


def _note_lost(queue: Queue, task: Task) -> None:
    """Log a task that was no longer this worker's as it finished: a warning, unless it was
    canceled meanwhile (what its canceler asked for, as an MCP client's ``tasks/cancel``)."""
    try:
        canceled = queue.get(task.id).status is TaskStatus.CANCELED
    except TaskloomError:
        canceled = False
    level = logging.INFO if canceled else logging.WARNING
    log.log(level, "task %s was no longer this worker's when it finished", task.id)


T = TypeVar("T")

Handler = Callable[[Task], "str | None"]
"""What a worker runs on each task: its answer is the task's result (text, or ``None``)."""
OutcomeKind = Literal["completed", "failed", "dead", "lost", "released"]
FINISH_RETRIES_S = (0.5, 1.0, 2.0, 5.0)
"""Pauses between tries to record a task's end while the database stays busy or unreachable
(each try already waited out the store's busy timeout), the last one repeated until the
lease would have ended: given up at once, the work done would be done again once the lease
ends."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one task ended for this worker. ``detail``: the result or the error, as stored."""

    task: Task
    kind: OutcomeKind
    seconds: float
    detail: str | None = None
    note: str = ""
    """Anything the worker had to change, e.g. a result cut to the queue's limit."""


class _Ended(NamedTuple):
    """How a task ended for its handler, before the queue has its say (the worker's own
    record: an :class:`Outcome` is made once, from this and the queue's answer)."""

    kind: OutcomeKind
    seconds: float
    detail: str | None = None
    """The error; for a completion, the result to store."""
    note: str = ""


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
        self.count(outcome.kind)

    def count(self, kind: OutcomeKind) -> None:
        """Count one task that ended as ``kind``."""
        setattr(self, kind, getattr(self, kind) + 1)


class _Outage:
    """Tells of a failing try once, and once more when a try works again: a warning on every
    try of an outage would bury the rest of the log."""

    __slots__ = ("failures", "what")

    def __init__(self, what: str) -> None:
        self.what = what
        self.failures = 0

    def failed(self, exc: Exception) -> None:
        self.failures += 1
        if self.failures == 1:
            log.warning(
                "could not %s: %s (trying again; told once more when it works)", self.what, exc
            )

    def over(self) -> None:
        if self.failures:
            log.info("could %s again, after %d failed tries", self.what, self.failures)
            self.failures = 0


class _Held:
    """A task whose lease the worker keeps alive: since when (the claim or the last renewal)
    and whether the lease turned out lost. One per claim, so a renewal that finds a lease
    lost marks that claim only, never a later claim of the same task."""

    __slots__ = ("lost", "since", "task")

    def __init__(self, task: Task) -> None:
        self.task = task
        self.since = time.monotonic()
        self.lost = False


class _Renewal:
    """The background thread that keeps the leases of the tasks in hand alive.

    It looks every sixth of the lease and renews the leases a third of it old, so a renewal
    comes between a third and a half of the way through: nothing wakes it when a task is
    taken or finished, so short tasks cost it nothing. Taking and letting go of a task are a
    dictionary's set and pop, atomic without a lock: a renewal that runs beside a completion
    can only find the lease ended and mark a claim already let go, which no one reads
    again."""

    def __init__(
        self, queue: Queue, lease: float, on_lost: Callable[[Task], None] | None = None
    ) -> None:
        self._queue = queue
        self._on_lost = on_lost
        self._lease = lease
        self._every = lease / 3
        self._tick = lease / 6
        self._cond = threading.Condition()
        self._held: dict[str, _Held] = {}
        self._closing = False
        self._outage = _Outage("renew the leases of the tasks in hand")
        self._thread = threading.Thread(target=self._run, name="taskloom-lease", daemon=True)
        self._thread.start()

    def hold(self, *tasks: Task) -> None:
        """Renew these tasks' leases (all claimed just now) until each is let go."""
        for task in tasks:
            self._held[task.id] = _Held(task)

    def let_go(self, task: Task) -> bool:
        """Stop renewing ``task``'s lease; whether it was lost meanwhile."""
        held = self._held.pop(task.id, None)
        return held is not None and held.lost

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()

    def _run(self) -> None:
        wait = self._tick
        with self._cond:
            while not self._closing:
                self._cond.wait(wait)
                if not self._closing:
                    wait = self._renew()

    def _lost(self, task: Task) -> None:
        """Tell ``on_lost`` (its failure is logged: the renewal goes on for the others)."""
        if self._on_lost is not None:
            try:
                self._on_lost(task)
            except Exception:
                log.exception("on_lost failed for task %s", task.id)

    def _renew(self) -> float:
        """Renew the leases due; how long to wait before looking again."""
        busy = False
        for held in list(self._held.values()):
            if held.lost or time.monotonic() - held.since < self._every:
                continue
            task = held.task
            try:
                self._queue.extend(task.id, task.lease_token or "", self._lease)
            except (LeaseLost, NotFound):
                held.lost = True
                if self._held.get(task.id) is held:  # else let go meanwhile: nothing lost
                    log.warning("lease on task %s was lost while the worker held it", task.id)
                    self._lost(task)
            except TaskloomError as exc:  # a busy database: try again soon, well before it ends
                self._outage.failed(exc)
                busy = True
            else:
                held.since = time.monotonic()
        if not busy:
            self._outage.over()
        return min(self._every / 4, 5.0, self._tick) if busy else self._tick


class Worker:
    """Run ``handler`` on the tasks ``agent_id`` can claim from ``queue`` (``tl.queue``),
    one at a time.

    ``lease``: how long each claim holds a task before another worker may take it; it is
    renewed while the handler runs, so it is how soon a worker that hangs or dies gives its
    task up, not how long a task may take. ``kinds``: only tasks of these kinds. ``poll``:
    how often an idle worker looks for work. ``batch``: claim this many tasks at a time and
    acknowledge the completed ones together (two commits per batch instead
    of one per task, for many short tasks; each lease is renewed until its task is recorded).
    ``retry_delay``: seconds before a failed task may be claimed again (by any worker), so a
    failure that passes (an outage) does not use up its attempts at once.
    ``on_start`` and ``on_outcome``: called with each task as its handler starts, and with its
    :class:`Outcome` as it ends (progress). ``on_lost``: called, from the thread that renews
    the leases, with a task whose lease a renewal found lost while its handler runs (canceled,
    or taken by another worker after the lease ran out): the handler's work is no longer
    wanted, and its result will not be recorded, so a handler that can stop early should."""

    def __init__(
        self,
        queue: Queue,
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
        on_lost: Callable[[Task], None] | None = None,
    ) -> None:
        if not isinstance(queue, Queue):
            raise InvalidInput(f"a worker works on a queue (tl.queue), not {type(queue).__name__}")
        if not callable(handler):
            raise InvalidInput("a worker's handler must be callable: handler(task) -> result")
        self._queue = queue
        self._agent = check_agent(agent_id, "an agent id to work for")
        self._handler = handler
        self._lease = check_seconds(lease, "a lease", positive=True)
        if self._lease < MIN_LEASE_S:
            raise InvalidInput(f"a worker's lease must be at least {MIN_LEASE_S:g} second")
        self._kinds = None if kinds is None else check_kinds(kinds)
        self._poll = check_seconds(poll, "a poll interval", positive=True)
        if type(batch) is not int or not 1 <= batch <= MAX_CLAIM_BATCH:
            raise InvalidInput(f"a worker's batch is a whole number from 1 to {MAX_CLAIM_BATCH}")
        self._batch = batch
        self._retry_delay = check_seconds(retry_delay, "a retry delay")
        self._on_start = on_start
        self._on_outcome = on_outcome
        self._on_lost = on_lost
        self._stop = threading.Event()
        self._running: tuple[str, float] | None = None
        """The task whose handler runs (or was interrupted), and when it started: the time a
        task given back unfinished was worked on."""

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
        if type(until_empty) is not bool:
            raise InvalidInput("until_empty is True or False")
        self._stop.clear()
        summary = WorkSummary()
        self._reclaim_orphans()
        renewal = _Renewal(self._queue, self._lease, self._on_lost)
        try:
            if self._batch > 1:
                self._run_batches(renewal, summary, max_tasks, until_empty)
            else:
                self._run_one_by_one(renewal, summary, max_tasks, until_empty)
        finally:
            renewal.close()
        return summary

    def _reclaim_orphans(self) -> None:
        """Give back the tasks that dead processes of this host hold (:meth:`Queue.reclaim`:
        a worker killed mid-task), so that they run again now, not when their leases end."""
        try:
            back = self._queue.reclaim()
        except StoreBusy as exc:
            log.warning("could not look for tasks that dead workers hold: %s", exc)
            return
        if back:
            log.info("gave back %d task(s) that dead processes of this host held", len(back))

    def _run_one_by_one(
        self, renewal: _Renewal, summary: WorkSummary, max_tasks: int | None, until_empty: bool
    ) -> None:
        tasks = self._claim(until_empty, 1)
        task = tasks[0] if tasks else None
        while task is not None:
            renewal.hold(task)
            try:
                ended = self._handle(task)
            except BaseException:  # an interrupt, or on_start failing: the task goes back
                self._give_back([task], renewal, summary)
                raise
            lost = renewal.let_go(task)
            last = self._stop.is_set() or (
                max_tasks is not None and summary.handled + 1 == max_tasks
            )
            task, done, ended = self._finish(task, ended, lost, claim_next=not last)
            try:
                self._report(summary, done, ended)
            except BaseException:  # on_outcome failed: the next task, claimed, goes back
                self._give_back([task] if task else [], renewal, summary)
                raise
            if task is None and not last:
                # A recorded completion looked for the next task too, and found none.
                tasks = self._claim(until_empty, 1, just_looked=ended.kind == "completed")
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
            completed: list[tuple[Task, _Ended]] = []
            handled = 0  # tasks whose handler has returned
            try:
                for task in tasks:
                    if self._stop.is_set():
                        break
                    ended = self._handle(task)
                    handled += 1
                    if ended.kind == "completed":
                        completed.append((task, ended))  # renewed until acknowledged
                        continue
                    lost = renewal.let_go(task)
                    _, done, ended = self._finish(task, ended, lost, claim_next=False)
                    self._report(summary, done, ended)
            except BaseException:  # an interrupt, or a callback failing
                self._give_back(tasks[handled:], renewal, summary)
                raise
            finally:
                self._acknowledge(completed, renewal, summary)
            if handled < len(tasks):  # stopped: the tasks not started go back
                self._give_back(tasks[handled:], renewal, summary)
                return

    def _report(self, summary: WorkSummary, task: Task, ended: _Ended) -> None:
        """Count how ``task`` ended, and tell ``on_outcome`` (its :class:`Outcome` is made
        only for it: a worker without one runs for millions of tasks)."""
        summary.count(ended.kind)
        if self._on_outcome is not None:
            self._on_outcome(Outcome(task, ended.kind, ended.seconds, ended.detail, ended.note))

    def _claim(self, until_empty: bool, n: int, *, just_looked: bool = False) -> list[Task]:
        """Up to ``n`` tasks, waiting for one unless ``until_empty``; none once stopped.
        ``just_looked``: a claim just found none, so do not ask again at once (an empty
        queue, when ``until_empty``; else the poll's wait comes first)."""
        queue = self._queue
        if just_looked:
            if until_empty:
                return []
            self._stop.wait(self._poll)
        outage = _Outage("claim a task")
        while not self._stop.is_set():
            try:
                tasks = queue.claim_batch(self._agent, n, lease=self._lease, kinds=self._kinds)
            except StoreBusy as exc:  # other writers held the database: look again
                outage.failed(exc)
            else:
                outage.over()
                if tasks or until_empty:
                    return tasks
            self._stop.wait(self._poll)
        return []

    def _handle(self, task: Task) -> _Ended:
        """Run the handler: how the task ended for it, before the queue has its say. An
        interrupt propagates."""
        if self._on_start is not None:
            self._on_start(task)
        started = time.monotonic()
        self._running = (task.id, started)
        try:
            answer = self._handler(task)
        except NoRetry as exc:
            return _Ended("dead", time.monotonic() - started, _error(exc))
        except Exception as exc:
            log.debug("handler failed on task %s", task.id, exc_info=True)
            return _Ended("failed", time.monotonic() - started, _error(exc))
        seconds = time.monotonic() - started
        self._running = None  # (left set by an interrupt, for _give_back to read)
        if answer is None:
            return _Ended("completed", seconds)
        try:
            result, note = fit_text(_as_text(answer), "a task's result", MAX_TEXT_BYTES)
        except InvalidInput as exc:
            return _Ended("failed", seconds, str(exc))
        return _Ended("completed", seconds, result, note)

    def _finish(
        self, task: Task, ended: _Ended, lost: bool, *, claim_next: bool
    ) -> tuple[Task | None, Task, _Ended]:
        """Record how ``task`` ended in the queue (unless its lease was ``lost`` meanwhile):
        the next task if one was claimed with it, then the task as recorded and how it ended
        once the queue had its say (what :meth:`_report` tells)."""
        if lost:
            return None, task, _Ended("lost", ended.seconds)
        try:
            done, nxt = _while_busy(
                lambda: self._record(task, ended, claim_next), f"task {task.id}", self._lease
            )
        except (LeaseLost, NotFound):
            _note_lost(self._queue, task)
            return None, task, ended._replace(kind="lost")
        if ended.kind != "completed":  # the error as stored: redacted, cut
            ended = ended._replace(detail=done.last_error)
        if done.status == "dead" and ended.kind != "dead":
            return nxt, done, ended._replace(kind="dead")
        return nxt, done, ended

    def _record(self, task: Task, ended: _Ended, claim_next: bool) -> tuple[Task, Task | None]:
        queue, token = self._queue, task.lease_token or ""
        if ended.kind != "completed":
            error = ended.detail or "failed"
            retry = ended.kind == "failed"
            failed = queue.fail(task.id, token, error, retry=retry, retry_delay=self._retry_delay)
            return failed, None
        if not claim_next:
            return queue.done(task.id, token, ended.detail), None
        return queue.done_and_claim(
            task.id,
            token,
            self._agent,
            result=ended.detail,
            lease=self._lease,
            kinds=self._kinds,
            held=task,
        )

    def _give_back(self, tasks: Sequence[Task], renewal: _Renewal, summary: WorkSummary) -> None:
        """Return unfinished tasks to the queue (the attempt does not count): all of them
        first, then the reports, which may fail as the one that brought us here did."""
        released = []
        now, running = time.monotonic(), self._running
        self._running = None
        for task in tasks:
            if renewal.let_go(task):
                continue
            try:
                self._queue.release(task.id, task.lease_token or "")
            except TaskloomError as exc:  # its lease ends, or its process's death frees it
                log.warning("could not give task %s back: %s", task.id, exc)
                continue
            released.append(task)
        for task in released:  # the time its handler ran before the interrupt (0: never started)
            seconds = now - running[1] if running is not None and running[0] == task.id else 0.0
            self._report(summary, task, _Ended("released", seconds))

    def _acknowledge(
        self, completed: list[tuple[Task, _Ended]], renewal: _Renewal, summary: WorkSummary
    ) -> None:
        """Record a batch's completed tasks in one statement (:meth:`Queue.done_many`)."""
        if not completed:
            return
        for task, _ in completed:
            renewal.let_go(task)
        items = [(task.id, task.lease_token or "", ended.detail) for task, ended in completed]
        held = [task for task, _ in completed]
        record = functools.partial(self._queue.done_many, items, held=held)
        done, _ = _while_busy(record, "a batch", self._lease)
        recorded = {task.id: task for task in done}
        for task, ended in completed:
            kept = recorded.get(task.id)
            if kept is None:
                _note_lost(self._queue, task)
                self._report(summary, task, _Ended("lost", ended.seconds))
            else:
                self._report(summary, kept, ended)


def _while_busy(record: Callable[[], T], what: str, patience_s: float) -> T:
    """``record()`` (one transaction), tried again after each of :data:`FINISH_RETRIES_S`
    (its last one repeated) while the database is busy or unreachable (a busy try changed
    nothing), for up to ``patience_s`` (the lease: past it, another worker may hold the
    task), then given up loudly."""
    deadline = time.monotonic() + patience_s
    pauses = itertools.chain(FINISH_RETRIES_S, itertools.repeat(FINISH_RETRIES_S[-1]))
    outage = _Outage(f"record the end of {what}")
    while True:
        try:
            done = record()
        except StoreBusy as exc:
            wait = next(pauses)
            if time.monotonic() + wait >= deadline:
                raise
            outage.failed(exc)
            time.sleep(wait)
        else:
            outage.over()
            return done


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
