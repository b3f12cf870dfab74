"""Numbered SQL migrations, one folder per backend, applied in order on open."""

from __future__ import annotations

from importlib import resources


def load(dialect: str) -> list[tuple[int, str, str]]:
    """``(number, name, sql)`` for every migration file of a backend, in order."""
    folder = resources.files(__name__) / dialect
    out = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            number = int(entry.name.split("_", 1)[0])
            out.append((number, entry.name, entry.read_text(encoding="utf-8")))
    return sorted(out)
