"""What a tool is: its arguments, the context the host binds, its result, and what it acts on.

A tool is a name, a description, a pydantic model of its arguments and a handler. A handler
takes a :class:`ToolEnv` (the host's boards, goals, guards and queue, and the leases its
toolbox renews), the parsed arguments and the :class:`ToolContext`. The thread a tool acts on
comes from that context, set by the host, never from the model's arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, model_validator

from taskloom.domain.errors import InvalidInput
from taskloom.tools.leases import HeldLeases

if TYPE_CHECKING:
    from taskloom.boards import BoardHandle
    from taskloom.domain.queue import Task
    from taskloom.goals.handle import GoalHandle
    from taskloom.guard.config import GuardConfig
    from taskloom.guard.core import Guard
    from taskloom.queue.handle import Queue


class ToolHost(Protocol):
    """What the tools act on. :class:`taskloom.Taskloom` is one."""

    def board(self, thread_id: str) -> BoardHandle:
        """The todo board of one thread."""
        ...

    def goal(self, thread_id: str) -> GoalHandle:
        """The goal of one thread."""
        ...

    def guard(self, thread_id: str, config: GuardConfig | None = None) -> Guard:
        """The context guard (and stash) of one thread."""
        ...

    @property
    def queue(self) -> Queue:
        """The shared work queue."""
        ...


@dataclass(frozen=True, slots=True)
class ToolEnv:
    """What a handler acts on: the host, and the leases its toolbox renews (``task_next``)."""

    host: ToolHost
    leases: HeldLeases


class ToolArgs(BaseModel):
    """The base of every tool's arguments: strict, as each schema says (``true`` is not a
    1-token budget, ``"5"`` is not a number), and no unknown fields (a misspelt one would be
    ignored in silence). ``null`` for an optional argument is the argument left out: many
    models send every parameter, null when unused."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_left_out(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        fields = cls.model_fields
        return {
            name: value
            for name, value in data.items()
            if value is not None
            or name not in fields
            or fields[name].is_required()
            or fields[name].default is None
        }


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Who is calling: set by the host from its own session state, never by the model.

    ``cancelled``: whether the caller has given up on the answer (an MCP request or task
    cancelled, the run no longer the server's); a tool that waits asks it between its looks
    and stops early. ``None``: the caller waits for the answer."""

    thread_id: str | None = None
    agent_id: str | None = None
    cancelled: Callable[[], bool] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        """The host's own values, checked here: a wrong type is the host's error, not a
        model's tool call failing inside."""
        for name in ("thread_id", "agent_id"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise InvalidInput(f"ToolContext {name} must be text, not {type(value).__name__}")
        if self.cancelled is not None and not callable(self.cancelled):
            raise InvalidInput("ToolContext cancelled must be a function that returns a bool")


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool call's answer: the text the model reads, whether it is an error, and the
    structured data behind the text (for hosts)."""

    content: str
    is_error: bool = False
    data: Any = None

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-able data."""
        return {"content": self.content, "is_error": self.is_error, "data": self.data}


Handler = Callable[[ToolEnv, Any, ToolContext], ToolResult]


@dataclass(frozen=True, slots=True)
class Effect:
    """What a call does beyond its answer, as MCP's tool annotations say it to clients.

    ``read_only``: it changes nothing. ``destructive``: it may remove or overwrite what a
    model or a person wrote (a card, a goal, a budget). ``idempotent``: calling it again
    with the same arguments changes nothing more. ``open_world``: it reaches beyond the
    thread, the queue and the stash (a web search does; no built-in tool does)."""

    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False


READS = Effect(read_only=True, idempotent=True)
"""A tool that only reads (or waits and reads)."""
ADDS = Effect()
"""A tool that adds or moves work, each call once more, and removes nothing."""
SETS = Effect(idempotent=True)
"""A tool that sets a state: the same call again leaves it as it is."""
REPLACES = Effect(destructive=True, idempotent=True)
"""A tool that overwrites or removes, to the state its arguments give."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: its name, its description, its arguments' model and its handler.
    ``needs_thread`` tools refuse a call with no thread bound; ``host_only`` tools are left
    out of the model's tool set unless the host asks for them.

    Two kinds of tool can take long, and an MCP client that speaks the Tasks extension gets
    an MCP task for their calls (:mod:`taskloom.mcp.tasks`); other calls answer at once.
    ``outcome``: the tool waits for a queue task to end (``task_delegate``). Called with
    ``wait_s`` 0 it answers at once with the queue task in ``data``, and ``outcome(task)``
    is its answer once that task has ended. ``slow``: whether a call may take long, for
    this host and context (an LLM's answer); such a call runs on a worker of the queue.
    ``rerun``: whether such a call may run again from its start after the server running it
    exits mid-call (:func:`taskloom.mcp.runs.on_exit` says what an exit does): true for a
    tool whose call has no effect but its answer (it reads, waits, or asks a model).
    ``effect``: what a call does (MCP's annotations); ``None`` for a tool that does not say,
    which clients take as the worst (destructive, open world)."""

    name: str
    description: str
    args: type[BaseModel]
    handler: Handler
    needs_thread: bool = True
    host_only: bool = False
    outcome: Callable[[Task], ToolResult] | None = None
    slow: Callable[[ToolEnv, ToolContext], bool] | None = None
    rerun: bool = False
    effect: Effect | None = None

    def input_schema(self) -> dict[str, Any]:
        """The arguments' JSON schema with ``$ref``s inlined and pydantic titles removed."""
        return clean_schema(self.args.model_json_schema())


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return _inline(merged, defs)
        return {
            k: _inline(v, defs)
            for k, v in node.items()
            if k != "$defs" and not (k == "title" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _optional(node: Any) -> Any:
    """``node`` with each optional argument's ``anyOf [T, null]`` and ``default: null`` said
    as ``T``: an argument left out of ``required`` is optional already, and the two ways of
    saying it cost a model's context a quarter of the schema. A null sent still reads as
    not given."""
    if isinstance(node, list):
        return [_optional(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: _optional(v) for k, v in node.items()}
    options = node.get("anyOf")
    if "default" in node and node["default"] is None and isinstance(options, list):
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1 and len(options) == 2:
            rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
            return {**kept[0], **rest}
    return node


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A pydantic JSON schema as models read it best: no ``$ref``s, no titles, optional
    arguments without ``null`` alternatives, required arguments first."""
    cleaned: dict[str, Any] = _optional(_inline(schema, schema.get("$defs", {})))
    required = cleaned.get("required", [])
    props = cleaned.get("properties", {})
    # Required arguments first: models read schemas top-down, as people do.
    cleaned["properties"] = {
        **{k: props[k] for k in required if k in props},
        **{k: v for k, v in props.items() if k not in required},
    }
    return cleaned


MAX_ERROR_CHARS = 2_000
"""An error's text is cut here: many repeat what the model sent (an unknown 2 MB tool name or
card id), which would come back whole into its context."""


def error_result(message: str) -> ToolResult:
    """An error result whose text is ``error: <message>``, cut at :data:`MAX_ERROR_CHARS`."""
    if len(message) > MAX_ERROR_CHARS:
        message = f"{message[:MAX_ERROR_CHARS]}… (error cut at {MAX_ERROR_CHARS:,} characters)"
    return ToolResult(content=f"error: {message}", is_error=True)
