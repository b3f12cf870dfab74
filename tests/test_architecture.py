"""The house rules of ARCHITECTURE.md and STYLE.md, checked rather than hoped for."""

from __future__ import annotations

import ast
import inspect
import re
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import taskloom

PACKAGE = Path(taskloom.__file__).parent
FORBIDDEN_IN_DOMAIN = {
    "sqlite3",
    "psycopg",
    "asyncio",
    "starlette",
    "time",
    "os",
    "httpx",
    "random",
    "uuid",
}


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_domain_is_pure() -> None:
    for path in (PACKAGE / "domain").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                if isinstance(node, ast.Attribute) and node.attr in {"now", "utcnow", "today"}:
                    raise AssertionError(f"{path.name} reads the clock")
                continue
            for name in names:
                root = name.split(".")[0]
                assert root not in FORBIDDEN_IN_DOMAIN, f"{path.name} imports {name}"
                if root == "taskloom":
                    assert name.startswith("taskloom.domain"), f"{path.name} imports {name}"


def test_drivers_only_inside_store() -> None:
    for path in modules():
        if "store" in path.relative_to(PACKAGE).parts:
            continue
        text = path.read_text()
        assert "import sqlite3" not in text and "import psycopg" not in text, path


def module_name(path: Path) -> str:
    """``taskloom.store.base`` for ``store/base.py``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


ENTRY_POINT = re.compile(r"(taskloom(?:\.\w+)+):\w+")


def imported(path: Path, known: set[str]) -> set[str]:
    """The package's modules ``path`` imports, wherever the import is: at the top, under
    ``TYPE_CHECKING``, inside a function, or named as ``module:attribute`` for
    ``importlib`` to load. ``from a.b import c`` imports ``a.b.c`` when that
    is a module, else ``a.b``; a relative import is resolved from ``path``'s package."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    found.add(f"{base}.{alias.name}")
                elif base in known:
                    found.add(base)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = ENTRY_POINT.fullmatch(node.value)
            if named and named[1] in known:
                found.add(named[1])
    found.discard(here)
    return found


def import_graph() -> dict[str, set[str]]:
    names = {module_name(p): p for p in modules()}
    known = set(names)
    return {name: imported(path, known) for name, path in names.items()}


def knots(graph: dict[str, set[str]]) -> list[set[str]]:
    """The groups of modules that reach one another through imports (Tarjan's strongly
    connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each knot (:func:`knots`), as the path ``[a, b, …, a]``."""
    return [_cycle_in(graph, group) for group in knots(graph)]


