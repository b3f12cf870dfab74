"""``taskloom tasks …``: the queue from a shell."""

from __future__ import annotations

import json
import re
import time
from typing import Annotated, Any

import typer

from taskloom.cli.common import (
    LINE_BREAK,
    MAX_LIMIT,
    Agent,
    DbOption,
    JsonOption,
    err,
    flag_names,
    note,
    open_db,
    open_existing,
    open_listing,
    print_error,
    print_json,
    print_text,
    read_file,
    read_stdin,
)
from taskloom.cli.retention import AGE, AGE_EXAMPLES, days_alias, one_age, task_age
from taskloom.cli.task_views import line, list_, one, ready, show, stats
from taskloom.cli.work import work
from taskloom.domain.common import parse_json, parse_json_object, parse_json_values
from taskloom.domain.errors import (
    Interrupted,
    InvalidInput,
    NotFound,
    TaskloomError,
    WaitTimeout,
)
from taskloom.domain.queue import (
    Task,
    TaskStatus,
    check_seconds,
)
from taskloom.domain.readiness import shown_dict
from taskloom.domain.text import counted
from taskloom.queue.handle import Queue

app = typer.Typer(
    help="Add, claim, finish and inspect the tasks of the shared work queue.\n\n"
    'Example: taskloom tasks add "Review PR 12" --kind review',
    no_args_is_help=True,
)

TaskId = Annotated[str, typer.Argument(help="Task id.")]
Token = Annotated[str, typer.Option("--token", help="The lease token from `tasks next`.")]
ADD_FLAGS = {
    "target_agent": "--for",
    "dedup_key": "--dedup",
    "delay_s": "--delay",
    "ttl_s": "--ttl",
    "max_attempts": "--max-attempts",
    "priority": "--priority",
    "body": "--body",
    "source": "--source",
    "depends_on": "--after",
    "depends_on_keys": "--after-key",
    "group_key": "--group",
}
"""``queue.add``'s argument names as ``tasks add`` spells them, for its errors."""


DEFAULTS = ("", "task", 100, None, None, None, 0.0, 0.0, 3, None)
"""``tasks add``'s defaults: body, kind, priority, --for, --dedup, --payload, --delay, --ttl,
--max-attempts, --source."""
FIELDS_HELP = (
    "Fields: title (required), body, kind, priority, source, target_agent, dedup_key, payload,"
    " delay_s, ttl_s, max_attempts, group_key, depends_on (task ids), depends_on_keys (dedup"
    " keys), ref (the file's own name for the task) and after (refs of the file's tasks it"
    " depends on, earlier or later in the file)."
)


