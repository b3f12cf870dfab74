"""How an agent starts this taskloom: the program name its MCP and hook commands use."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

PROGRAM_NAMES = ("taskloom", "taskloom.exe")


def program() -> str:
    """How the agent is to start taskloom: ``taskloom`` when that name on its PATH is this
    very program, else this program's absolute path. A virtualenv's ``.venv/bin/taskloom``
    is seldom on PATH, and an agent that finds no ``taskloom`` cannot start its MCP server
    nor any hook ("taskloom: not found"), out of the user's sight."""
    candidates = [Path(sys.argv[0])] if Path(sys.argv[0]).name in PROGRAM_NAMES else []
    candidates.append(Path(sys.executable).parent / "taskloom")  # ``python -m taskloom``
    mine = next((c.resolve() for c in candidates if c.is_file()), None)
    if mine is None:
        return "taskloom"
    found = shutil.which("taskloom")
    return "taskloom" if found and Path(found).resolve() == mine else str(mine)
