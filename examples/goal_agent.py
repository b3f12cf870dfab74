"""A goal-driven agent in ~100 lines: any OpenAI-compatible endpoint, taskloom's tools.

    OPENAI_API_KEY=sk-... .venv/bin/python examples/goal_agent.py \\
        "Plan and ship the release notes" --thread release --model gpt-4.1-mini --budget 50000

    # a local server (Ollama, vLLM, llama.cpp…) works the same way:
    .venv/bin/python examples/goal_agent.py "…" --base-url http://127.0.0.1:11434/v1 --model qwen3

The goal, its token budget and the todo board live in taskloom (watch them in `taskloom
serve`); `run_goal_loop` decides whether another turn is allowed (budget left, not paused,
progress being made) and the model ends the loop by calling `goal_complete`. The thread is
bound here, in the ToolContext; the model never names it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import httpx

import taskloom
from taskloom.continuation import StopReason, TurnOutcome, note_user_turn, run_goal_loop
from taskloom.domain.errors import InvalidInput, TaskloomError
from taskloom.domain.goals import Goal
from taskloom.tools.adapters import run_tool_calls

SYSTEM = (
    "You work toward the goal you are given. Keep a todo board with the `todo` tool: one "
    "card per step, exactly one in progress, mark each done as it finishes. When the whole "
    "objective is met, call `goal_complete` with your evidence."
)


def whole(text: str) -> int:
    """A count of at least 1, refused by argparse (with the flag's name) otherwise."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return int(text)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Run a taskloom goal loop with an LLM.")
    parser.add_argument("objective", help="what the agent should achieve")
    parser.add_argument("--thread", default="goal-agent", help="taskloom thread id")
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"))
    parser.add_argument(
        "--base-url", default=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    )
    parser.add_argument("--budget", type=whole, default=50_000, help="token budget of the goal")
    parser.add_argument("--max-turns", type=whole, default=10)
    parser.add_argument("--db", default=None, help="taskloom database URL")
    return parser.parse_args(argv)


def read_reply(reply: httpx.Response) -> tuple[dict[str, Any], int]:
    """The assistant's message and the tokens the call cost; a reply in another shape (not
    JSON, no choices, a null usage) is a ValueError that says so."""
    try:
        response = reply.json()
        return response["choices"][0]["message"], int(
            (response.get("usage") or {}).get("total_tokens") or 0
        )
    except (ValueError, LookupError, TypeError, AttributeError) as exc:
        raise ValueError(f"unexpected reply ({type(exc).__name__}: {exc})") from None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:  # a bad thread id or objective, or a database that cannot be opened
        tl = taskloom.connect(args.db)
        tl.goal(args.thread).set(args.objective, token_budget=args.budget)
        note_user_turn(tl, args.thread)  # the command line is a user turn: lifts a stop
    except TaskloomError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    ctx = taskloom.ToolContext(thread_id=args.thread, agent_id="goal-agent")
    key = os.environ.get("OPENAI_API_KEY", "")
    http = httpx.Client(
        base_url=args.base_url,
        headers={"Authorization": f"Bearer {key}"} if key else {},
        timeout=120,
    )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": args.objective},
    ]

    def turn(goal: Goal) -> TurnOutcome:
        started, tokens = time.monotonic(), 0
        before = tl.board(args.thread).list()["version"]
        if messages[-1]["role"] != "user":  # a continuation: remind the model of the goal
            messages.append({"role": "user", "content": tl.goal(args.thread).get()["context"]})
        for _ in range(8):  # model ↔ tools round trips within one turn
            reply = http.post(
                "/chat/completions",
                json={"model": args.model, "messages": messages, "tools": tl.tools.schemas()},
            )
            reply.raise_for_status()
            message, used = read_reply(reply)
            tokens += used
            messages.append(message)
            results = run_tool_calls(tl.tools, message, "openai", ctx)
            if not results:
                break
            messages.extend(results)
            now = tl.goal(args.thread).goal()
            if now is None or now.status != goal.status:  # completed, blocked or paused
                break
        progressed = tl.board(args.thread).list()["version"] != before
        print(f"turn: {tokens} tokens, board v{tl.board(args.thread).list()['version']}")
        return TurnOutcome(tokens, time.monotonic() - started, made_progress=progressed)

    try:
        result = run_goal_loop(tl, args.thread, turn, max_turns=args.max_turns)
    except (httpx.HTTPError, ValueError, InvalidInput) as exc:  # down, refused, or garbled
        print(f"Error: the model endpoint {args.base_url} failed: {exc}", file=sys.stderr)
        return 1
    print(f"stopped: {result.reason} after {result.turns} turn(s)")
    for card in tl.board(args.thread).list()["cards"]:
        print(f"  [{card['status']}] {card['title']}")
    tl.close()
    return 0 if result.reason == StopReason.COMPLETE else 1


if __name__ == "__main__":
    sys.exit(main())
