"""The one event shape. Outbox rows, SSE frames, ``taskloom watch`` and tests all use it.

An event carries a *full snapshot* of the thing that changed (a board, a goal, a queue task),
never a diff: a consumer that missed events only needs the latest one per subject.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

TODO_STATE: Final = "todo_state"
GOAL_STATE: Final = "goal_state"
TASK_STATE: Final = "task_state"
EVENT_TYPES: Final = (TODO_STATE, GOAL_STATE, TASK_STATE)


@dataclass(frozen=True, slots=True)
class Event:
    """One outbox event: a full snapshot (``data``) of what changed, with its id once stored."""

    type: str
    thread_id: str | None
    data: dict[str, Any]
    id: int | None = None
    created_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "thread_id": self.thread_id,
            "created_at": self.created_at,
            "data": self.data,
        }
