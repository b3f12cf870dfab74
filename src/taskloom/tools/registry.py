"""One registry of model-facing tools. OpenAI, Anthropic and MCP schemas are renderings of it.

The registry is built from the tools each module exports (:data:`BUILTIN_TOOLS`); importing a
module registers nothing. :func:`dispatch` never raises: every failure (unknown tool, bad
JSON, a missing or invalid argument, a broken invariant, an unknown id, even a bug) comes back
as a :class:`ToolResult` with ``is_error=True`` and the reason as its text, so the model can
see it and recover, and the agent's run goes on.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import orjson
from pydantic import ValidationError

from taskloom.domain.errors import InvalidInput, TaskloomError
from taskloom.tools import arguments
from taskloom.tools.board import TOOLS as BOARD_TOOLS
from taskloom.tools.delegate import TOOLS as DELEGATE_TOOLS
from taskloom.tools.formats import render
from taskloom.tools.goals import TOOLS as GOAL_TOOLS
from taskloom.tools.leases import HeldLeases
from taskloom.tools.profiles import select, split
from taskloom.tools.queue import TOOLS as QUEUE_TOOLS
from taskloom.tools.spec import (
    ToolContext,
    ToolEnv,
    ToolHost,
    ToolResult,
    ToolSpec,
    error_result,
)
from taskloom.tools.stash import TOOLS as STASH_TOOLS
from taskloom.tools.task_list import TOOLS as TASK_LIST_TOOLS

__all__ = [
    "BUILTIN_TOOLS",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "dispatch",
]

log = logging.getLogger("taskloom.tools")

BUILTIN_TOOLS: tuple[ToolSpec, ...] = (
    *BOARD_TOOLS,
    *TASK_LIST_TOOLS,
    *GOAL_TOOLS,
    *QUEUE_TOOLS,
    *DELEGATE_TOOLS,
    *STASH_TOOLS,
)
"""Every built-in tool, in the order they are listed to models."""

MAX_DESCRIPTION_CHARS = 1_024
"""OpenAI refuses a whole request whose tool description is longer (HTTP 400,
``string_above_max_length``)."""


class ToolRegistry:
    """Tools by name, in the order they were registered."""

    def __init__(self, specs: Iterable[ToolSpec] = ()) -> None:
        self._tools: dict[str, ToolSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: ToolSpec) -> ToolSpec:
        """Add one tool. Raises ``ValueError`` for a name taken already or a description
        longer than :data:`MAX_DESCRIPTION_CHARS`."""
        if spec.name in self._tools:
            raise ValueError(f"tool '{spec.name}' is already registered")
        if len(spec.description) > MAX_DESCRIPTION_CHARS:
            raise ValueError(
                f"tool '{spec.name}' has a description of {len(spec.description):,} characters;"
                f" OpenAI refuses requests with one over {MAX_DESCRIPTION_CHARS:,}"
            )
        self._tools[spec.name] = spec
        return spec

    def get(self, name: str) -> ToolSpec | None:
        """The tool called ``name``, host-only ones included (``None`` if there is none)."""
        return self._tools.get(name)

    def specs(self, *, include_host: bool = False) -> list[ToolSpec]:
        """The tools a model is given (with ``include_host``, the host-only ones too)."""
        return [t for t in self._tools.values() if include_host or not t.host_only]

    def names(self, *, include_host: bool = False) -> list[str]:
        """The names of :meth:`specs`."""
        return [t.name for t in self.specs(include_host=include_host)]


def dispatch(
    env: ToolEnv,
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
        result = _dispatch(env, registry, name, args, ctx, allow_host=allow_host)
    except Exception as exc:  # a gap in the checks below: still the model's error, not ours
        log.exception("tool call %.80r failed", name)
        result = error_result(f"internal error in tool call: {type(exc).__name__}: {exc}")
    return encodable(result)


_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(result: ToolResult) -> ToolResult:
    """``result`` with every lone surrogate in its text (and in the text of its data) replaced
    by U+FFFD. A model's JSON may carry one (``"\\ud800"``), and a result echoing it (an
    unknown id, an unknown tool's name) could not be encoded as UTF-8: the host's next request
    to the model would fail."""
    try:
        result.content.encode("utf-8")
        orjson.dumps(result.data)
    except (UnicodeEncodeError, TypeError):  # orjson's error is a TypeError
        content, data = _clean(result.content), _clean(result.data)
        return ToolResult(content, is_error=result.is_error, data=data)
    return result


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def _dispatch(
    env: ToolEnv,
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
        return error_result(
            f"tool '{name}' needs a thread, and this call has none bound: the host names the"
            " thread (`taskloom tool call --thread THREAD`, `taskloom mcp --thread THREAD`, the"
            " X-Taskloom-Thread header on /mcp, ToolContext(thread_id=…) in Python)"
        )
    try:
        parsed = spec.args.model_validate(arguments.read(args, name))
    except InvalidInput as exc:
        return error_result(exc.message)
    except ValidationError as exc:
        return error_result(arguments.refusal(name, exc))
    try:
        return spec.handler(env, parsed, ctx)
    except TaskloomError as exc:
        return error_result(exc.message)
    except Exception as exc:  # the run must go on; log it for the host, tell the model
        log.exception("tool %s failed", name)
        return error_result(f"internal error in tool '{name}': {type(exc).__name__}: {exc}")


MAX_CHOICES_KEPT = 64
"""How many choices' registries a toolbox keeps (each client may send its own choice)."""

