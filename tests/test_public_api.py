"""The public surface: what ``taskloom``, ``taskloom.errors`` and ``taskloom.tools`` export is
sorted, resolves, carries its own docstring, and is named in the docs."""

from __future__ import annotations

import ast
import functools
import inspect
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import taskloom
import taskloom.errors
import taskloom.tools
from taskloom.domain import errors as domain_errors

ROOT = Path(__file__).resolve().parent.parent
EXPORTING = [taskloom, taskloom.errors, taskloom.tools]


def _isort_key(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps ``__all__`` in: CONSTANTS, then Classes, then the rest."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


@pytest.mark.parametrize("module", EXPORTING, ids=lambda m: m.__name__)
def test_all_is_sorted_without_repeats_and_every_name_resolves(module: ModuleType) -> None:
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_isort_key)
    assert len(set(exported)) == len(exported)
    for name in exported:
        assert getattr(module, name, None) is not None, f"{module.__name__}.{name}"


@functools.cache
def _docstrings(path: str) -> dict[str, str | None]:
    """The docstring of every class and function defined in the file at ``path``."""
    tree = ast.parse(Path(path).read_text())
    defined = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {n.name: ast.get_docstring(n) for n in ast.walk(tree) if isinstance(n, defined)}


@pytest.mark.parametrize("module", EXPORTING, ids=lambda m: m.__name__)
def test_every_exported_class_and_function_has_its_own_docstring(module: ModuleType) -> None:
    """Read from the source, not ``__doc__``: a dataclass makes one up from its fields, and a
    subclass would show its base's."""
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        source = inspect.getsourcefile(obj)
        assert source is not None, name
        if not _docstrings(source).get(obj.__name__):
            missing.append(name)
    assert missing == []


def test_taskloom_errors_exports_every_public_error() -> None:
    public = {
        name
        for name, obj in vars(domain_errors).items()
        if inspect.isclass(obj)
        and issubclass(obj, taskloom.errors.TaskloomError)
        and obj.__module__ == domain_errors.__name__
        and not name.startswith("_")
    }
    assert set(taskloom.errors.__all__) == public
    for name in taskloom.__all__:  # the errors on ``taskloom`` itself are the same classes
        obj = getattr(taskloom, name)
        if inspect.isclass(obj) and issubclass(obj, Exception):
            assert getattr(taskloom.errors, name) is obj


def _docs() -> str:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return "\n".join(page.read_text() for page in pages)


@pytest.mark.parametrize("module", [taskloom, taskloom.errors], ids=lambda m: m.__name__)
def test_every_exported_name_is_named_in_the_docs(module: ModuleType) -> None:
    """Named as code (in backticks), alone or with its module: ``Task`` in prose is not it."""
    docs = _docs()
    unnamed = [
        name
        for name in module.__all__
        if not re.search(rf"`(?:{re.escape(module.__name__)}\.)?{re.escape(name)}\b[^`]*`", docs)
    ]
    assert unnamed == []


def test_dir_lists_the_names_imported_on_first_use() -> None:
    """The package imports most of its names on first use; ``dir()`` (and so a REPL's
    completion) lists them before that, in a process that has not used them yet."""
    code = "import taskloom; print(' '.join(dir(taskloom)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert set(taskloom.__all__) <= set(out)