def _cycle_in(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """The shortest way from the group's first module back to itself, inside the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & group):
                if nxt == start:
                    return [*paths[node], start]
                if nxt not in paths:
                    paths[nxt] = [*paths[node], nxt]
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no cycle in {sorted(group)}")


def test_the_import_graph_finds_what_it_should() -> None:
    graph = import_graph()
    # at the top, as `from taskloom.domain import board as ops`: the submodule
    assert "taskloom.domain.board" in graph["taskloom.boards"]
    assert "taskloom.store.base" in graph["taskloom._runtime"]  # under TYPE_CHECKING
    assert "taskloom.tools.board" in graph["taskloom.cli.demo"]  # inside a function
    assert "taskloom.cli.board" in graph["taskloom.cli"]  # "taskloom.cli.board:app"
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_import_cycles() -> None:
    """No module imports, however indirectly, one that imports it: not at the top, not under
    ``TYPE_CHECKING``, not inside a function. Layers go one way (see ARCHITECTURE.md)."""
    graph = import_graph()
    found = [
        " -> ".join(_cycle_in(graph, knot)) + f"  (modules in this knot: {', '.join(sorted(knot))})"
        for knot in knots(graph)
    ]
    assert not found, "import cycles:\n" + "\n".join(found)


def room(module: str) -> str:
    """The room a module is in: its subpackage of ``taskloom``, or itself at the top."""
    return ".".join(module.split(".")[:2])


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``graph`` with each module's imports gathered by room, a room's own left out."""
    rooms: dict[str, set[str]] = {room(name): set() for name in graph}
    for name, targets in graph.items():
        rooms[room(name)] |= {room(t) for t in targets} - {room(name)}
    return rooms


def test_the_room_graph_gathers_modules_by_room() -> None:
    graph = {"taskloom.a.x": {"taskloom.b.y", "taskloom.a.z"}, "taskloom.b.y": {"taskloom.c"}}
    assert room_graph(graph) == {"taskloom.a": {"taskloom.b"}, "taskloom.b": {"taskloom.c"}}
    rooms = room_graph({**graph, "taskloom.c": {"taskloom.a.z"}})
    assert knots(rooms) == [{"taskloom.a", "taskloom.b", "taskloom.c"}]


def test_no_room_cycles() -> None:
    """No room (a subpackage, or a module at the top) imports one that imports it back,
    even when no single module does: the folder tree is the layering."""
    rooms = room_graph(import_graph())
    found = [" -> ".join(_cycle_in(rooms, knot)) for knot in knots(rooms)]
    assert not found, "rooms that import each other:\n" + "\n".join(found)


SQL = re.compile(
    r"\bSELECT\b.*?\bFROM\b"
    r"|\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b"
    r"|\bUPDATE\s+\w+\s+SET\b"
    r"|\bDELETE\s+FROM\b"
    r"|\bCREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX)\b"
    r"|\bFROM\s+\w+\s+WHERE\b"
    r"|\bWHERE\s+\w+(?:\.\w+)?\s*(?:[=<>!]|IN\b|IS\b|LIKE\b)"
    r"|^\s*(?:SELECT|INSERT|UPDATE|DELETE)\s",
    re.DOTALL,
)
"""A statement's shape, or a fragment's (``WHERE id = ?``, a literal that starts a
statement), in capitals as the code writes SQL: prose ("select one from the list") never
matches."""


def _strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every string literal in ``tree`` but documentation (a statement that is only a
    string: docstrings, attribute docstrings); an f-string as its text with ``{}`` for each
    value."""
    docs = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant | ast.JoinedStr)
    }
    inner = {
        id(part)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for part in node.values
    }
    for node in ast.walk(tree):
        if id(node) in docs or id(node) in inner:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(
                str(part.value) if isinstance(part, ast.Constant) else "{}" for part in node.values
            )
            yield node.lineno, text


def sql_outside_store() -> list[str]:
    found = []
    for path in modules():
        if path.relative_to(PACKAGE).parts[0] == "store":
            continue
        for line, text in _strings(ast.parse(path.read_text())):
            if SQL.search(text):
                shown = " ".join(text.split())[:60]
                found.append(f"{path.relative_to(PACKAGE)}:{line}: {shown}")
    return found


def test_the_sql_check_tells_statements_from_prose() -> None:
    code = """
def f():
    \"\"\"Runs one UPDATE tasks SET status statement.\"\"\"
    a = "select one from the list, then update the board set by the host"
    b = f"SELECT id FROM tasks WHERE id = {x}"
    c = "INSERT INTO tasks (id) VALUES (?)"
    d = "DELETE FROM events WHERE id <= ?"
    e = "CREATE UNIQUE INDEX IF NOT EXISTS i ON t (a)"
    g = f"{cols} FROM documents WHERE kind = ?"
    h = f"{change} last_error = ? WHERE id = ? AND status = 'in_progress'"
    i = f"SELECT id {READY}"
    j = "Where it is: SELECT the thread, then UPDATE it in the panel"
"""
    hits = [text for _, text in _strings(ast.parse(code)) if SQL.search(text)]
    assert [h.split()[:2] for h in hits] == [
        ["SELECT", "id"],
        ["INSERT", "INTO"],
        ["DELETE", "FROM"],
        ["CREATE", "UNIQUE"],
        ["{}", "FROM"],
        ["{}", "last_error"],
        ["SELECT", "id"],
    ]


def test_sql_only_inside_store() -> None:
    """Every SQL statement lives in ``store/``: the rest of the package asks the store."""
    found = sql_outside_store()
    assert not found, "SQL outside store/:\n" + "\n".join(found)


def test_few_modules_at_the_top() -> None:
    """The top of the package shows its rooms; a new module belongs in one of them."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 8, top


def test_modules_are_small() -> None:
    """No module over 600 lines, and half of them at most 200."""
    sizes = {p.relative_to(PACKAGE): len(p.read_text().splitlines()) for p in modules()}
    huge = sorted(f"{path} ({n})" for path, n in sizes.items() if n > 600)
    assert not huge, "modules over 600 lines: " + ", ".join(huge)
    assert statistics.median(sizes.values()) <= 200


def test_every_public_error_is_a_taskloom_error() -> None:
    errors = [
        obj
        for name, obj in vars(taskloom).items()
        if inspect.isclass(obj) and issubclass(obj, BaseException)
    ]
    assert len(errors) >= 8
    for err in errors:
        assert issubclass(err, taskloom.TaskloomError)
        assert isinstance(err.code, str) and 400 <= err.http_status < 600


def test_only_the_errors_module_defines_exceptions() -> None:
    for path in modules():
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                assert not bases & {"Exception", "TaskloomError", "BaseException"}, (
                    f"{path.name}:{node.name}"
                )


def test_the_core_import_and_the_cli_start_light() -> None:
    """A prompt hook starts a process on every prompt: ``import taskloom`` and the CLI leave
    pydantic (the tools), asyncio (the async API, the server) and xml.sax to the commands
    that use them. Importing them up front was half of the CLI's start (0.63 s of 0.35 s
    without, on the 2-core CI machine)."""
    heavy = ("pydantic", "asyncio", "xml.sax", "starlette", "psycopg", "mcp")
    probe = f"import sys, taskloom, taskloom.cli; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    lazy = "import taskloom; print(taskloom.ToolContext.__module__)"
    out = subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "taskloom.tools.spec"


HOOK_RUN = """
import sys
import taskloom
from taskloom.cli import main
with taskloom.connect(sys.argv[1]) as tl:
    tl.queue.add("Review PR 12")
code = main(["hook", "prompt", "--agent", "a", "--db", sys.argv[1]])
code += main(["hook", "session-start", "--agent", "a", "--db", sys.argv[1]])
print(code, [m for m in sys.argv[2:] if m in sys.modules])
"""


def test_a_prompt_hook_imports_only_what_it_runs(tmp_path: Path) -> None:
    """A prompt hook starts a process on every prompt: it imported every command's code
    (the boards, goals, the worker, migrate-db's copy, the stash) through ``import
    taskloom``, the client and the CLI's command modules, and Typer built every command of
    the CLI to run one. They are imported by the commands that use them. pydantic stays out
    too: typer 0.29 imports it to parse any command line, which pyproject.toml's cap on
    typer keeps out. So does rich (a fifth of a hook's start): output into a pipe never
    needs it, and the consoles that print to a terminal make theirs on first use."""
    heavy = (
        "pydantic",
        "rich",
        "psycopg",
        "psycopg_pool",
        "starlette",
        "mcp",
        "asyncio",
        "tiktoken",
        "taskloom.guard",
        "taskloom.tools",
        "taskloom.boards",
        "taskloom.domain.board",
        "taskloom.goals",
        "taskloom.domain.goals",
        "taskloom.queue.worker",
        "taskloom.store.copy",
        "taskloom.store.stash",
        "taskloom.cli.board",
        "taskloom.cli.goal",
        "taskloom.cli.init",
        "taskloom.cli.serve",
        "taskloom.cli.tasks",
    )
    url = f"sqlite:///{tmp_path / 'q.db'}"
    done = subprocess.run(
        [sys.executable, "-c", HOOK_RUN, url, *heavy], capture_output=True, text=True, check=True
    )
    assert "Review PR 12" in done.stdout  # the block was shown, its cursor written
    assert done.stdout.splitlines()[-1] == "0 []"
