"""Options and output helpers shared by every CLI command (defined once, used everywhere)."""

from __future__ import annotations

import json
import re
import sys
from typing import Annotated, Any

import typer
from rich.console import Console

from taskloom.client import Taskloom, connect

out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Database URL: sqlite:///path.db or postgresql://… "
        "[default: $TASKLOOM_URL, else sqlite:///./.taskloom/taskloom.db]",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def open_db(db: str | None) -> Taskloom:
    return connect(db)


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


def terminal_safe(text: str) -> str:
    """``text`` with control characters (other than newline and tab) shown as ``\\xNN``:
    text written by agents or other people must not move the cursor, recolour or retitle the
    reader's terminal (ANSI escapes)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def print_text(text: str) -> None:
    """Print model/user text as stored: no rich markup or ``:emoji:`` codes are interpreted
    inside it. On a terminal, control characters are shown, not obeyed
    (:func:`terminal_safe`); into a pipe or a file the text goes exactly as stored (an exact
    slice of a stashed result stays exact)."""
    if out.is_terminal:
        out.print(terminal_safe(text), markup=False)
    else:  # rich would expand tabs and drop carriage returns
        sys.stdout.write(text + "\n")
