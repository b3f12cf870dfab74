"""The one event shape. Outbox rows, SSE frames and tests all use it; each type has one
payload:

- ``todo_state``: a whole board (:func:`taskloom.domain.board.snapshot`). The outbox stores
  none; a stream's opening sends one per board, built from the stored board;
- ``todo_change``: one change of a board (:func:`taskloom.domain.board.change_event`): the
  cards it made or changed and the ids it removed, with the board's new ``version``. Applied
  in version order to the board at ``version - 1`` it gives the board at ``version``; a
  reader that finds a version missing reads the board whole again. It is what a board change
  stores, so its size follows the change, not the board;
- ``goal_state``: a whole goal; ``task_state``: a whole queue task. A reader that missed
  some needs only the latest one per subject.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

TODO_STATE: Final = "todo_state"
TODO_CHANGE: Final = "todo_change"
GOAL_STATE: Final = "goal_state"
TASK_STATE: Final = "task_state"
EVENT_TYPES: Final = (TODO_STATE, TODO_CHANGE, GOAL_STATE, TASK_STATE)


@dataclass(frozen=True, slots=True)
class Event:
    """One outbox event: what changed (``data``, as its type says), with its id once stored."""

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
