"""The kinds of the documents the store keeps, one per thread each (keyed by thread id)."""

from __future__ import annotations

BOARD_KIND = "board"
"""The kind of the stored document holding a thread's board."""
GOAL_KIND = "goal"
"""The kind of the stored document holding a thread's goal."""
