"""Retrieval tools for stashed tool results: ``read_result`` and ``extract_from_result``.

Both act on the thread bound by the host, so a model can never reach another thread's results
by guessing an id. Every failure (unknown or evicted id, bad path, bad range) comes back as
error text that says what to do next.
"""

from __future__ import annotations

from pydantic import Field

from taskloom.tools.spec import ToolArgs, ToolContext, ToolEnv, ToolResult, ToolSpec


class ReadResultArgs(ToolArgs):
    result_id: str = Field(
        min_length=1, description='The id from the stashed-output placeholder, e.g. "res_1a2b…".'
    )
    path: str | None = Field(
        None, description="JSONPath of the part to return, e.g. $.items[3] or $..login (JSON only)."
    )
    lines: str | None = Field(
        None, description="Line range such as '120-180' or '500-' (JSON: of the pretty view)."
    )
    page: int | None = Field(
        None,
        ge=1,
        description="Page number; pages are cut by token cap. With `path`, pages through the "
        "matches.",
    )


class ExtractArgs(ToolArgs):
    result_id: str = Field(min_length=1, description="The id from the stashed-output placeholder.")
    query: str = Field(
        min_length=1,
        description="What to find. Name the exact ids/fields ('state and title of issue 1347'); "
        "a JSONPath ($.items[?(@.state=='open')].number) or /regex/ also works.",
    )


READ_DESCRIPTION = (
    "Read an exact slice of a stashed tool output (one that was too large for the context and "
    "was replaced by a placeholder with a result_id). Give ONE of: `path` (JSONPath into a JSON "
    "result), `lines` ('120-180'), or `page` (1, 2, …); with none, returns page 1. `page` also "
    "goes with `path` to page through a long match. The reply is capped in tokens; a line too "
    "long for the cap is split, and the reply says how to read what remains."
)
EXTRACT_DESCRIPTION = (
    "Find the facts you need in a stashed tool output without loading all of it. Returns "
    "verbatim fragments, each labelled with its JSON path or line range. Count, list and "
    "filter questions on JSON ('how many items have state open?') get an exact answer with "
    "the JSONPath that gives it; other questions rank whole records by their keys and values; "
    "JSONPath and /regex/ queries are exact."
)


def _read(env: ToolEnv, args: ReadResultArgs, ctx: ToolContext) -> ToolResult:
    text = env.host.guard(ctx.thread_id or "").read(
        args.result_id, path=args.path, lines=args.lines, page=args.page
    )
    return ToolResult(content=text)


def _extract(env: ToolEnv, args: ExtractArgs, ctx: ToolContext) -> ToolResult:
    guard = env.host.guard(ctx.thread_id or "")
    return ToolResult(content=guard.extract(args.result_id, args.query))


TOOLS = (
    ToolSpec("read_result", READ_DESCRIPTION, ReadResultArgs, _read),
    ToolSpec("extract_from_result", EXTRACT_DESCRIPTION, ExtractArgs, _extract),
)
"""The stash retrieval tools."""