@app.command()
def add(
    title: Annotated[
        str | None, typer.Argument(help="Task title (≤200 bytes).", show_default=False)
    ] = None,
    body: Annotated[str, typer.Option(help="Details (≤4 KiB).")] = "",
    kind: Annotated[str, typer.Option(help="Task kind.")] = "task",
    priority: Annotated[int, typer.Option(help="Lower is more urgent.")] = 100,
    agent: Annotated[str | None, typer.Option("--for", help="Only this agent may claim.")] = None,
    dedup: Annotated[str | None, typer.Option(help="At most one live task per key.")] = None,
    payload: Annotated[str | None, typer.Option(help="JSON object (≤8 KiB, no secrets).")] = None,
    delay: Annotated[
        float,
        typer.Option(
            "--delay",
            help="Seconds before anyone may claim it (default: at once).",
            show_default=False,
        ),
    ] = 0.0,
    ttl: Annotated[
        float,
        typer.Option(
            "--ttl",
            help="Seconds after which, unclaimed, it is canceled (default: never).",
            show_default=False,
        ),
    ] = 0.0,
    max_attempts: Annotated[
        int, typer.Option("--max-attempts", help="Claims before it goes dead.")
    ] = 3,
    source: Annotated[
        str | None, typer.Option("--source", help="Who or what asked for it.")
    ] = None,
    after: Annotated[
        list[str] | None,
        typer.Option("--after", help="Run after this task (its id; repeat).", show_default=False),
    ] = None,
    after_key: Annotated[
        list[str] | None,
        typer.Option(
            "--after-key",
            help="Run after the task holding this dedup key, now or once added (repeat).",
            show_default=False,
        ),
    ] = None,
    group: Annotated[
        str | None,
        typer.Option("--group", help="At most one task of this group runs at a time."),
    ] = None,
    from_file: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="Add the tasks of this file instead (JSON lines, objects over several lines"
            " as jq prints them, or one JSON array; - reads standard input), all or none, in"
            " one transaction.",
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Enqueue a task, or with --from a file of them, which may form a graph.

    With --from, each line is a task's fields, and a task may name the file's tasks it runs
    after by their refs, forward or back; a bad line (or a cycle) adds nothing and is named.

    Example: taskloom tasks add "Deploy" --after 0193… --group prod
    Example: taskloom tasks add --from plan.jsonl
    """
    if from_file is not None:
        flags = (body, kind, priority, agent, dedup, payload, delay, ttl, max_attempts, source)
        others = (after, after_key, group)
        if title is not None or flags != DEFAULTS or any(v is not None for v in others):
            raise InvalidInput("--from takes every task from the file: give no title, nor flags")
        _add_file(from_file, db, as_json)
        return
    if title is None:
        raise InvalidInput("a task needs a title, or --from FILE for a file of tasks")
    if dedup is not None and not dedup.strip():  # "--dedup $KEY", KEY unset: no dedup at all
        raise InvalidInput("--dedup, when given, must not be empty")
    data = parse_json_object(payload, "--payload") if payload else None
    queue = open_db(db).queue
    with flag_names(ADD_FLAGS):
        task, added = queue.add(
            title,
            body=body,
            kind=kind,
            priority=priority,
            target_agent=agent,
            dedup_key=dedup,
            payload=data,
            delay_s=delay,
            ttl_s=ttl,
            max_attempts=max_attempts,
            source=source,
            depends_on=after or (),
            depends_on_keys=after_key or (),
            group_key=group,
        )
    if as_json:
        # A dedup hit answers with the existing task and exit 0: ``added`` tells them apart.
        print_json({**shown_dict(task, time.time()), "added": added})
    else:
        if not added:
            print_text("(already queued under that dedup key)")
        print_text(line(task) + _evicted(task))
    _note_cap(queue)


def _evicted(task: Task) -> str:
    """Why a task just added is already canceled: the cap evicted it, as the least urgent."""
    return f"  ({task.result})" if task.status == "canceled" else ""


def _note_cap(queue: Queue) -> None:
    """At the cap each add evicts a ready task, and the evicted tasks are not in the answer:
    say so on stderr (stdout keeps its shape for scripts)."""
    if queue.stats()["ready"] >= queue.max_active:
        err.print(
            f"note: the queue holds its cap of {queue.max_active:,} ready tasks: each task added"
            " evicts (cancels) the least urgent, oldest ready one",
            markup=False,
        )


@app.command("add-many")
def add_many(
    source: Annotated[
        str,
        typer.Argument(
            help="A file of tasks, JSON lines (one object a line, or objects over several"
            " lines as jq prints them) or one JSON array; - reads standard input."
        ),
    ],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Enqueue many tasks in one transaction: all of them or, if one is wrong, none.

    The same as tasks add --from. A file without a task (empty, or []) is an error, exit 1.

    Example: taskloom tasks add-many plan.jsonl
    """
    _add_file(source, db, as_json)


add_many.__doc__ = f"{add_many.__doc__}\n    {FIELDS_HELP}\n"
add.__doc__ = f"{add.__doc__}\n    {FIELDS_HELP}\n"


def _add_file(source: str, db: str | None, as_json: bool) -> None:
    """Add the tasks of a file (``-``: standard input) in one transaction; an error names
    the file (or standard input) and the line. A file without a task (empty, blank lines,
    ``[]``) is an error too, exit 1, as every input a command cannot act on."""
    text = read_stdin("add --from", strict=True) if source == "-" else read_file(source)
    where = "standard input" if source == "-" else source
    queue = open_db(db).queue
    try:
        tasks, lines = _task_objects(text, queue.max_active)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc.message}") from None
    if not tasks:  # an empty file (a script's plan that came out empty) is not a success
        raise InvalidInput(f"no tasks in {where}: nothing was added")
    if len(tasks) >= NOTED_BATCH:
        note(f"adding {len(tasks):,} tasks from {where} in one transaction…", prefix="")
    try:
        answers = queue.add_many(tasks)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {_on_line(exc, lines).message}") from None
    if as_json:
        # Each task as ``tasks add --json`` prints one, so a script reads both alike.
        now = time.time()
        print_json([{**shown_dict(task, now), "added": added} for task, added in answers])
    else:
        for task, added in answers:
            print_text(line(task) + (_evicted(task) if added else "  (already queued)"))
        fresh = sum(added for _, added in answers)
        gone = sum(added and task.status == "canceled" for task, added in answers)
        at_once = f" ({gone:,} of them evicted at once)" if gone else ""
        print_text(f"{fresh:,} added{at_once}, {len(answers) - fresh:,} already queued")
    _note_cap(queue)


