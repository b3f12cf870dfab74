"""Retrieval tools for stashed tool results: ``read_result`` and ``extract_from_result``.

Both act on the thread bound by the host, so a model can never reach another thread's results
by guessing an id. Every failure (unknown or evicted id, bad path, bad range) comes back as
error text that says what to do next.
"""

from __future__ import annotations

from pydantic import Field

from taskloom.domain.errors import TaskloomError
from taskloom.tools.spec import READS, ToolArgs, ToolContext, ToolEnv, ToolResult, ToolSpec


class ReadResultArgs(ToolArgs):
    result_id: str = Field(min_length=1, description="The id in the placeholder: res_…")
    path: str | None = Field(None, description="JSONPath, e.g. $.items[3] or $..login.")
    lines: str | None = Field(None, description="Line range: '120-180' or '500-'.")
    page: int | None = Field(None, ge=1, description="Page number (with path: of its matches).")


class ExtractArgs(ToolArgs):
    result_id: str = Field(min_length=1, description="The id in the placeholder: res_…")
    query: str = Field(
        min_length=1,
        description="What to find, naming exact ids or fields ('state of issue 1347'), or a"
        " JSONPath or /regex/.",
    )


READ_DESCRIPTION = (
    "Read an exact slice of a stashed tool output: one of path (JSON), lines or page;"
    " none reads page 1. Replies are capped in tokens"
    " and say how to read on."
)
EXTRACT_DESCRIPTION = (
    "Find facts in a stashed tool output: verbatim fragments with their JSON path or line"
    " range; count, list and filter questions get exact answers with their JSONPath."
)


def _read(env: ToolEnv, args: ReadResultArgs, ctx: ToolContext) -> ToolResult:
    text = env.host.guard(ctx.thread_id or "").read(
        args.result_id, path=args.path, lines=args.lines, page=args.page
    )
    return ToolResult(content=text)


def _extract(env: ToolEnv, args: ExtractArgs, ctx: ToolContext) -> ToolResult:
    guard = env.host.guard(ctx.thread_id or "")
    return ToolResult(content=guard.extract(args.result_id, args.query))


def _asks_a_model(env: ToolEnv, ctx: ToolContext) -> bool:
    """Whether an extraction may ask the guard's model (and so take long)."""
    try:
        return env.host.guard(ctx.thread_id or "").config.llm is not None
    except TaskloomError:  # no thread, or not one: the call itself says so, at once
        return False


TOOLS = (
    ToolSpec("read_result", READ_DESCRIPTION, ReadResultArgs, _read, effect=READS),
    ToolSpec(
        "extract_from_result",
        EXTRACT_DESCRIPTION,
        ExtractArgs,
        _extract,
        slow=_asks_a_model,
        rerun=True,
        effect=READS,
    ),
)
"""The stash retrieval tools."""
