"""A producer and a pool of worker processes sharing one queue, with ``taskloom.Worker``.

    .venv/bin/python examples/queue_workers.py --tasks 40 --workers 3
    .venv/bin/python examples/queue_workers.py --db postgresql://localhost/app --workers 8

The producer adds the tasks (a dedup key each: a task still waiting or in progress from an
earlier run is not added again), then each worker process claims, works and finishes them
until none is ready. They are of the example's own kind, ``example.square``, and the workers
claim that kind only: other work in the same queue is left alone. The work here is a
short sleep that fails one task in five on its first attempt, to show retries; put your own
in ``handle``. Watch it live in ``taskloom serve`` (the queue tab) while it runs. At the end
the script checks the queue: every task completed exactly once (exit status 0; 1 when one
was left unfinished, listed by ``--help`` with the others). Ctrl-C stops it cleanly: each
worker finishes the task in hand and claims no other; the rest stay in the queue for the next
run (exit status 130).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import signal
import sys
import time
from multiprocessing.synchronize import Event

import taskloom
from taskloom import Task, TaskFailed, TaskloomError

KIND = "example.square"
"""The kind of the example's tasks, the only kind its workers claim."""

EXIT_CODES = """exit status:
  0    every task of this run completed
  1    a task was left unfinished (dead, canceled, or held by another worker), or the
       database failed
  2    a usage error: an unknown flag, or a value out of range
  130  interrupted (Ctrl-C): the tasks left stay queued for the next run"""


def handle(task: Task) -> str:
    """The work: whatever a task's payload asks for. Its return value is the task's result;
    raising TaskFailed retries it (until max_attempts), NoRetry sends it dead at once."""
    time.sleep(random.uniform(0.01, 0.05))
    n = task.payload["n"]
    if n % 5 == 0 and task.attempts == 1:
        raise TaskFailed(f"item {n}: upstream busy, try again")
    return f"item {n} squared is {n * n}"


def work(url: str, agent: str, stopping: Event) -> None:
    """One worker process. It starts ignoring Ctrl-C: the producer gets it and sets
    ``stopping``, and the worker then finishes the task in hand and claims no other."""

    def check(_task: Task) -> None:
        if stopping.is_set():
            worker.stop()

    with taskloom.connect(url) as tl:
        worker = taskloom.Worker(tl.queue, agent, handle, lease=30, kinds=[KIND], on_start=check)
        summary = worker.run(until_empty=True)
    line = (
        f"{agent}: {summary.completed} completed, {summary.failed} failed and retried,"
        f" {summary.dead} dead, {summary.lost} lost\n"
    )
    sys.stdout.write(line)  # one write: unbuffered, text then newline would interleave
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--db", default=None, help="database URL (default: $TASKLOOM_URL, else ./.taskloom/)"
    )
    parser.add_argument("--tasks", type=int, default=40, help="how many tasks to add (default: 40)")
    parser.add_argument(
        "--workers", type=int, default=3, help="how many worker processes (default: 3)"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.tasks <= 100_000 or not 1 <= args.workers <= 64:
        parser.error("--tasks is from 1 to 100000 and --workers from 1 to 64")
    try:
        return produce_and_work(args.db, args.tasks, args.workers)
    except KeyboardInterrupt:  # before the workers started, or after they ended
        print("interrupted", file=sys.stderr)
        return 130


def produce_and_work(db: str | None, count: int, workers: int) -> int:
    try:
        with taskloom.connect(db) as tl:
            url = tl.url
            added = tl.queue.add_many(
                {
                    "title": f"square {n}",
                    "kind": KIND,
                    "payload": {"n": n},
                    "dedup_key": f"{KIND}-{n}",
                }
                for n in range(count)
            )
        print(f"added {sum(new for _, new in added)} tasks to {url}", flush=True)
        ctx = multiprocessing.get_context("spawn")
        stopping = ctx.Event()
        procs = [
            ctx.Process(target=work, args=(url, f"worker-{i}", stopping)) for i in range(workers)
        ]
        inherited = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the workers start ignoring it
        try:
            for proc in procs:
                proc.start()
        finally:
            signal.signal(signal.SIGINT, inherited)
        try:
            for proc in procs:
                proc.join()
        except KeyboardInterrupt:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C changes nothing
            stopping.set()
            for proc in procs:
                proc.join()
        with taskloom.connect(url) as tl:
            stats = tl.queue.stats()
            mine = [tl.queue.get(task.id) for task, _ in added]
    except TaskloomError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    done = [t for t in mine if t.status == "completed"]
    retried = sum(1 for t in done if t.attempts > 1)
    print(f"{len(done)} of {len(mine)} tasks completed ({retried} after a retry); queue: {stats}")
    if stopping.is_set():
        print("interrupted: run it again to work the tasks left", file=sys.stderr)
        return 130
    if len(done) < len(mine):
        left = len(mine) - len(done)
        print(
            f"{left} task{'s' if left > 1 else ''} not completed:"
            f" see taskloom tasks list --kind {KIND}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