Choice = str | Sequence[str] | None
"""A choice of tools: a profile's name, a comma-separated list of profile and tool names, a
list of them, or ``None`` for the default profile (:mod:`taskloom.tools.profiles`)."""


class Toolbox:
    """``tl.tools``: a registry (the built-in tools unless given one) bound to a host.

    The listing methods take a ``profile`` (:data:`Choice`): the tools a model is shown.
    :meth:`dispatch` runs any tool of the registry unless it is given the profile too, which
    it should be when the call comes from a model that was shown that profile."""

    def __init__(self, host: ToolHost, registry: ToolRegistry | None = None) -> None:
        self.registry = registry or ToolRegistry(BUILTIN_TOOLS)
        self.leases = HeldLeases(host.queue)
        self.env = ToolEnv(host, self.leases)
        self._chosen: dict[tuple[str, ...], ToolRegistry] = {}

    def specs(self, *, profile: Choice = None, include_host: bool = False) -> list[ToolSpec]:
        """The tools of ``profile`` (with ``include_host``, host-only ones may be named)."""
        return select(self.registry.specs(include_host=include_host), profile)

    def names(self, *, profile: Choice = None, include_host: bool = False) -> list[str]:
        """The names of :meth:`specs`."""
        return [s.name for s in self.specs(profile=profile, include_host=include_host)]

    def schemas(
        self, format: str = "openai", *, profile: Choice = None, include_host: bool = False
    ) -> list[dict[str, Any]]:
        """Tool definitions of ``profile`` (the default profile unless given) in a provider's
        format: ``openai``, ``openai-responses``, ``anthropic`` or ``neutral``."""
        return render(self.specs(profile=profile, include_host=include_host), format)

    def chosen(self, profile: Choice, *, include_host: bool = False) -> ToolRegistry:
        """A registry of ``profile``'s tools only (made once per choice)."""
        key = (str(include_host), *split(profile))
        registry = self._chosen.get(key)
        if registry is None:
            specs = self.specs(profile=profile, include_host=include_host)
            if len(self._chosen) >= MAX_CHOICES_KEPT:
                self._chosen.clear()
            registry = self._chosen[key] = ToolRegistry(specs)
        return registry

    def dispatch(
        self,
        name: str,
        args: str | dict[str, Any] | None,
        ctx: ToolContext,
        *,
        profile: Choice | Literal[False] = False,
        allow_host: bool = False,
    ) -> ToolResult:
        """Run one tool call (see :func:`dispatch`), then renew the leases the calling agent
        took with ``task_next`` (:class:`~taskloom.tools.leases.HeldLeases`): a model
        that works keeps its tasks without calling ``task_extend``. With a ``profile``, a
        tool outside it is an unknown tool."""
        if not isinstance(ctx, ToolContext):
            raise InvalidInput(
                f"a tool call's context is a ToolContext(thread_id=…), not {type(ctx).__name__}"
            )
        registry = (
            self.registry if profile is False else self.chosen(profile, include_host=allow_host)
        )
        result = dispatch(self.env, registry, name, args, ctx, allow_host=allow_host)
        self.leases.renew(ctx.agent_id)
        return result
