"""The guard takes a runtime context, never the facade: no module of it imports the client."""

from __future__ import annotations

import ast
from pathlib import Path

import taskloom.guard


def test_no_guard_module_imports_the_client() -> None:
    for path in Path(taskloom.guard.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any(
                n == "taskloom.client" or n.startswith("taskloom.client.") for n in names
            ), path
