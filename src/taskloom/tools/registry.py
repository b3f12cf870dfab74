"""One registry of model-facing tools. OpenAI, Anthropic and MCP schemas are renderings of it.

A tool is a name, a description, a pydantic model of its arguments and a handler. The thread a
tool acts on comes from :class:`ToolContext`, set by the host, never from the model's
arguments. :func:`dispatch` never raises: every failure (unknown tool, bad JSON, a missing or
invalid argument, a broken invariant, an unknown id, even a bug) comes back as a
:class:`ToolResult` with ``is_error=True`` and the reason as its text, so the model can see it
and recover, and the agent's run goes on.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from taskloom.domain.common import parse_json_object
from taskloom.domain.errors import InvalidInput, TaskloomError
from taskloom.tools.leases import HeldLeases

if TYPE_CHECKING:
    from taskloom.client import Taskloom

log = logging.getLogger("taskloom.tools")

# Modules whose import registers built-in tools. Later features add their module here.
BUILTIN_MODULES: tuple[str, ...] = (
    "taskloom.tools.board",
    "taskloom.tools.goals",
    "taskloom.tools.queue",
    "taskloom.tools.stash",
)


class ToolArgs(BaseModel):
    """The base of every tool's arguments: strict, as each schema says (``true`` is not a
    1-token budget, ``"5"`` is not a number), and no unknown fields (a misspelt one would be
    ignored in silence)."""

    model_config = ConfigDict(extra="forbid", strict=True)


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Who is calling: set by the host from its own session state, never by the model."""

    thread_id: str | None = None
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    content: str
    is_error: bool = False
    data: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"content": self.content, "is_error": self.is_error, "data": self.data}


Handler = Callable[["Taskloom", Any, ToolContext], ToolResult]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    args: type[BaseModel]
    handler: Handler
    needs_thread: bool = True
    host_only: bool = False

    def input_schema(self) -> dict[str, Any]:
        """The arguments' JSON schema with ``$ref``s inlined and pydantic titles removed."""
        return clean_schema(self.args.model_json_schema())


MAX_DESCRIPTION_CHARS = 1_024
"""OpenAI refuses a whole request whose tool description is longer (HTTP 400,
``string_above_max_length``): the ``todo`` tool's 1,123 characters stopped every call."""


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}

    def register(self, spec: ToolSpec) -> ToolSpec:
        if spec.name in self._tools:
            raise ValueError(f"tool '{spec.name}' is already registered")
        if len(spec.description) > MAX_DESCRIPTION_CHARS:
            raise ValueError(
                f"tool '{spec.name}' has a description of {len(spec.description):,} characters;"
                f" OpenAI refuses requests with one over {MAX_DESCRIPTION_CHARS:,}"
            )
        self._tools[spec.name] = spec
        return spec

    def register_builtin(self, specs: Iterable[ToolSpec]) -> None:
        """Register a built-in module's tools; a module imported again (a reload, a test)
        registers nothing twice."""
        for spec in specs:
            if spec.name not in self._tools:
                self.register(spec)

    def get(self, name: str) -> ToolSpec | None:
        return self._tools.get(name)

    def specs(self, *, include_host: bool = False) -> list[ToolSpec]:
        return [t for t in self._tools.values() if include_host or not t.host_only]

    def names(self, *, include_host: bool = False) -> list[str]:
        return [t.name for t in self.specs(include_host=include_host)]


REGISTRY = ToolRegistry()


def load_builtin_tools() -> ToolRegistry:
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    return REGISTRY


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


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    cleaned: dict[str, Any] = _inline(schema, schema.get("$defs", {}))
    required = cleaned.get("required", [])
    props = cleaned.get("properties", {})
    # Required arguments first: models read schemas top-down, as people do.
    cleaned["properties"] = {
        **{k: props[k] for k in required if k in props},
        **{k: v for k, v in props.items() if k not in required},
    }
    return cleaned


