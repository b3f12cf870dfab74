"""Tool profiles: named sets of tools, so a model is handed only the tools its job needs.

A profile is a row of :data:`PROFILES`: the tool names it lists, in the order they are shown.
A name the registry does not hold is left out, so a profile may list tools that are added
later. A choice of tools (``--tools``, ``?tools=``, ``profile=``) is a profile's name, or a
comma-separated list of profile and tool names: their union, in registry order. ``all`` is
every tool a model may be given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from taskloom.domain.errors import InvalidInput
from taskloom.tools.spec import ToolSpec

ALL = "all"
DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class Profile:
    """A named set of tools and the agent it fits (said in errors and docs)."""

    tools: tuple[str, ...]
    fits: str


_GOAL = ("goal_get", "goal_set", "goal_complete", "goal_block")
_WORK = ("task_next", "task_done", "task_fail")
_STASH = ("read_result", "extract_from_result")
_DELEGATE = ("task_delegate", "task_wait")

PROFILES: dict[str, Profile] = {
    DEFAULT: Profile(
        ("todo", *_GOAL, *_WORK, *_STASH),  # the host renews leases: task_extend is for workers
        "a general agent: one board tool, its goal, queue work, stashed outputs",
    ),
    "planner": Profile(
        ("todo", *_GOAL, "goal_wait", *_DELEGATE),  # goal_wait: it supervises a goal's run
        "an agent that plans on the board and hands work to the queue",
    ),
    "worker": Profile((*_WORK, "task_extend", *_STASH), "an agent that takes work from the queue"),
    "claude-code": Profile(
        ("TaskCreate", "TaskUpdate", "TaskGet", "TaskList", *_GOAL),
        "Claude Code: the Task-shaped board tools its model knows, and the goal",
    ),
    ALL: Profile((), "every tool (todo_write and todo_list included)"),
}
"""Every profile by name. ``all`` lists nothing: it stands for every tool."""


def split(choice: str | Sequence[str] | None) -> list[str]:
    """The names in a choice: ``"planner,task_next"``, ``["planner", "task_next"]``, or
    ``None`` for the default profile. Blank items are skipped; an empty choice is refused."""
    if choice is None:
        return [DEFAULT]
    if not isinstance(choice, Iterable):
        raise InvalidInput("a choice of tools is text: profile and tool names")
    items = choice.split(",") if isinstance(choice, str) else list(choice)
    if not all(isinstance(item, str) for item in items):
        raise InvalidInput("a choice of tools is text: profile and tool names")
    names = [item.strip() for item in items if item.strip()]
    if not names:
        raise InvalidInput(f"no tools chosen: {valid_choices(())}")
    return names


def select(specs: Sequence[ToolSpec], choice: str | Sequence[str] | None) -> list[ToolSpec]:
    """The tools of ``specs`` a choice names, in their order. A profile takes those of its
    tools ``specs`` has; a tool name must be one of ``specs``. Raises :class:`InvalidInput`
    naming the valid profiles and tools for any other name."""
    known = {s.name for s in specs}
    wanted: set[str] = set()
    unknown = []
    for name in split(choice):
        profile = PROFILES.get(name)
        if profile is not None:
            wanted.update(known if name == ALL else profile.tools)
        elif name in known:
            wanted.add(name)
        else:
            unknown.append(name)
    if unknown:
        listed = ", ".join(repr(n) for n in unknown)
        raise InvalidInput(
            f"unknown tool profile or tool {listed}: {valid_choices(s.name for s in specs)}"
        )
    return [s for s in specs if s.name in wanted]


def valid_choices(names: Iterable[str]) -> str:
    """What a choice may name, for an error: the profiles, then the tools."""
    tools = ", ".join(names)
    text = f"choose a profile ({', '.join(PROFILES)})"
    return f"{text} or tools ({tools}), comma-separated" if tools else text
