"""``taskloom tool …``: call a model-facing tool by hand, or print the tool schemas."""

from __future__ import annotations

from typing import Annotated

import typer

from taskloom.cli.common import DbOption, open_db, print_json
from taskloom.domain.common import parse_json_object
from taskloom.domain.errors import InvalidInput

app = typer.Typer(
    help="Call model-facing tools and print their schemas.\n\n"
    "Example: taskloom tool schemas --format anthropic",
    no_args_is_help=True,
)

ToolsOption = Annotated[
    str | None,
    typer.Option(
        "--tools",
        help="The tools a model gets: a profile (default, planner, worker, claude-code, all)"
        " or a comma-separated list of profiles and tool names. Default: the default profile.",
    ),
]


@app.command()
def call(
    name: Annotated[str, typer.Argument(help="Tool name, e.g. todo.")],
    thread: Annotated[
        str | None,
        typer.Option("--thread", help="Thread the call is bound to (board, goal, stash tools)."),
    ] = None,
    args: Annotated[str, typer.Option("--args", help="Tool arguments as a JSON object.")] = "{}",
    agent: Annotated[str | None, typer.Option("--agent", help="Calling agent id.")] = None,
    include_host: Annotated[
        bool,
        typer.Option(
            "--include-host",
            help="Also run host-only tools (goal_pause, goal_resume, goal_clear,"
            " goal_set_budget), as the host.",
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Dispatch one tool call and print the ToolResult as JSON (exit 1 if it is an error).

    Example: taskloom tool call todo --thread t1 --args '{"op": "add", "content": "Ship it"}'

    Example: taskloom tool call task_next --agent coder-1
    """
    from taskloom.tools.registry import ToolContext

    parsed = parse_json_object(args, "--args")
    tools = open_db(db).tools
    spec = tools.registry.get(name)
    if spec is not None and spec.host_only and not include_host:
        # A model is told such a tool does not exist; the person here is the host.
        raise InvalidInput(f"{name} is a host-only tool: add --include-host to call it as the host")
    context = ToolContext(thread_id=thread, agent_id=agent)
    result = tools.dispatch(name, parsed, context, allow_host=include_host)
    print_json(result.to_dict())
    if result.is_error:
        raise typer.Exit(1)


@app.command()
def schemas(
    format: Annotated[
        str, typer.Option("--format", help="openai | openai-responses | anthropic | neutral")
    ] = "openai",
    include_host: Annotated[
        bool, typer.Option("--include-host", help="Also let --tools name host-only tools.")
    ] = False,
    tools: ToolsOption = None,
    db: DbOption = None,
) -> None:
    """Print the definitions of a profile's tools in a provider's format.

    Example: taskloom tool schemas --format anthropic --tools planner
    """
    print_json(open_db(db).tools.schemas(format, profile=tools, include_host=include_host))
