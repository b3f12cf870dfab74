"""Goal tools. The model may set, complete or block its goal; pause, resume, clear and budget
changes are host-only (``host_only=True``: not in the default model tool set).

``goal_wait`` is for a supervisor that set a goal and waits while an agent loop drives it:
it looks at the goal (a read, never a write transaction) until the goal is no longer active,
or active with its auto-continuation suppressed (nothing runs it until a user turn or the
host lifts that), or ``wait_s`` runs out, as ``task_wait`` looks at a task. It is ``slow``:
over MCP, a client that speaks the Tasks extension gets an MCP task for it, run by a worker
of the server.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from pydantic import Field

from taskloom.domain.common import UNSET
from taskloom.domain.errors import InvalidInput
from taskloom.domain.goals import (
    MAX_EVIDENCE,
    MAX_OBJECTIVE,
    MAX_REASON,
    GoalStatus,
    framed,
    usage_text,
)
from taskloom.queue.waiting import FIRST_PAUSE_S, LONGEST_PAUSE_S
from taskloom.tools.delegate import MAX_WAIT_S
from taskloom.tools.spec import (
    READS,
    REPLACES,
    SETS,
    Effect,
    ToolArgs,
    ToolContext,
    ToolEnv,
    ToolResult,
    ToolSpec,
)

if TYPE_CHECKING:
    from taskloom.goals.handle import GoalHandle


class NoArgs(ToolArgs):
    pass


class GoalSetArgs(ToolArgs):
    objective: str = Field(
        max_length=MAX_OBJECTIVE,
        description="The objective, in one or two sentences.",
    )
    token_budget: int | None = Field(
        None, gt=0, description="Token budget; an existing one can only be lowered."
    )


class GoalCompleteArgs(ToolArgs):
    evidence: str | None = Field(
        None, max_length=MAX_EVIDENCE, description="How you verified that it is met."
    )


class GoalBlockArgs(ToolArgs):
    reason: str = Field(max_length=MAX_REASON, description="What a person must do or decide.")


class GoalWaitArgs(ToolArgs):
    wait_s: float = Field(
        60.0,
        ge=0,
        le=MAX_WAIT_S,
        allow_inf_nan=False,
        description="Seconds to wait for the goal to end.",
    )


class BudgetArgs(ToolArgs):
    # A budget not given is kept and null removes it; a call giving neither is refused, so
    # an empty call never removes the spending limit a host sets.
    token_budget: int | None = Field(
        None, gt=0, description="New token budget, or null to remove it; omitted: kept."
    )
    time_budget_s: float | None = Field(
        None, gt=0, description="New time budget in seconds, or null to remove it; omitted: kept."
    )


def render_goal(snap: dict[str, Any]) -> ToolResult:
    """The goal as text. Objective and reason are written by users and models, so they appear
    only XML-escaped inside their own elements, as in the prompt blocks, never as bare text."""
    goal = snap["goal"]
    if goal is None:
        return ToolResult(content="This thread has no goal.", data=snap)
    lines = [f"Goal ({goal['status']}; {usage_text(goal)})"]
    lines.append(snap.get("context") or framed("objective", goal["objective"]))
    if goal.get("reason"):
        lines.append(framed("reason", goal["reason"]))
    if goal.get("evidence"):  # what a complete goal was judged done on
        lines.append(framed("evidence", goal["evidence"]))
    return ToolResult(content="\n".join(lines), data=snap)


def _thread(env: ToolEnv, ctx: ToolContext) -> GoalHandle:
    return env.host.goal(ctx.thread_id or "")


def _get(env: ToolEnv, args: NoArgs, ctx: ToolContext) -> ToolResult:
    return render_goal(_thread(env, ctx).get())


def _set(env: ToolEnv, args: GoalSetArgs, ctx: ToolContext) -> ToolResult:
    return render_goal(
        _thread(env, ctx).set(args.objective, token_budget=args.token_budget, host=False)
    )


def _complete(env: ToolEnv, args: GoalCompleteArgs, ctx: ToolContext) -> ToolResult:
    return render_goal(_thread(env, ctx).complete(args.evidence, host=False))


def _block(env: ToolEnv, args: GoalBlockArgs, ctx: ToolContext) -> ToolResult:
    return render_goal(_thread(env, ctx).block(args.reason, host=False))


def _moving(snap: dict[str, Any]) -> bool:
    """Whether the goal can still progress on its own: active and not suppressed."""
    goal = snap["goal"]
    return (
        goal is not None
        and goal["status"] == GoalStatus.ACTIVE.value
        and not goal.get("continuation_suppressed")
    )


def _wait(env: ToolEnv, args: GoalWaitArgs, ctx: ToolContext) -> ToolResult:
    """The goal once it is no longer active (complete, blocked, paused, out of budget or
    cleared) or its auto-continuation is suppressed, or as it is when ``wait_s`` runs out or
    the caller gives up (``cancelled``). Looks every 50 ms at first, then less often, at most
    a second apart."""
    handle = _thread(env, ctx)
    deadline = time.monotonic() + args.wait_s
    pause = FIRST_PAUSE_S
    while _moving(snap := handle.get()):
        left = deadline - time.monotonic()
        if left <= 0 or (ctx.cancelled is not None and ctx.cancelled()):
            return _waited(snap, ended=False, wait_s=args.wait_s)
        time.sleep(min(pause, left))
        pause = min(2 * pause, LONGEST_PAUSE_S)
    return _waited(snap, ended=True, wait_s=args.wait_s)


def _waited(snap: dict[str, Any], *, ended: bool, wait_s: float) -> ToolResult:
    """``goal_get``'s answer, after a line that says whether the goal ended or stopped
    (``data`` has ``ended``, true for both)."""
    goal = snap["goal"]
    if not ended:
        said = f"The goal is still active after {wait_s:g} s: call goal_wait again to wait on."
    elif goal is None:
        said = "The goal has ended: this thread has no goal (it was cleared, or never set)."
    elif goal["status"] == GoalStatus.ACTIVE.value:
        said = (
            "The goal has stopped: it is active, but its auto-continuation is suppressed"
            " (its turns made no progress); nothing continues it until a user turn or"
            " goal_resume lifts that."
        )
    else:
        said = f"The goal has ended: it is {goal['status']}."
    shown = render_goal(snap)
    return ToolResult(content=f"{said}\n{shown.content}", data={**snap, "ended": ended})


def _always(env: ToolEnv, ctx: ToolContext) -> bool:
    return True


def _pause(env: ToolEnv, args: NoArgs, ctx: ToolContext) -> ToolResult:
    return render_goal(_thread(env, ctx).pause())


def _resume(env: ToolEnv, args: NoArgs, ctx: ToolContext) -> ToolResult:
    return render_goal(_thread(env, ctx).resume())


def _clear(env: ToolEnv, args: NoArgs, ctx: ToolContext) -> ToolResult:
    return render_goal(_thread(env, ctx).clear())


def _budget(env: ToolEnv, args: BudgetArgs, ctx: ToolContext) -> ToolResult:
    given = args.model_fields_set
    if not given & {"token_budget", "time_budget_s"}:
        raise InvalidInput("give token_budget or time_budget_s (null removes that budget)")
    return render_goal(
        _thread(env, ctx).set_budget(
            args.token_budget if "token_budget" in given else UNSET,
            time_budget_s=args.time_budget_s if "time_budget_s" in given else UNSET,
        )
    )


TOOLS = (
    ToolSpec(
        "goal_get",
        "Read this thread's goal: objective, status and remaining budget.",
        NoArgs,
        _get,
        effect=READS,
    ),
    ToolSpec(
        "goal_set",
        "Set or replace this thread's goal: one durable objective, for an outcome the user"
        " wants over many turns.",
        GoalSetArgs,
        _set,
        effect=Effect(destructive=True),
    ),
    ToolSpec(
        "goal_complete",
        "Mark this thread's goal complete, only once you have verified the objective is met.",
        GoalCompleteArgs,
        _complete,
        effect=SETS,
    ),
    ToolSpec(
        "goal_block",
        "Mark this thread's goal blocked when it cannot go on without a person; turns stop"
        " until someone resumes it.",
        GoalBlockArgs,
        _block,
        effect=SETS,
    ),
    ToolSpec(
        "goal_wait",
        "Wait until this thread's goal is no longer active (complete, blocked, paused, out of"
        " budget or cleared) or stops with its auto-continuation suppressed, while another"
        " agent works on it, and read it.",
        GoalWaitArgs,
        _wait,
        slow=_always,
        rerun=True,
        effect=READS,
    ),
    ToolSpec(
        "goal_pause",
        "Host only: pause the thread's goal (stops auto-continuation).",
        NoArgs,
        _pause,
        host_only=True,
        effect=SETS,
    ),
    ToolSpec(
        "goal_resume",
        "Host only: resume a paused or blocked goal (not one out of budget: raise its budget).",
        NoArgs,
        _resume,
        host_only=True,
        effect=SETS,
    ),
    ToolSpec(
        "goal_clear",
        "Host only: remove the thread's goal and its usage counters.",
        NoArgs,
        _clear,
        host_only=True,
        effect=REPLACES,
    ),
    ToolSpec(
        "goal_set_budget",
        "Host only: set, raise or remove the goal's token or time budget.",
        BudgetArgs,
        _budget,
        host_only=True,
        effect=REPLACES,
    ),
)
"""The goal tools; the host-only ones are left out of a model's tool set."""