NOTED_BATCH = 1000
"""A file of this many tasks or more is announced on stderr before the transaction that
adds them, which takes seconds."""


def _task_objects(text: str, cap: int) -> tuple[list[Any], list[int] | None]:
    """The tasks of a JSON array, or of JSON lines (blank lines skipped; LF, CRLF or CR
    ends a line) with the line each is on; errors name the line. Objects that each span
    several lines, one after another (as ``jq`` prints them), are read too, each on the line
    it starts on. More lines than the queue's ``cap`` are refused before any is parsed."""
    if text.lstrip().startswith("["):
        tasks = list(parse_json(text, "the JSON array of tasks"))
        _within(len(tasks), cap)
        return tasks, None
    numbered = [(n, line) for n, line in enumerate(LINE_BREAK.split(text), 1) if line.strip()]
    if not (numbered and _open_at_end(numbered[0][1])):  # else a task spans several lines
        _within(len(numbered), cap)
    tasks = []
    for at, (n, text_line) in enumerate(numbered):
        try:
            tasks.append(parse_json(text_line, f"line {n}"))
        except InvalidInput:
            following = numbered[at + 1][1] if at + 1 < len(numbered) else ""
            if not _open_at_end(text_line) or _an_object(following):
                raise  # bad JSON, or a JSON line cut short before a whole one
            # A value that goes on past its line: objects over several lines, as jq prints.
            values = parse_json_values(LINE_BREAK.sub("\n", text))
            _within(len(values), cap)
            return [value for _, value in values], [n for n, _ in values]
    return tasks, [n for n, _ in numbered]


def _an_object(line: str) -> bool:
    """Whether ``line`` is a JSON object on its own."""
    try:
        return isinstance(json.loads(line), dict)
    except (RecursionError, ValueError):  # JSONDecodeError, a number too long
        return False


def _open_at_end(line: str) -> bool:
    """Whether ``line`` is JSON cut short: its only fault is that it ends inside a value."""
    try:
        json.loads(line)
    except json.JSONDecodeError as exc:
        return exc.pos >= len(line.rstrip())
    except (RecursionError, ValueError):
        return False
    return False


def _within(count: int, cap: int) -> None:
    """Refuse ``count`` tasks when they are more than the queue's ``cap``."""
    if count > cap:
        raise InvalidInput(f"{count:,} tasks are more than the queue's cap of {cap:,}")


_TASK_N = re.compile(r"task (\d+): ")
_OTHER_N = re.compile(r"(?<=\()task \d+(?: -> task \d+)+(?=\))|(?<=is also )task \d+(?='s)")
"""Other tasks of the file a message names by place: a cycle's, a ref's first owner."""