def _validation_text(name: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown argument"
            if where in ("thread_id", "thread"):
                msg += " (the thread is bound by the host; do not pass it)"
        elif err["type"] == "missing":
            msg = "required"
        parts.append(f"{where}: {msg}")
    return f"invalid arguments for tool '{name}': " + "; ".join(parts)


MAX_ERROR_CHARS = 2_000
"""An error's text is cut here: many repeat what the model sent (an unknown 2 MB tool name or
card id), which came back whole into its context."""


def error_result(message: str) -> ToolResult:
    if len(message) > MAX_ERROR_CHARS:
        message = f"{message[:MAX_ERROR_CHARS]}… (error cut at {MAX_ERROR_CHARS:,} characters)"
    return ToolResult(content=f"error: {message}", is_error=True)


def dispatch(
    tl: Taskloom,
    registry: ToolRegistry,
    name: object,
    args: object,
    ctx: ToolContext,
    *,
    allow_host: bool = False,
) -> ToolResult:
    """Run one tool call. Never raises; failures are ``ToolResult(is_error=True)``.

    ``name`` and ``args`` come from a model's response, untrusted: anything JSON can hold."""
    try:
        return _dispatch(tl, registry, name, args, ctx, allow_host=allow_host)
    except Exception as exc:  # a gap in the checks below: still the model's error, not ours
        log.exception("tool call %.80r failed", name)
        return error_result(f"internal error in tool call: {type(exc).__name__}: {exc}")


def _dispatch(
    tl: Taskloom,
    registry: ToolRegistry,
    name: object,
    args: object,
    ctx: ToolContext,
    *,
    allow_host: bool,
) -> ToolResult:
    known = ", ".join(registry.names(include_host=allow_host))
    if not isinstance(name, str):  # a provider's JSON may hold a list or an object here
        what = "null" if name is None else type(name).__name__
        return error_result(
            f"unknown tool: a tool name is a string, not {what} (available: {known})"
        )
    spec = registry.get(name)
    if spec is None or (spec.host_only and not allow_host):
        return error_result(f"unknown tool '{name}' (available: {known})")
    if spec.needs_thread and not (ctx.thread_id and ctx.thread_id.strip()):
        return error_result(f"tool '{name}' needs a thread, and this call has none bound")
    if isinstance(args, str):
        try:
            args = (
                parse_json_object(args, f"the arguments object of tool '{name}'")
                if args.strip()
                else {}
            )
        except InvalidInput as exc:
            return error_result(exc.message)
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return error_result(f"arguments for tool '{name}' must be a JSON object")
    try:
        parsed = spec.args.model_validate(args)
    except ValidationError as exc:
        return error_result(_validation_text(name, exc))
    try:
        return spec.handler(tl, parsed, ctx)
    except TaskloomError as exc:
        return error_result(exc.message)
    except Exception as exc:  # the run must go on; log it for the host, tell the model
        log.exception("tool %s failed", name)
        return error_result(f"internal error in tool '{name}': {type(exc).__name__}: {exc}")


class Toolbox:
    """``tl.tools``: the registry bound to one :class:`~taskloom.client.Taskloom`."""

    def __init__(self, tl: Taskloom, registry: ToolRegistry | None = None) -> None:
        self._tl = tl
        self.registry = registry or load_builtin_tools()
        self.leases = HeldLeases(tl)

    def specs(self, *, include_host: bool = False) -> list[ToolSpec]:
        return self.registry.specs(include_host=include_host)

    def names(self, *, include_host: bool = False) -> list[str]:
        return self.registry.names(include_host=include_host)

    def schemas(
        self,
        format: str = "openai",
        *,
        names: Iterable[str] | None = None,
        include_host: bool = False,
    ) -> list[dict[str, Any]]:
        """Tool definitions in a provider's format: ``openai``, ``openai-responses``,
        ``anthropic`` or ``neutral``."""
        from taskloom.tools.formats import render

        specs = self.specs(include_host=include_host)
        if names is not None:
            wanted = set(names)
            unknown = wanted - {s.name for s in specs}
            if unknown:
                raise InvalidInput(f"unknown tool(s): {', '.join(sorted(unknown))}")
            specs = [s for s in specs if s.name in wanted]
        return render(specs, format)

    def dispatch(
        self,
        name: str,
        args: str | dict[str, Any] | None,
        ctx: ToolContext,
        *,
        allow_host: bool = False,
    ) -> ToolResult:
        """Run one tool call (see :func:`dispatch`), then renew the leases the calling agent
        took with ``task_next`` (:class:`~taskloom.tools.leases.HeldLeases`): a model
        that works keeps its tasks without calling ``task_extend``."""
        result = dispatch(self._tl, self.registry, name, args, ctx, allow_host=allow_host)
        self.leases.renew(ctx.agent_id)
        return result
