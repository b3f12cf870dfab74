"""The multi-agent work queue: atomic claims under a lease, fenced by a lease token.

Here the SQL does the work (in ``store.tasks``, :class:`~taskloom.store.base.TaskTable`). A
claim is one ``UPDATE … RETURNING`` whose WHERE picks the most urgent eligible ready task
(priority, then age; every dependency completed, no task of its group in progress: see
:mod:`taskloom.domain.task_graph`), so two claimers never get the same task: SQLite
serialises writers (``BEGIN IMMEDIATE``), PostgreSQL skips rows another claimer holds (``FOR
UPDATE SKIP LOCKED``). Each claim issues a new random ``lease_token``; ``done``, ``fail``,
``release`` and ``extend`` only apply with the current token, so a worker whose lease was
reclaimed cannot complete or fail the task afterwards (``LeaseLost``). Every change appends a
``task_state`` event in the same transaction (the database's trigger writes it).

The queue checks every argument and holds the rules; the store runs the statements.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence, Sized
from typing import Any, NoReturn

from taskloom._runtime import Runtime
from taskloom.domain.errors import InvalidInput, LeaseLost, NotFound
from taskloom.domain.lease import check_completions, check_held, checked_result
from taskloom.domain.queue import (
    INT_RANGE,
    MAX_ERROR_BYTES,
    SHOWN_STATUSES,
    TERMINAL,
    NewTask,
    Task,
    TaskStatus,
    check_agent,
    check_cap,
    check_ids,
    check_kinds,
    check_requeue,
    check_seconds,
    check_text,
    cut_bytes,
    new_task,
)
from taskloom.domain.readiness import Readiness, Reason
from taskloom.domain.task_graph import batch_edges, topological
from taskloom.domain.text import shown_id
from taskloom.queue import doctor, graph, surfacing
from taskloom.queue.claiming import new_claim
from taskloom.queue.waiting import Waiting

MAX_LIMIT = 2**63 - 1
"""The largest ``list`` limit: the largest integer either backend's LIMIT takes."""
SWEEP_EVERY_S = 1.0
"""How often (at most) a process's claims also return expired leases to ready."""
WAIT_ENDS = (*TERMINAL, TaskStatus.BLOCKED)
"""What :meth:`Queue.wait` returns on: a task finished, or blocked (until a requeue)."""


