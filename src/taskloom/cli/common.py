"""Options and output helpers shared by every CLI command (defined once, used everywhere)."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console

from taskloom.client import Taskloom, connect

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

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


def print_text(text: str) -> None:
    """Print model/user text verbatim: no rich markup is interpreted inside it."""
    out.print(text, markup=False)
