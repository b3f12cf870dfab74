"""Work-queue tasks: the record, input validation, and the text surfaced to agents.

The queue's state changes are SQL statements (claims must be one statement to be race-free),
so this module holds what is pure: the Task shape, the limits and the secret-key guard, and
the untrusted-data framing of the block shown to an agent.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, NamedTuple

from taskloom.domain.common import storable_size, visible_id
from taskloom.domain.errors import InvalidInput
from taskloom.domain.secrets import looks_secret
from taskloom.domain.status import words
from taskloom.domain.task_graph import (
    check_after,
    check_count,
    check_dedup_key,
    check_dep_ids,
    check_dep_keys,
    check_group_key,
    check_ref,
)
from taskloom.domain.text import shown_id

MAX_TITLE_BYTES = 200
MAX_BODY_BYTES = 4096
MAX_PAYLOAD_BYTES = 8192
MAX_TEXT_BYTES = 16_384
"""A result or a cancel reason; each is copied into the change's event."""
MAX_ERROR_BYTES = 4096
"""A failure's error is cut to this many bytes, not refused: tracebacks are long (refusing
one would lose the failure), and it goes into the failure's event."""
MAX_NAME_BYTES = 200
"""Agent ids and a task's ``source``: names, copied into every claim and its event."""
MAX_DEDUP_KEY_BYTES = 512
"""Well under PostgreSQL's limit for a unique index entry (about 2.7 KB), so a key one
backend takes the other takes too."""
MAX_SECONDS = 100 * 365.25 * 86400
"""The longest lease, delay or time to live: a longer one is a mistake (``inf``, ``1e300``)
that would overflow every time column and clock it reaches."""
MIN_LEASE_S = 1.0
"""The shortest lease a model or a worker may take: a shorter one (``1e-9``) runs out before
the answer is read (three such claims use up a task's attempts), and a worker renewing a third
of the way through it would never stop renewing."""
INT_RANGE = (-(2**31), 2**31 - 1)
"""Whole-number fields are 32-bit on PostgreSQL; SQLite is held to the same range so a task
that one backend accepts, the other does too."""
MAX_KINDS = 100
"""The most kinds one claim may ask for."""
_KIND = re.compile(r"^[a-z0-9][a-z0-9_.:-]{0,63}$")
OWN_KINDS = "taskloom."
"""The prefix of the kinds of taskloom's own work (its MCP server's calls): a model's
``task_delegate`` may not name one."""
MAX_PAYLOAD_DEPTH = 100
"""How deep a payload's objects and arrays may nest: far beyond any real task's, and well
short of where reading it back (or checking its keys) would run out of stack."""


class TaskStatus(enum.StrEnum):
    READY = "ready"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    CANCELED = "canceled"
    DEAD = "dead"
    BLOCKED = "blocked"
    """A dependency ended dead or canceled: the task cannot run until that one is requeued
    (its ``result`` names it)."""


TERMINAL = (TaskStatus.COMPLETED, TaskStatus.CANCELED, TaskStatus.DEAD)
LEASE_EXPIRED = "lease_expired"
"""The state shown for a task in progress whose lease has run out: it is no one's any more,
and the next claim takes it back (a sweep returns it to ready, or dead without attempts
left). Derived, never stored: see :func:`shown_status`."""
SHOWN_STATUSES = (*(s.value for s in TaskStatus), LEASE_EXPIRED)
"""What a task is shown as, and what ``list`` and ``stats`` tell apart."""


def shown_status(task: Task, now: float) -> str:
    """The task's status as shown at ``now``: ``lease_expired`` for a lapsed lease."""
    if (
        task.status is TaskStatus.IN_PROGRESS
        and task.lease_expires_at is not None
        and task.lease_expires_at <= now
    ):
        return LEASE_EXPIRED
    return task.status.value


TIME_FIELDS = (
    "created_at",
    "not_before",
    "expires_at",
    "claimed_at",
    "lease_expires_at",
    "completed_at",
    "changed_at",
)
"""A task's times: unix seconds on :class:`Task`, RFC 3339 text in its JSON form."""