class Queue:
    """``tl.queue``: tasks shared by every agent on the database."""

    def __init__(self, runtime: Runtime, *, max_active: int = 10_000) -> None:
        self._runtime = runtime
        self._store = runtime.store
        self._tasks = runtime.store.tasks
        self._max_active = check_cap(max_active)
        self._sweep_due = 0.0

    @property
    def max_active(self) -> int:
        """The most ready tasks the queue holds (in-progress work is not counted); an add
        over it evicts the least urgent, oldest ready ones (never in-progress work)."""
        return self._max_active

    @max_active.setter
    def max_active(self, value: int) -> None:
        self._max_active = check_cap(value)  # -1 would cancel every ready task

    def _now(self) -> float:
        """The runtime's clock, as unix seconds."""
        return self._runtime.now().timestamp()

    # --- adding -------------------------------------------------------------------------------

    def add(
        self,
        title: str,
        *,
        body: str = "",
        kind: str = "task",
        priority: int = 100,
        source: str | None = None,
        target_agent: str | None = None,
        dedup_key: str | None = None,
        payload: Mapping[str, Any] | None = None,
        delay_s: float | None = None,
        ttl_s: float | None = None,
        max_attempts: int = 3,
        depends_on: Sequence[str] = (),
        depends_on_keys: Sequence[str] = (),
        group_key: str | None = None,
    ) -> tuple[Task, bool]:
        """Enqueue a task. With a ``dedup_key`` already live, return that task and ``False``;
        ``None`` means no dedup, and a blank key (empty or spaces) is refused.

        ``depends_on``: ids of tasks to complete first; ``depends_on_keys``: dedup keys of
        tasks to complete first, whichever task holds each (now, or once one is added). A
        dependency that ends dead or canceled blocks the task (status ``blocked``, its
        ``result`` says why) until it is requeued. ``group_key``: at most one task of a
        group is in progress at any moment.
        """
        fields = {
            "title": title,
            "body": body,
            "kind": kind,
            "priority": priority,
            "source": source,
            "target_agent": target_agent,
            "dedup_key": dedup_key,
            "payload": payload,
            "delay_s": delay_s,
            "ttl_s": ttl_s,
            "max_attempts": max_attempts,
            "depends_on": depends_on,
            "depends_on_keys": depends_on_keys,
            "group_key": group_key,
        }
        return self._add([new_task(fields)], lambda at: "")[0]

    def add_many(self, tasks: Iterable[Mapping[str, Any]]) -> list[tuple[Task, bool]]:
        """Enqueue many tasks in one transaction: each a mapping of :meth:`add`'s arguments
        (``title`` required), answered in order like :meth:`add`.

        A graph in one step: a task may name itself (``ref``, the batch's own name for it)
        and depend on the batch's tasks by those names (``after``, forward or back), as well
        as on tasks by id and dedup key. All or nothing: one bad task adds none, and the
        error names it by position (``task N: …``), a cycle too. A ``dedup_key`` already
        live, or repeated within the batch, answers the live (or first) task and ``False``
        (and a ref to it means that task). A producer with a plan of hundreds of tasks pays
        for one commit, not hundreds.
        """
        if isinstance(tasks, Mapping | str | bytes) or not isinstance(tasks, Iterable):
            raise InvalidInput("add_many takes a list of tasks, each a mapping of add's arguments")
        cap = self.max_active  # more is refused before each task is checked, or read
        over = f"{len(tasks):,}" if isinstance(tasks, Sized) else f"{cap + 1:,} or more"
        checked = []
        for n, fields in enumerate(tasks, 1):
            if n > cap:
                raise InvalidInput(f"{over} tasks are more than the queue's cap of {cap:,}")
            try:
                checked.append(new_task(fields, batch=True))
            except InvalidInput as exc:
                raise InvalidInput(f"task {n}: {exc}") from None
        return self._add(checked, lambda at: f"task {at + 1}: ")

    def _add(self, tasks: list[NewTask], label: graph.Label) -> list[tuple[Task, bool]]:
        """Add the tasks whose dedup key no live task holds (nor an earlier one of these),
        with their dependencies (:mod:`taskloom.queue.graph`), then enforce the cap
        (:meth:`max_active`); answer each as :meth:`add` does."""
        if not tasks:
            return []
        after = batch_edges([t.ref for t in tasks], [t.after for t in tasks])
        topological(after)  # a cycle among the refs, refused before the database is asked
        now = self._now()
        keys = sorted({t.dedup_key for t in tasks if t.dedup_key})
        first: dict[str, int] = {}  # dedup key -> position of its first new task
        with self._store.write() as tx:
            graph.lock(tx, tasks)
            live = self._tasks.live(tx, keys, now)
            ids: list[str] = []
            fresh: list[int] = []
            for at, task in enumerate(tasks):
                key = task.dedup_key
                if key is None or (key not in live and first.setdefault(key, at) == at):
                    fresh.append(at)
                    ids.append(self._runtime.new_id())
                else:
                    ids.append(live[key].id if key in live else ids[first[key]])
            plan = graph.Plan()
            if any(tasks[at].depends_on or tasks[at].depends_on_keys or after[at] for at in fresh):
                plan = graph.plan(self._tasks, tx, tasks, ids, fresh, after, label)
            new = [(ids[at], plan.tasks.get(at, tasks[at])) for at in fresh]
            added = {t.id: t for t in self._tasks.insert(tx, new, now, plan.blocked)}
            self._tasks.insert_deps(tx, plan.rows)
            keyed = [(at, ids[at], k) for at in fresh if (k := tasks[at].dedup_key) is not None]
            if keyed:
                graph.take_keys(self._tasks, tx, keyed, now, label)
            evicted = self._tasks.evict_over(tx, self.max_active, now)
        # A new task less urgent than everything in a full queue was evicted at once.
        added.update((t.id, t) for t in evicted if t.id in added)
        made = iter(added[task_id] for task_id, _ in new)
        answers: list[tuple[Task, bool]] = []
        for at, task in enumerate(tasks):
            key = task.dedup_key
            if key is not None and key in live:
                answers.append((live[key], False))
            elif key is not None and first[key] != at:
                answers.append((answers[first[key]][0], False))
            else:
                answers.append((next(made), True))
        return answers

    # --- claiming -----------------------------------------------------------------------------

    def claim(
        self,
        agent_id: str,
        *,
        lease: float = 300.0,
        kinds: str | Sequence[str] | None = None,
        bind_process: bool = True,
    ) -> Task | None:
        """Take the most urgent eligible task for ``agent_id``, or ``None`` if there is none.

        ``bind_process``: record this process, so that if it dies the task returns to ready
        before its lease ends (:meth:`reclaim`, ``taskloom doctor --fix``). Pass ``False``
        when the claim is meant to outlive the process, as ``taskloom tasks next`` does for
        the agent that runs it: only the lease then says when the work is abandoned.
        """
        batch = self.claim_batch(agent_id, 1, lease=lease, kinds=kinds, bind_process=bind_process)
        return batch[0] if batch else None

    def claim_batch(
        self,
        agent_id: str,
        n: int,
        *,
        lease: float = 300.0,
        kinds: str | Sequence[str] | None = None,
        bind_process: bool = True,
    ) -> list[Task]:
        """Take up to ``n`` tasks in one statement, most urgent first (``bind_process`` as
        for :meth:`claim`).

        Expired leases go back to ready first, at most once a second per process (and always
        before an empty answer), so a busy queue does not pay for the sweep on every claim.
        """
        claim = new_claim(agent_id, n, lease, kinds, bind_process)
        if not self._store.exists():
            return []
        now = self._now()
        swept = self._sweep_if_due(now)
        tasks = self._tasks.claim(claim, now)
        if not tasks and self._sweep_again(swept, now):
            tasks = self._tasks.claim(claim, now)
        return tasks

    def _sweep_if_due(self, now: float) -> bool:
        """Sweep (:meth:`_sweep`) if one is due; whether it did."""
        if now < self._sweep_due:
            return False
        self._sweep(now)
        return True

    def _sweep_again(self, swept: bool, now: float) -> bool:
        """After a claim that found nothing without a sweep first: sweep, and say whether
        that freed anything (then the claim is tried once more, so an expired lease never
        waits behind an empty answer)."""
        return not swept and bool(self._sweep(now))

    def _sweep(self, now: float) -> list[Task]:
        """Return expired leases to ready (or dead once ``max_attempts`` is reached), and
        cancel the ready tasks whose ``expires_at`` has passed."""
        self._sweep_due = now + SWEEP_EVERY_S
        if not self._store.exists():
            return []
        return self._tasks.sweep(now)

    # --- finishing (all fenced by the lease token) ---------------------------------------------

    def _fenced(self, task_id: str, task: Task | None) -> Task:
        """The task a change under a lease left, or :class:`LeaseLost` if it changed nothing."""
        if task is None:
            self._lease_lost(task_id)
        return task

    def _lease_lost(self, task_id: str) -> NoReturn:
        status = self.get(task_id).status.value
        if status == "in_progress":
            raise LeaseLost(
                f"lease on task '{task_id}' is no longer yours (status: in_progress): it is"
                " held under another lease token, a newer claim's or the token given is wrong"
            )
        raise LeaseLost(
            f"lease on task '{task_id}' is no longer yours (status: {status}): the lease ended"
            " (the task was finished, failed, released or canceled, or its lease ran out and it"
            " was reclaimed)"
        )

    def done(self, task_id: str, lease_token: str, result: str | None = None) -> Task:
        check_ids(task_id, lease_token)
        result = checked_result(result)
        return self._fenced(task_id, self._tasks.done(task_id, lease_token, result, self._now()))

    def done_many(
        self,
        completions: Iterable[tuple[str, str] | tuple[str, str, str | None]],
        *,
        held: Iterable[Task] | None = None,
    ) -> tuple[list[Task], list[str]]:
        """Complete many tasks in one transaction, each fenced by its own lease token:
        ``completions`` holds ``(task_id, lease_token)`` or ``(task_id, lease_token, result)``.

        A worker that claims with :meth:`claim_batch` acknowledges the batch with one commit
        instead of one per task. A lost lease does not undo the others: the answer is the
        completed tasks and the ids whose lease was no longer theirs (nothing changed for
        those), in the order given.

        ``held``: the tasks being completed, as the claim that holds them returned them, one
        for each completion. The completed tasks are then made from them instead of read
        back, as :meth:`done_and_claim` makes its completed task: what :class:`Worker`
        passes.
        """
        items = check_completions(completions)
        kept = None if held is None else check_held(held, items)
        if not items:
            return [], []
        done = {t.id: t for t in self._tasks.done_many(list(items.values()), self._now(), kept)}
        return [done[i] for i in items if i in done], [i for i in items if i not in done]

    def done_and_claim(
        self,
        task_id: str,
        lease_token: str,
        agent_id: str,
        *,
        result: str | None = None,
        lease: float = 300.0,
        kinds: str | Sequence[str] | None = None,
        held: Task | None = None,
    ) -> tuple[Task, Task | None]:
        """Complete a task and claim the agent's next one in the same transaction: a worker
        loop pays for one commit per task instead of two. If the lease was lost, nothing is
        claimed and ``LeaseLost`` is raised, exactly as from :meth:`done`.

        ``held``: the task being completed, as the claim that holds it returned it. The
        completed task is then made from it instead of read back from the database (a
        claimed task changes only at its holder's hand): what :class:`Worker` passes. Its
        payload is taken as the caller holds it, changed in place or not."""
        check_ids(task_id, lease_token)
        result = checked_result(result)
        if held is not None and not (
            isinstance(held, Task) and held.id == task_id and held.lease_token == lease_token
        ):
            raise InvalidInput("held is the task being completed, as its claim returned it")
        claim = new_claim(agent_id, 1, lease, kinds, True)
        now = self._now()
        swept = self._sweep_if_due(now)
        done, claimed = self._tasks.done_and_claim(task_id, lease_token, result, claim, now, held)
        done = self._fenced(task_id, done)
        if not claimed and self._sweep_again(swept, now):
            claimed = self._tasks.claim(claim, now)
        return done, claimed[0] if claimed else None

    def fail(
        self,
        task_id: str,
        lease_token: str,
        error: str,
        *,
        retry: bool = True,
        retry_delay: float = 0.0,
    ) -> Task:
        """Record a failure: back to ready while attempts remain (and ``retry``), else dead.

        ``retry_delay``: seconds before the task may be claimed again (its ``not_before``);
        without one the next claim may retry it at once, and an outage of a minute uses up
        its attempts in moments. Credentials in ``error`` (a key or a URL's password quoted
        by an exception) are redacted. A long ``error`` (a whole traceback) is cut to its first
        :data:`MAX_ERROR_BYTES` bytes, not refused: refusing it would lose the failure."""
        from taskloom.domain.redact import redact_text  # its patterns compile on first use

        check_ids(task_id, lease_token)
        check_text(error, "a failure's error", required=True, limit=None)
        retry_delay = check_seconds(retry_delay, "retry_delay")
        error = cut_bytes(redact_text(error)[0], MAX_ERROR_BYTES)
        failed = self._tasks.fail(
            task_id, lease_token, error, self._now(), retry=bool(retry), delay=retry_delay
        )
        return self._fenced(task_id, failed)

    def release(self, task_id: str, lease_token: str) -> Task:
        """Give the task back untouched (the attempt does not count)."""
        check_ids(task_id, lease_token)
        return self._fenced(task_id, self._tasks.release(task_id, lease_token, self._now()))

    def extend(self, task_id: str, lease_token: str, lease: float = 300.0) -> Task:
        """Renew the lease: it now ends ``lease`` seconds from now."""
        check_ids(task_id, lease_token)
        lease = check_seconds(lease, "a lease", positive=True)
        now = self._now()
        return self._fenced(task_id, self._tasks.extend(task_id, lease_token, now + lease, now))

    def cancel(self, task_id: str, reason: str | None = None) -> Task:
        """Cancel a task that is not finished, claimed or not (its worker's lease ends)."""
        check_ids(task_id)
        check_text(reason, "a cancel reason")
        task = self._tasks.cancel(task_id, reason, self._now(), ready_only=False)
        if task is None:
            raise InvalidInput(f"task '{task_id}' is already {self.get(task_id).status.value}")
        return task

    # --- recovery -----------------------------------------------------------------------------

    def reclaim(self) -> list[Task]:
        """Return expired leases, and claims by dead processes on this host, to ready (or dead
        once ``max_attempts`` is reached)."""
        now = self._now()
        out = self._sweep(now)
        with self._store.write() as tx:
            for task_id, token in doctor.orphaned(self._tasks, tx, now).items():
                # Under the lease found dead only: on PostgreSQL another worker may have
                # swept and claimed the task since (SQLite holds its lock throughout).
                task = self._tasks.reclaim_dead(tx, task_id, token, now)
                out += [] if task is None else [task]
        return out

    def requeue(self, task_id: str) -> Task:
        """Put a dead task back to ready with no attempts used (the dead-letter redrive, once
        whatever killed it is fixed); its last error stays for the next worker to read. A
        canceled task that others are blocked by is requeued too. The tasks it blocked are
        released (those that nothing else blocks), and it is blocked itself if one of its
        own dependencies ended unfinished; it takes its dedup key's dependents back. Refused as
        :func:`~taskloom.domain.queue.check_requeue` says, changing nothing. The active cap
        applies as to an add."""
        check_ids(task_id)
        now = self._now()
        with self._store.write() as tx:
            task = self._tasks.get(tx, task_id)
            if task is None:
                raise NotFound(f"task '{shown_id(task_id)}' not found")
            holder = None
            ended = task.status in (TaskStatus.DEAD, TaskStatus.CANCELED)
            if task.dedup_key is not None and ended:
                graph.lock(tx, [task])  # as an add of the key takes it
                holder = self._tasks.holder(tx, task.dedup_key)
            blocks = ended and self._tasks.blocks_others(tx, task_id)
            check_requeue(task, now, holder, blocks)
            requeued = self._tasks.requeue(tx, task_id, now)
            if requeued is None:  # PostgreSQL: requeued (or pruned) by another transaction
                raise InvalidInput(f"task '{task_id}' is no longer dead: it changed meanwhile")
            graph.requeued(self._tasks, tx, task, now)
            requeued = self._tasks.get(tx, task_id) or requeued
            evicted = self._tasks.evict_over(tx, self.max_active, now)
        return next((t for t in evicted if t.id == task_id), requeued)

    def prune(self, older_than_s: float = 7 * 86400) -> int:
        """Delete finished tasks older than the retention window, and their events: a task's
        events cannot be read whole without its row (they are left out of reads), so they
        would only take space until the event log's own retention (``taskloom serve``). The
        newest event stays, whatever it is: event ids are cursors and must never be reused."""
        older_than_s = check_seconds(older_than_s, "the retention window")
        now = self._now()
        with self._store.write() as tx:
            return self._tasks.prune(tx, now - older_than_s, now)

    # --- reading ------------------------------------------------------------------------------

    def get(self, task_id: str) -> Task:
        check_ids(task_id)
        with self._store.read() as tx:
            task = self._tasks.get(tx, task_id)
        if task is None:
            raise NotFound(f"task '{shown_id(task_id)}' not found")
        return task

    def ready(
        self,
        agent_id: str | None = None,
        *,
        kinds: str | Sequence[str] | None = None,
        explain: bool = False,
        limit: int = 100,
    ) -> Readiness:
        """What can run now for ``agent_id`` (or for whichever agent each task is meant
        for), most urgent first: at most ``limit`` tasks, and how many in all. With
        ``explain``, also up to ``limit`` tasks that cannot, each with why (see
        :mod:`taskloom.domain.readiness`)."""
        agent = None if agent_id is None else check_agent(agent_id)
        checked = () if kinds is None else tuple(check_kinds(kinds))
        if type(limit) is not int or not 0 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be a whole number from 0 to {MAX_LIMIT}")
        if type(explain) is not bool:
            raise InvalidInput(f"explain is true or false, not {explain!r}")
        if not self._store.exists():
            return Readiness([], 0)
        with self._store.read() as tx:
            return graph.readiness(self._tasks, tx, agent, self._now(), checked, explain, limit)

    def why(self, task_id: str, agent_id: str | None = None) -> list[Reason]:
        """Why the task cannot run now (for ``agent_id``, or anyone), as :meth:`ready`
        explains it; empty if it can, or if it is finished."""
        check_ids(task_id)
        agent = None if agent_id is None else check_agent(agent_id)
        with self._store.read() as tx:
            return graph.why(self._tasks, tx, task_id, agent, self._now())

    def wait(self, task_id: str, timeout: float | None = None) -> Task:
        """The task once it has ended: completed (its ``result``), dead (its ``last_error``)
        or canceled; or once it is blocked (its ``result`` says by which task). Looks every 50
        ms at first, then less often, at most a second apart (:mod:`taskloom.queue.waiting`).
        ``timeout``: give up after this many seconds with :class:`~taskloom.errors.WaitTimeout`
        (by default, wait for as long as it takes)."""
        waiting = Waiting(task_id, timeout)
        while (task := self.get(task_id)).status not in WAIT_ENDS:
            time.sleep(waiting.pause(task))
        return task

    def list(
        self,
        *,
        status: str | None = None,
        agent: str | None = None,
        kinds: str | Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[Task]:
        """Tasks, most urgent first: of one ``status``, claimed by or meant for ``agent``,
        of one of ``kinds`` (a kind or a list, as a claim takes them).

        A task in progress whose lease has run out is shown as ``lease_expired`` (see
        :func:`~taskloom.domain.queue.shown_status`): listed as that and with the ``ready``
        tasks (a claim takes it back first), not as ``in_progress``."""
        if type(limit) is not int or not 0 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be a whole number from 0 to {MAX_LIMIT}")
        status = status.strip() if isinstance(status, str) else status
        if status and status not in SHOWN_STATUSES:
            shown = ", ".join(SHOWN_STATUSES)
            raise InvalidInput(f"unknown status '{shown_id(str(status))}' (one of: {shown})")
        checked_agent = check_agent(agent, "the agent to list for") if agent else None
        checked_kinds = None if kinds is None else check_kinds(kinds)
        now = self._now()
        with self._store.read() as tx:
            return self._tasks.find(
                tx,
                status=status or None,
                agent=checked_agent,
                kinds=checked_kinds,
                limit=limit,
                now=now,
            )

    def stats(self) -> dict[str, int]:
        """How many tasks there are of each status as shown (``lease_expired`` apart from
        ``in_progress``), and in all."""
        counts = dict.fromkeys(SHOWN_STATUSES, 0)
        now = self._now()
        with self._store.read() as tx:
            counts.update(self._tasks.counts(tx, now))
        counts["total"] = sum(counts.values())
        return counts

    def ready_count(self, agent_id: str) -> int:
        """How many tasks ``agent_id`` could claim now, as after the sweep a claim runs first
        (a lease run out included, and its group free), one per group: the count
        :meth:`surface` shows."""
        agent = check_agent(agent_id)
        with self._store.read() as tx:
            return self._tasks.claimable_count(tx, agent, self._now())

    def unsee(self, agent_id: str) -> None:
        """Forget the block ``agent_id`` last saw, so :meth:`surface` shows it again (a hook
        could not deliver it); its write waits as :meth:`surface`'s, then raises StoreBusy."""
        agent = check_agent(agent_id)
        with self._store.side_write(surfacing.CURSOR_WAIT_S) as tx:
            self._tasks.unsee(tx, agent)

    def surface(self, agent_id: str, *, claim: str = "") -> str | None:
        """The ready-task block for ``agent_id``, or ``None`` if nothing changed since the
        agent last saw it (the cursor lives in the database, shared by every process). It
        answers at once: the cursor write waits at most
        :data:`~taskloom.queue.surfacing.CURSOR_WAIT_S` for a lock another process holds,
        and without it the block is returned, to be shown again next time.
        ``claim``: how the block tells the agent to claim a task (default: the CLI command,
        :func:`~taskloom.domain.surface.claim_command`)."""
        agent_id = check_agent(agent_id)
        if type(claim) is not str:
            raise InvalidInput(
                f"claim must be text (how to claim a task), not {type(claim).__name__}"
            )
        return surfacing.surface(self._store, agent_id, self._now(), claim)

    def doctor(
        self, *, fix: bool = False, stuck_after_s: float = 3600, poisoned_at: int = 5
    ) -> dict[str, Any]:
        """Find lapsed leases (``lease_expired``; ``stuck``: those over for
        ``stuck_after_s``), orphaned (claimed by a process of this host that has died),
        poisoned (many attempts), dead and blocked tasks. With ``fix``, reclaim the lapsed
        and orphaned ones, then cancel the poisoned ready ones (those just reclaimed
        included, so one run is enough); live leases are never touched
        (:func:`taskloom.queue.doctor.examine`)."""
        stuck_after_s = check_seconds(stuck_after_s, "stuck_after_s")
        if type(poisoned_at) is not int or not 1 <= poisoned_at <= INT_RANGE[1]:
            raise InvalidInput(f"poisoned_at must be a whole number from 1 to {INT_RANGE[1]}")
        return doctor.examine(self._store, self._now, self.reclaim, fix, stuck_after_s, poisoned_at)


__all__ = ["TERMINAL", "Queue"]