def _on_line(exc: InvalidInput, lines: list[int] | None) -> InvalidInput:
    """``exc`` naming the file's line of the task it is about, not its place among the
    tasks: blank lines are skipped, so task 2 may be on line 4; the other tasks it names
    by place likewise."""
    found = _TASK_N.match(exc.message)
    if lines is None or found is None or not 0 < int(found[1]) <= len(lines):
        return exc
    known = lines

    def on_line(match: re.Match[str]) -> str:
        places = [int(n) for n in re.findall(r"\d+", match[0])]
        if not all(0 < n <= len(known) for n in places):
            return match[0]
        return " -> ".join(f"line {known[n - 1]}" for n in places)

    rest = _OTHER_N.sub(on_line, exc.message[found.end() :])
    return type(exc)(f"line {lines[int(found[1]) - 1]}: {rest}")


@app.command()
def next(
    agent: Agent,
    lease: Annotated[float, typer.Option(help="Lease in seconds.")] = 300.0,
    kind: Annotated[list[str] | None, typer.Option(help="Only these kinds (repeat).")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Claim the most urgent task and print it with its lease token (exit 3 if none).

    The claim outlives this command: the agent that ran it holds the task until it is done,
    failed, released, or the lease runs out.

    Example: taskloom tasks next --agent coder-1 --json
    """
    # Not bound to this process, which exits now: doctor --fix must not read its death as
    # the agent's.
    check_seconds(lease, "--lease", positive=True)  # named as typed, not "a lease"
    queue = open_listing(db).queue
    task = queue.claim(agent, lease=lease, kinds=kind, bind_process=False)
    if task is None:
        print_text("null" if as_json else "(no task ready)")
        raise typer.Exit(3)
    try:
        one(task, as_json, with_token=True, must_arrive=True)
    except TaskloomError:  # nobody got the token: the task would wait out its lease
        queue.release(task.id, task.lease_token or "")
        raise


@app.command()
def done(
    task_id: TaskId,
    token: Token,
    result: Annotated[
        str | None, typer.Option(help="What came of it (kept as its result).")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Complete a claimed task.

    Example: taskloom tasks done 0193… --token abc… --result "merged"
    """
    one(open_existing(db).queue.done(task_id, token, result), as_json)


@app.command()
def fail(
    task_id: TaskId,
    token: Token,
    error: Annotated[str, typer.Option(help="What went wrong (kept as last_error).")],
    no_retry: Annotated[
        bool, typer.Option("--no-retry", help="Mark it dead now instead of retrying.")
    ] = False,
    retry_delay: Annotated[
        float,
        typer.Option(
            "--retry-delay",
            help="Seconds before it may be claimed again (default: at once).",
            show_default=False,
        ),
    ] = 0.0,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Record a failure (retried until max_attempts, then dead).

    Example: taskloom tasks fail 0193… --token abc… --error "CI is down" --retry-delay 300
    """
    retry_delay = check_seconds(retry_delay, "--retry-delay")
    queue = open_existing(db).queue
    one(queue.fail(task_id, token, error, retry=not no_retry, retry_delay=retry_delay), as_json)


@app.command()
def release(
    task_id: TaskId, token: Token, db: DbOption = None, as_json: JsonOption = False
) -> None:
    """Give a claimed task back to the queue.

    Example: taskloom tasks release 0193… --token abc…
    """
    one(open_existing(db).queue.release(task_id, token), as_json)


@app.command()
def extend(
    task_id: TaskId,
    token: Token,
    lease: Annotated[float, typer.Option(help="New lease in seconds, counted from now.")] = 300.0,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Renew a lease.

    Example: taskloom tasks extend 0193… --token abc… --lease 600
    """
    check_seconds(lease, "--lease", positive=True)
    one(open_existing(db).queue.extend(task_id, token, lease), as_json)


@app.command()
def cancel(
    task_id: TaskId,
    reason: Annotated[
        str | None, typer.Option(help="Why it was canceled (kept as its result).")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cancel a task that is not finished.

    Example: taskloom tasks cancel 0193… --reason "duplicate"
    """
    one(open_existing(db).queue.cancel(task_id, reason), as_json)


@app.command()
def requeue(
    task_ids: Annotated[
        list[str] | None,
        typer.Argument(
            help="Ids of dead tasks (or canceled ones others are blocked by).", show_default=False
        ),
    ] = None,
    all_dead: Annotated[
        bool, typer.Option("--all-dead", help="Every dead task, instead of ids.")
    ] = False,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Put dead tasks back to ready with their attempts reset, once what killed them is fixed.

    Their last error stays for the next worker to read; the tasks they blocked are released
    (those nothing else blocks). A canceled task that others are blocked by is
    requeued too. A task that is neither, has expired, or whose dedup key another live task
    now holds is refused and left as it is; the others are requeued (exit 1 if any was
    refused). --json prints the requeued tasks as one list.

    Example: taskloom tasks requeue --all-dead
    """
    if bool(task_ids) == all_dead:
        raise InvalidInput("name the dead tasks to requeue, or give --all-dead (not both)")
    queue, requeued, refused = open_existing(db).queue, [], 0
    ids = list(dict.fromkeys(task_ids or [])) or [
        task.id for task in queue.list(status="dead", limit=MAX_LIMIT)
    ]
    for task_id in ids:
        try:
            task = queue.requeue(task_id)
        except (InvalidInput, NotFound) as exc:
            print_error(exc)
            refused += 1
            continue
        requeued.append(task)
        if not as_json:
            print_text(line(task) + _evicted(task))
    if as_json:
        print_json([shown_dict(task, time.time()) for task in requeued])
    elif not ids:
        print_text("no dead task")
    if refused:
        raise typer.Exit(1)


UNFINISHED = 4
"""The exit status of ``tasks wait`` for a task that ended dead or canceled (as ``tasks
work`` exits 4 when a task failed)."""
TIMED_OUT = 124
"""The exit status of ``tasks wait --timeout`` running out, as ``timeout(1)`` has it."""


@app.command()
def wait(
    task_id: TaskId,
    timeout: Annotated[
        float | None,
        typer.Option(help="Give up after this many seconds (exit 124).", show_default=False),
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Wait until a task is finished; print its result, or why it ended unfinished (exit 4).

    A dead task prints its last error and a canceled one its reason, on standard error
    (exit 4); so does a blocked one, which runs only once what blocks it is requeued. --json
    prints the task as it ended instead of its result.

    Example: taskloom tasks wait "$(taskloom tasks add Build --json | jq -r .id)"
    """
    if timeout is not None:
        check_seconds(timeout, "--timeout")
    try:
        task = open_existing(db).queue.wait(task_id, timeout)
    except WaitTimeout as exc:
        print_error(exc)
        raise typer.Exit(TIMED_OUT) from None
    except KeyboardInterrupt:
        raise Interrupted(f"stopped waiting; task {task_id} is not changed") from None
    if as_json:
        print_json(shown_dict(task, time.time()))
    elif task.status is TaskStatus.COMPLETED and task.result is not None:
        print_text(task.result)
    if task.status is TaskStatus.DEAD:
        print_error(f"task {task_id} is dead: {task.last_error}")
    elif task.status is TaskStatus.CANCELED:
        print_error(f"task {task_id} was canceled: {task.result or 'no reason given'}")
    elif task.status is TaskStatus.BLOCKED:
        print_error(f"task {task_id} is {task.result}")
    if task.status is not TaskStatus.COMPLETED:
        raise typer.Exit(UNFINISHED)


@app.command()
def prune(
    older_than: Annotated[
        str | None,
        typer.Option(
            AGE,
            help=f"Delete finished tasks older than this: {AGE_EXAMPLES} (0: every finished"
            " task; default: 7d).",
            show_default=False,
        ),
    ] = None,
    days: Annotated[
        float | None, typer.Option("--days", hidden=True, help="--older-than's old name, in days.")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Delete finished tasks older than the retention window.

    Example: taskloom tasks prune --older-than 30d
    """
    one_age(older_than, days, "--days")
    age = "7d" if older_than is None else older_than  # "" is refused, not the default
    seconds = days_alias(days, "--days") if days is not None else task_age(age)
    pruned = open_existing(db).queue.prune(seconds)
    if as_json:
        print_json({"pruned": pruned})
    else:
        print_text(f"pruned {counted(pruned, 'task')}")


app.command("list")(list_)
app.command()(show)
app.command()(stats)
app.command()(ready)
app.command()(work)