def iso_time(ts: float | None) -> str | None:
    """Unix seconds as RFC 3339 UTC with milliseconds (rounded half up), as a task's times
    are shown everywhere."""
    if ts is None:
        return None
    ms = math.floor(ts * 1000 + 0.5)
    stamp = datetime.fromtimestamp(ms // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.")
    return f"{stamp}{ms % 1000:03d}Z"


CHANGE_FIELDS = (
    "id",
    "status",
    "claimed_by",
    "pid",
    "host",
    "claimed_at",
    "lease_expires_at",
    "attempts",
    "completed_at",
    "result",
    "last_error",
    "changed_at",
)
"""What a change of a task can alter, and its id: a task's event stores these in columns of
its own (``events.task_id`` and the columns named so), as the task row has them."""
_GIVEN = (
    "title",
    "body",
    "kind",
    "priority",
    "source",
    "target_agent",
    "dedup_key",
    "payload",
    "group_key",
    "depends_on",
    "depends_on_keys",
)
"""The fields a task is added with as they are stored."""
FIXED_FIELDS = (*_GIVEN, "created_at", "not_before", "expires_at", "max_attempts")
"""Set when a task is added and never changed: a task's event leaves them to the task row.
A change to one of them needs an event column of its own."""


def task_event_data(changed: Sequence[Any], fixed: Sequence[Any]) -> dict[str, Any]:
    """A ``task_state`` event's payload, :meth:`Task.to_dict`'s shape, from the event's
    :data:`CHANGE_FIELDS` (``changed``) and its task row's :data:`FIXED_FIELDS` (``fixed``),
    each in that order, as stored: times in unix seconds, the payload as JSON text. An event
    never carries the lease token."""
    stored: dict[str, Any] = dict(zip(CHANGE_FIELDS, changed, strict=True))
    stored.update(zip(FIXED_FIELDS, fixed, strict=True))
    out = {name: stored.get(name) for name in FIELD_NAMES}
    for name in TIME_FIELDS:
        out[name] = iso_time(out[name])
    out["payload"] = json.loads(stored["payload"])
    for name in _DEPS:
        out[name] = json.loads(stored[name]) if stored[name] else []
    said = words(str(out["status"]))
    out["mcp_status"], out["a2a_state"] = said.mcp, said.a2a
    return out


@dataclass(frozen=True)
class Task:
    """A task as stored (see SPEC Q1). Frozen; without ``__slots__``, so that
    :meth:`from_row` fills it in one call."""

    id: str
    title: str
    body: str = ""
    kind: str = "task"
    priority: int = 100
    status: TaskStatus = TaskStatus.READY
    source: str | None = None
    target_agent: str | None = None
    dedup_key: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    not_before: float | None = None
    expires_at: float | None = None
    claimed_by: str | None = None
    pid: int | None = None
    host: str | None = None
    claimed_at: float | None = None
    lease_expires_at: float | None = None
    lease_token: str | None = None
    attempts: int = 0
    max_attempts: int = 3
    completed_at: float | None = None
    result: str | None = None
    last_error: str | None = None
    changed_at: float | None = None
    group_key: str | None = None
    depends_on: tuple[str, ...] = ()
    """The ids of the tasks this one waits for."""
    depends_on_keys: tuple[str, ...] = ()
    """The dedup keys of the tasks this one waits for (a task holding one now or later)."""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Task:
        """A stored row, columns by name (absent ones take their defaults): the one way a
        task is read from the database."""
        task = _new(cls)
        fields = task.__dict__
        if len(row) == len(_DEFAULTS):  # a whole row (``RETURNING *``): no defaults needed
            fields.update(row)
        else:
            fields.update((name, row.get(name, default)) for name, default in _DEFAULTS)
        payload = row.get("payload") or "{}"
        if isinstance(payload, str):
            payload = {} if payload == "{}" else json.loads(payload)
        fields["payload"] = payload
        fields["status"] = _STATUS[row["status"]]
        for name in _DEPS:
            deps = row.get(name)
            fields[name] = tuple(json.loads(deps)) if deps else ()
        return task

    def to_dict(self, *, with_token: bool = False) -> dict[str, Any]:
        """JSON-ready; the lease token is included only for the worker that holds it. The
        status is said in MCP's and A2A's words too (``mcp_status``, ``a2a_state``)."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name in TIME_FIELDS:
                value = iso_time(value)
            out[name] = value
        out["status"] = self.status.value
        out["depends_on"] = list(self.depends_on)
        out["depends_on_keys"] = list(self.depends_on_keys)
        said = words(self.status)
        out["mcp_status"], out["a2a_state"] = said.mcp, said.a2a
        if not with_token:
            out["lease_token"] = None
        return out


_DEFAULTS = tuple(
    (f.name, None if f.default is dataclasses.MISSING else f.default)
    for f in dataclasses.fields(Task)
)
DEFAULT_ROW = MappingProxyType(dict(_DEFAULTS))
"""A whole stored row with every column at its default: what a new task's row holds but for
the columns it is written with."""
FIELD_NAMES = tuple(f.name for f in dataclasses.fields(Task))
"""A task's fields in declaration order: the columns of the ``tasks`` table."""
_FIXED = frozenset(FIXED_FIELDS)
_TIMES = frozenset(TIME_FIELDS)
_new = object.__new__
_STATUS = {status.value: status for status in TaskStatus}
_DEPS = ("depends_on", "depends_on_keys")


def check_text(
    value: object, name: str, *, required: bool = False, limit: int | None = MAX_TEXT_BYTES
) -> None:
    """A result, error or reason: text (or ``None`` unless ``required``), storable, and at
    most ``limit`` bytes (an over-long one is refused rather than cut, so nothing is lost
    without the caller knowing; ``None`` for text the caller cuts itself)."""
    if value is None and not required:
        return
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text")
    if required and not value.strip():
        raise InvalidInput(f"{name} must say something (got blank text)")
    size = storable_size(value, name)
    if limit is not None and size > limit:
        raise InvalidInput(f"{name} is longer than {limit} bytes")


def check_cap(value: object) -> int:
    """A queue's cap on ready tasks: a whole number from 1 up (``-1`` would cancel every ready
    task on the next add)."""
    if type(value) is not int or not 1 <= value <= INT_RANGE[1]:
        raise InvalidInput(f"max_active must be a whole number from 1 to {INT_RANGE[1]}")
    return value


def check_ids(task_id: object, token: object = "") -> None:
    """Task ids and lease tokens are printable ASCII text (taskloom makes them so); anything
    else is the caller's mistake, said as such on both backends rather than as a database
    error on one (PostgreSQL text cannot hold a NUL)."""
    if (
        type(task_id) is str
        and type(token) is str
        and task_id.isascii()
        and token.isascii()
        and task_id.isprintable()
        and token.isprintable()
    ):
        return
    for value in (task_id, token):
        if type(value) is not str:
            raise InvalidInput(f"task ids and lease tokens are text, not {type(value).__name__}")
        if not (value.isascii() and value.isprintable()):
            raise InvalidInput(f"{value!r} is not a task id or lease token")


def check_kinds(kinds: object) -> list[str]:
    """The kinds a claim asks for, as a list: one kind (text), or a list or tuple of them,
    each a valid kind (no other can match a task), at most :data:`MAX_KINDS` (one statement's
    worth of parameters on both backends). Anything else (a number, a mapping, a set) is
    refused rather than guessed at."""
    if isinstance(kinds, str):
        kinds = [kinds]
    elif not isinstance(kinds, list | tuple):
        raise InvalidInput(f"kinds must be a kind or a list of kinds, not {type(kinds).__name__}")
    if len(kinds) > MAX_KINDS:
        raise InvalidInput(f"a claim takes at most {MAX_KINDS} kinds")
    if not kinds:  # no kind would match no task; "any kind" is said by leaving kinds out
        raise InvalidInput("kinds names no kind: leave it out to claim a task of any kind")
    for kind in kinds:
        if not isinstance(kind, str) or not _KIND.match(kind):
            raise InvalidInput(
                f"invalid task kind {shown_id(repr(kind))}"
                " (lowercase letters, digits, . _ : -; at most 64)"
            )
    return list(kinds)


def cut_bytes(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, never inside a character."""
    data = text.encode("utf-8")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


def fit_text(text: str | None, what: str, limit: int) -> tuple[str | None, str]:
    """``text`` cut to ``limit`` bytes if it is longer, and a sentence saying so (empty if
    it fits). A model's or a command's result and error are cut alike rather than refused:
    the work, or the failure, is not lost to a retry that may never come, and whoever wrote
    it is told the limit."""
    if text is None or storable_size(text, what) <= limit:
        return text, ""
    kept = cut_bytes(text, limit)
    note = f" {what.capitalize()} was longer than {limit} bytes: only its first"
    return kept, f"{note} {len(kept.encode())} were kept."


def check_seconds(value: object, name: str, *, positive: bool = False) -> float:
    """A duration in seconds: a finite number, ``> 0`` if ``positive`` (else ``>= 0``), at
    most :data:`MAX_SECONDS`. (Every claim checks its lease: the usual value passes the
    first test, which ``NaN`` and ``inf`` fail.)"""
    if type(value) is float or type(value) is int:
        if (value > 0 if positive else value >= 0) and value <= MAX_SECONDS:
            return float(value)
        if math.isfinite(value) and value > MAX_SECONDS:
            raise InvalidInput(f"{name} must be at most {MAX_SECONDS:.0f} seconds (100 years)")
        if math.isfinite(value):
            raise InvalidInput(
                f"{name} must be {'more than' if positive else 'at least'} 0 seconds"
            )
    raise InvalidInput(f"{name} must be a finite number of seconds")


def check_agent(agent_id: object, what: str = "an agent id") -> str:
    """An agent id, trimmed: ``" coder-1 "`` and ``"coder-1"`` are one agent."""
    if type(agent_id) is not str:
        raise InvalidInput(f"{what} must be non-empty text")
    return _agent(agent_id, what)


@functools.lru_cache(maxsize=256)
def _agent(agent_id: str, what: str) -> str:
    """:func:`check_agent` for text, remembered: a worker claims under one id all day."""
    agent = agent_id.strip()
    if not agent:
        raise InvalidInput(f"{what} must be non-empty text")
    if storable_size(agent, what) > MAX_NAME_BYTES:
        raise InvalidInput(f"{what} is longer than {MAX_NAME_BYTES} bytes")
    return visible_id(agent, what)


def _check_payload_keys(value: Any, path: str = "", depth: int = 0) -> None:
    """Refuse a payload key that is not text (JSON would turn ``1`` or ``None`` into
    ``"1"`` or ``"null"`` unseen) or names a secret, and a payload nested too deeply (a
    self-reference included): each named by its path, never a ``RecursionError``."""
    if depth > MAX_PAYLOAD_DEPTH:
        raise InvalidInput(
            f"payload is nested too deeply (over {MAX_PAYLOAD_DEPTH} levels, or it holds itself)"
        )
    if isinstance(value, Mapping):
        for key, inner in value.items():
            where = f"{path}.{key}" if path else str(key)
            if type(key) is not str:
                raise InvalidInput(
                    f"payload key '{where}' is {type(key).__name__}, not text (JSON keys are text)"
                )
            if looks_secret(key):
                raise InvalidInput(
                    f"payload key '{where}' looks like a secret; pass secrets out of band"
                )
            _check_payload_keys(inner, where, depth + 1)
    elif isinstance(value, list | tuple):
        for i, inner in enumerate(value):
            _check_payload_keys(inner, f"{path}[{i}]", depth + 1)


_PAYLOAD_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
"""How a payload is stored: compact JSON, text as it is, no ``NaN`` or ``Infinity``."""


def validate_new_task(
    title: str, body: str, kind: str, payload: Mapping[str, Any] | None, max_attempts: int
) -> tuple[str, str, str, str]:
    """Check a task before it is stored; return ``(title, body, kind, payload_json)``."""
    title = " ".join(title.split())
    if not title:
        raise InvalidInput("task title must not be empty")
    if storable_size(title, "task title") > MAX_TITLE_BYTES:
        raise InvalidInput(f"task title is longer than {MAX_TITLE_BYTES} bytes")
    if storable_size(body, "task body") > MAX_BODY_BYTES:
        raise InvalidInput(f"task body is longer than {MAX_BODY_BYTES} bytes")
    if not _KIND.match(kind):
        raise InvalidInput(
            f"invalid task kind '{shown_id(kind)}' (lowercase letters, digits, . _ : -; at most 64)"
        )
    if max_attempts < 1:
        raise InvalidInput("max_attempts must be at least 1")
    if payload is not None and not isinstance(payload, Mapping):
        raise InvalidInput("payload must be a JSON object")
    data = dict(payload or {})
    _check_payload_keys(data)
    try:
        encoded = _PAYLOAD_JSON.encode(data)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"payload is not JSON-serialisable: {exc}") from None
    if storable_size(encoded, "payload") > MAX_PAYLOAD_BYTES:
        raise InvalidInput(f"payload is larger than {MAX_PAYLOAD_BYTES} bytes")
    return title, body, kind, encoded


NEW_TASK_FIELDS = (*_GIVEN, "delay_s", "ttl_s", "max_attempts")
"""What a task to add may say: ``Queue.add``'s arguments (``title`` is required)."""
BATCH_FIELDS = ("ref", "after")
"""What a task of a batch may say besides: its name in the batch, and the names of the
batch's tasks it depends on (see :mod:`taskloom.domain.task_graph`)."""
_NEW_TASK_KEYS = frozenset(NEW_TASK_FIELDS)
_BATCH_KEYS = _NEW_TASK_KEYS | frozenset(BATCH_FIELDS)
_TEXT_FIELDS = ("body", "kind", "source", "target_agent", "dedup_key")
_TEXT_LIMITS = {
    "body": MAX_BODY_BYTES,
    "source": MAX_NAME_BYTES,
    "target_agent": MAX_NAME_BYTES,
    "dedup_key": MAX_DEDUP_KEY_BYTES,
}
"""Each text field's limit (others: :data:`MAX_TEXT_BYTES`), checked before the rest."""


class NewTask(NamedTuple):
    """A task to add, checked (see :func:`new_task`); ``payload_json`` is its payload encoded."""

    title: str
    body: str
    kind: str
    priority: int
    source: str | None
    target_agent: str | None
    dedup_key: str | None
    payload_json: str
    delay_s: float | None
    ttl_s: float | None
    max_attempts: int
    group_key: str | None = None
    depends_on: tuple[str, ...] = ()
    depends_on_keys: tuple[str, ...] = ()
    ref: str | None = None
    after: tuple[str, ...] = ()


def new_task(fields: Mapping[str, Any], *, batch: bool = False) -> NewTask:
    """``fields`` (:data:`NEW_TASK_FIELDS`, ``title`` required; in a ``batch``, the
    :data:`BATCH_FIELDS` too) checked as ``Queue.add`` checks its arguments, plus their
    types, since they may come from a file."""
    if not isinstance(fields, dict | Mapping):
        raise InvalidInput("a task must be an object of fields")
    known = _BATCH_KEYS if batch else _NEW_TASK_KEYS
    if not fields.keys() <= known:
        unknown = sorted(fields.keys() - known)[0]
        names = (*NEW_TASK_FIELDS, *BATCH_FIELDS) if batch else NEW_TASK_FIELDS
        raise InvalidInput(f"unknown field '{unknown}' (known: {', '.join(names)})")
    get = fields.get
    title = get("title")
    if not isinstance(title, str):
        raise InvalidInput("a task needs a title (text)")
    for name in _TEXT_FIELDS:
        value = get(name)
        if value is not None:
            if type(value) is not str:
                raise InvalidInput(f"'{name}' must be text")
            limit = _TEXT_LIMITS.get(name, MAX_TEXT_BYTES)
            if storable_size(value, f"'{name}'") > limit:
                raise InvalidInput(f"'{name}' is longer than {limit} bytes")
    for name, default, lowest in (("priority", 100, INT_RANGE[0]), ("max_attempts", 3, 1)):
        value = get(name, default)
        if type(value) is not int:
            raise InvalidInput(f"'{name}' must be a whole number")
        if not lowest <= value <= INT_RANGE[1]:
            raise InvalidInput(f"'{name}' must be between {lowest} and {INT_RANGE[1]}")
    for name in ("delay_s", "ttl_s"):
        if get(name) is not None:
            check_seconds(get(name), f"'{name}'")
    delay, ttl = get("delay_s") or 0, get("ttl_s") or 0
    if ttl and delay >= ttl:
        raise InvalidInput(
            f"'ttl_s' ({ttl:g} s) must be longer than 'delay_s' ({delay:g} s): both count from"
            " now, so the task would expire before anyone could claim it"
        )
    dedup_key = check_dedup_key(get("dedup_key"))
    target = get("target_agent")
    if target is not None:
        target = check_agent(target, "'target_agent', when given,")
    ids, keys = check_dep_ids(get("depends_on")), check_dep_keys(get("depends_on_keys"))
    after = check_after(get("after"))
    check_count(ids, keys, after)
    body, kind = fields.get("body"), fields.get("kind")
    title, body, kind, payload_json = validate_new_task(
        title,
        "" if body is None else body,
        "task" if kind is None else kind,
        fields.get("payload"),
        fields.get("max_attempts", 3),
    )
    return NewTask(
        title=title,
        body=body,
        kind=kind,
        priority=fields.get("priority", 100),
        source=fields.get("source"),
        target_agent=target,
        dedup_key=dedup_key,
        payload_json=payload_json,
        delay_s=fields.get("delay_s"),
        ttl_s=fields.get("ttl_s"),
        max_attempts=fields.get("max_attempts", 3),
        group_key=check_group_key(get("group_key")),
        depends_on=ids,
        depends_on_keys=keys,
        ref=check_ref(get("ref")),
        after=after,
    )


def waits_until(task: Task, now: float) -> str | None:
    """When a ready task may be claimed, if that is still ahead (added with a delay, or failed
    with a retry delay): what explains a ready task that no claim takes."""
    if task.status is not TaskStatus.READY or task.not_before is None or task.not_before <= now:
        return None
    return iso_time(task.not_before)


def check_requeue(task: Task, now: float, key_holder: str | None, blocks: bool = False) -> None:
    """Whether ``task`` may go back to ready (``Queue.requeue``): a dead one, as a completed
    or canceled task was finished on purpose (add it again to rerun it), unless a canceled
    one ``blocks`` others (its dependents wait for it: running it after all releases them);
    not once its ``expires_at`` has passed, as whoever added it said not after that; and
    not while another live task, ``key_holder``, holds its dedup key. A blocked task is
    refused naming what to requeue instead: the task its result says blocks it."""
    if task.status is TaskStatus.BLOCKED:
        raise InvalidInput(
            f"task '{task.id}' is {task.result or 'blocked'}: requeue that task instead, and"
            " this one is released with it"
        )
    if task.status is not TaskStatus.DEAD and not (task.status is TaskStatus.CANCELED and blocks):
        raise InvalidInput(
            f"task '{task.id}' is {task.status.value}: only a dead task is requeued, or a"
            " canceled one that others are blocked by (add a new task to run finished work"
            " again)"
        )
    if task.expires_at is not None and task.expires_at <= now:
        raise InvalidInput(
            f"task '{task.id}' expired at {iso_time(task.expires_at)}: add it again to run it"
            " after that"
        )
    if key_holder is not None:
        raise InvalidInput(
            f"task '{key_holder}' now holds the dedup key '{task.dedup_key}' of task"
            f" '{task.id}', which stays {task.status.value}"
        )
