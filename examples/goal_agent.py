"""A goal-driven agent in ~100 lines: any OpenAI-compatible endpoint, taskloom's tools.

    OPENAI_API_KEY=sk-... .venv/bin/python examples/goal_agent.py \\
        "Plan and ship the release notes" --thread release --model gpt-4.1-mini --budget 50000

    # a local server (Ollama, vLLM, llama.cpp…) works the same way:
    .venv/bin/python examples/goal_agent.py "…" --base-url http://127.0.0.1:11434/v1 --model qwen3

The goal, its token budget and the todo board live in taskloom (watch them in `taskloom
serve`); `run_goal_loop` decides whether another turn is allowed (budget left, not paused,
progress being made) and the model ends the loop by calling `goal_complete`. The thread is
bound here, in the ToolContext; the model never names it.

Running it again on a thread continues the goal there: a goal already complete is left as it
is (nothing is asked of the model), and an unfinished one goes on from its board, which the
model is shown. The goal is set only once the endpoint has answered the first call, so a run
whose endpoint is down, or refuses the key, leaves the thread as it found it. Ctrl-C stops
it at once (exit status 130); a run after it goes on from the board.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import taskloom
from taskloom.domain.errors import InvalidInput, ProviderError, TaskloomError
from taskloom.domain.goals import Goal, GoalStatus, continuation_prompt
from taskloom.goals.continuation import (
    StopReason,
    TurnFailed,
    TurnOutcome,
    note_user_turn,
    run_goal_loop,
)
from taskloom.llm.base import mask_url
from taskloom.llm.openai import OpenAIChat
from taskloom.tools.adapters import run_tool_calls
from taskloom.tools.board import render_board

SYSTEM = (
    "You work toward the goal you are given. Keep a todo board with the `todo` tool: one "
    "card per step, exactly one in progress, mark each done as it finishes. When the whole "
    "objective is met, call `goal_complete` with your evidence."
)


DEFAULT_BUDGET = 50_000
"""The token budget of a goal this example sets on a thread that has none."""


def whole(text: str) -> int:
    """A count of at least 1, refused by argparse (with the flag's name) otherwise."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return int(text)


EPILOG = """examples:
  OPENAI_API_KEY=sk-... %(prog)s "Plan and ship the release notes" --thread release
  %(prog)s "..." --base-url http://127.0.0.1:11434/v1 --model qwen3   # a local server

environment:
  OPENAI_API_KEY   the endpoint's key (a local server may need none)
  OPENAI_MODEL     the default of --model
  OPENAI_BASE_URL  the default of --base-url
  TASKLOOM_URL     the default of --db

Running it again on a thread goes on with its goal from the board; a goal already
complete is left as it is. Watch it live in `taskloom serve`.

exit status:
  0    the goal is complete
  1    the loop stopped first (budget spent, --max-turns reached, no progress, paused,
       blocked...), or an error: the endpoint or the database failed, or refused
       the thread id or --tools
  2    a usage error: an unknown flag, or a count below 1
  130  interrupted (Ctrl-C)"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Run a taskloom goal loop with an LLM: the model plans on a todo board,\n"
        "works the plan within a token budget and completes the goal with evidence.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("objective", help="what the agent should achieve (the goal)")
    parser.add_argument(
        "--thread",
        metavar="ID",
        default="goal-agent",
        help="taskloom thread id: the goal and board live there (default: %(default)s)",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        default=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"),
        help="model name sent to the endpoint (default: $OPENAI_MODEL, else gpt-4.1-mini)",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        default=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
        help="OpenAI-compatible API base URL (default: $OPENAI_BASE_URL, else OpenAI's)",
    )
    parser.add_argument(
        "--budget",
        metavar="TOKENS",
        type=whole,
        default=None,
        help="token budget of the goal; the loop stops when it is spent (default:"
        f" {DEFAULT_BUDGET} for a new goal; a rerun keeps the goal's budget, as the panel or"
        " `taskloom goal budget` left it)",
    )
    parser.add_argument(
        "--max-turns",
        metavar="N",
        type=whole,
        default=10,
        help="the most model turns this run takes (default: %(default)s)",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        default=None,
        help="database URL (default: $TASKLOOM_URL, else ./.taskloom/)",
    )
    parser.add_argument(
        "--tools",
        metavar="NAMES",
        default="planner",
        help="the model's tools: a profile or comma-separated tool names (default: %(default)s)",
    )
    return parser.parse_args(argv)


def read_reply(response: Any) -> tuple[dict[str, Any], int | None]:
    """The assistant's message and the tokens the call cost (``None``: not reported); a reply
    in another shape (no choices, a usage that is not a whole count) is a ValueError."""
    try:
        message, usage = response["choices"][0]["message"], response.get("usage") or {}
        tokens = usage.get("total_tokens")
    except (LookupError, TypeError, AttributeError) as exc:
        raise ValueError(f"unexpected reply ({type(exc).__name__}: {exc})") from None
    if tokens is not None and (type(tokens) is not int or tokens < 0):
        raise ValueError(f"unexpected reply (usage.total_tokens is {tokens!r})")
    return message, tokens


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except KeyboardInterrupt:  # the turn in hand is dropped; what the board holds stays
        print("interrupted: run it again to go on with the goal", file=sys.stderr)
        return 130


def run(args: argparse.Namespace) -> int:
    try:  # a bad thread id, or a database that cannot be opened: only read so far
        tl = taskloom.connect(args.db)
        tl.tools.names(profile=args.tools)
        goal, board = tl.goal(args.thread).goal(), tl.board(args.thread).list()
    except TaskloomError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    if (
        goal is not None and goal.status == GoalStatus.COMPLETE and goal.objective == args.objective
    ):  # a re-run: nothing is left to do
        print(f"the goal of thread '{args.thread}' is already complete")
        return show_board(tl, args.thread, 0)
    ctx = taskloom.ToolContext(thread_id=args.thread, agent_id="goal-agent")
    ask = args.objective
    if board["cards"]:  # an earlier run's plan: go on with it, not add it again
        ask += "\n\nThe board already holds this plan; carry on with it:\n" + render_board(board)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": ask},
    ]
    unreported: list[bool] = []

    def call_model() -> tuple[dict[str, Any], int]:
        tools = tl.tools.schemas("openai", profile=args.tools)
        body = {"model": args.model, "messages": messages, "tools": tools}
        message, tokens = read_reply(chat.post_json(f"{chat.base_url}/chat/completions", body))
        if tokens is None and not unreported:
            unreported.append(True)
            print(
                "warning: the endpoint reports no usage; turns are charged 0 tokens",
                file=sys.stderr,
            )
        return message, tokens or 0

    try:  # the first call, before the goal is set: a failure leaves nothing half-made
        # The library's client: the key is checked and kept out of every error, busy answers
        # (429, 503) are retried, and the provider's reason for a refusal is in the error.
        chat = OpenAIChat(args.model, base_url=args.base_url)
        pending = [call_model()]
    except (ProviderError, InvalidInput, ValueError) as exc:
        return endpoint_failed(args.base_url, exc)
    budget = args.budget or (DEFAULT_BUDGET if goal is None else None)  # None: kept
    try:
        snap = tl.goal(args.thread).set(args.objective, token_budget=budget)
        lineage = snap["goal"]["lineage_id"]  # what the first call is charged to
        note_user_turn(tl, args.thread)  # the command line is a user turn: lifts a stop
    except TaskloomError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1

    def turn(goal: Goal) -> TurnOutcome:
        started, tokens = time.monotonic(), 0
        before = tl.board(args.thread).list()["version"]
        if messages[-1]["role"] != "user":  # a continuation: nobody reads what it asks
            messages.append({"role": "user", "content": continuation_prompt(goal)})
        try:
            for _ in range(8):  # model ↔ tools round trips within one turn
                message, used = pending.pop() if pending else call_model()
                tokens += used
                messages.append(message)
                results = run_tool_calls(tl.tools, message, "openai", ctx, profile=args.tools)
                if not results:
                    break
                messages.extend(results)
                now = tl.goal(args.thread).goal()
                if now is None or now.status != goal.status:  # completed, blocked or paused
                    break
        except (ProviderError, InvalidInput, ValueError) as exc:  # down, refused, garbled:
            # what the turn spent before the failure is charged all the same
            raise TurnFailed(tokens, time.monotonic() - started) from exc
        progressed = tl.board(args.thread).list()["version"] != before
        print(f"turn: {tokens} tokens, board v{tl.board(args.thread).list()['version']}")
        return TurnOutcome(tokens, time.monotonic() - started, made_progress=progressed)

    try:
        result = run_goal_loop(tl, args.thread, turn, max_turns=args.max_turns)
        if pending:  # no turn ran (out of budget, another run holds the thread): the first
            # call was made all the same, and what it cost is the goal's
            tl.goal(args.thread).account_usage(lineage, pending.pop()[1])
    except TurnFailed as exc:
        return endpoint_failed(args.base_url, exc)
    except TaskloomError as exc:  # the database, not the model
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(f"stopped: {result.reason} after {result.turns} turn(s)")
    return show_board(tl, args.thread, 0 if result.reason == StopReason.COMPLETE else 1)


def endpoint_failed(base_url: str, exc: Exception) -> int:
    print(f"Error: the model endpoint {mask_url(base_url)} failed: {exc}", file=sys.stderr)
    return 1


def show_board(tl: taskloom.Taskloom, thread: str, code: int) -> int:
    for card in tl.board(thread).list()["cards"]:
        print(f"  [{card['status']}] {card['title']}")
    tl.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
