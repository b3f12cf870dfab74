"""The README and docs work as written: every ``taskloom …`` command line they show names a
command and options that exist, every Python block imports only names that exist, and the
blocks of the pages a newcomer copies first run on a fresh SQLite database. Their relative
links and anchors resolve, every command is shown somewhere, and the README's layout names
the modules that exist."""

from __future__ import annotations

import ast
import functools
import json
import re
import shlex
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import taskloom
from taskloom.cli import cli
from taskloom.tools import ToolResult, ToolSpec

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
SHELL = {"console", "bash", "sh", ""}


def _id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _blocks(page: Path, language: str) -> list[tuple[int, str]]:
    """The fenced blocks of ``page`` in ``language``, each with the line it starts on."""
    text = page.read_text()
    return [
        (text[: m.start()].count("\n") + 2, m.group(2))
        for m in BLOCK.finditer(text)
        if m.group(1) == language
    ]


def command_lines(page: Path) -> Iterator[tuple[int, str, bool]]:
    """Every ``taskloom …`` command line of ``page``, without the ``taskloom``: the shell
    blocks' (``$ taskloom``, or ``taskloom`` at the start of a line; a trailing ``\\`` joins
    the next line) and the inline code spans'. The flag says it is a shell block's line."""
    text = page.read_text()
    for match in BLOCK.finditer(text):
        if match.group(1) not in SHELL:
            continue
        start = text[: match.start()].count("\n") + 2
        for n, line in enumerate(re.sub(r"\\\n", " ", match.group(2)).splitlines()):
            line = line.strip().removeprefix("$ ")
            if line.startswith("taskloom "):
                yield start + n, line.removeprefix("taskloom "), True
    for match in re.finditer(r"`taskloom ([^`]+)`", text):
        yield text[: match.start()].count("\n") + 1, match.group(1), False


def _words(line: str) -> list[str]:
    """The words of a command line up to a pipe, a redirection or a second command; a
    ``$(…)`` substitution is one word."""
    line = re.sub(r"\"\$\((?:[^()]|\([^()]*\))*\)\"", "X", line)
    try:
        words = shlex.split(line, comments=True)
    except ValueError:  # a quote the ``…`` of a synopsis leaves open
        words = shlex.split(line.split("…")[0], comments=True)
    for i, word in enumerate(words):
        if word in {"|", "&", "&&", "||", ";", "<", ">"}:
            return words[:i]
    return words


@functools.cache
def _root() -> Any:
    return cli()


def _resolve(words: list[str]) -> list[tuple[Any, list[str]]]:
    """The commands ``words`` names (``add|edit`` names two), each with the words after it."""
    found: list[tuple[Any, list[str]]] = []
    todo: list[tuple[Any, list[str]]] = [(_root(), words)]
    while todo:
        cmd, rest = todo.pop()
        if not hasattr(cmd, "commands") or not rest or rest[0].startswith(("-", "…")):
            found.append((cmd, rest))
            continue
        for name in rest[0].split("|"):
            assert name in cmd.commands, f"no command {name!r} under {cmd.name!r}"
            todo.append((cmd.commands[name], rest[1:]))
    return found


def _options(cmd: Any) -> set[str]:
    names = {"--help"}
    for param in cmd.params:
        names.update(param.opts)
        names.update(param.secondary_opts)
    return names


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_every_command_line_names_a_command_and_options_that_exist(page: Path) -> None:
    wrong = []
    for line_no, line, _ in command_lines(page):
        if line.startswith(("COMMAND", "=")):  # `taskloom COMMAND --help`, a TOML key
            continue
        try:
            for cmd, rest in _resolve(_words(line)):
                flags = [w.split("=")[0].strip("[]") for w in rest if w.startswith(("-", "[-"))]
                unknown = [f for f in flags if f.startswith("-") and f not in _options(cmd)]
                if "--" in rest:
                    unknown = [f for f in unknown if rest.index(f) < rest.index("--")]
                assert not unknown, f"no option {', '.join(unknown)} on {cmd.name!r}"
        except AssertionError as exc:
            wrong.append(f"{_id(page)}:{line_no}: taskloom {line}\n    {exc}")
    assert wrong == [], "\n".join(wrong)


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_every_shown_command_parses(page: Path) -> None:
    """A ``$ taskloom …`` line of a shell block, when it is not a synopsis (``[--flag]``,
    ``…``), parses as typed: no extra argument, no option without its value."""
    wrong = []
    for line_no, line, in_block in command_lines(page):
        if not in_block or "[" in line or "…" in line:
            continue
        for cmd, rest in _resolve(_words(line)):
            try:
                cmd.make_context(cmd.name, list(rest))
            except Exception as exc:  # click's usage errors: the line does not parse
                wrong.append(f"{_id(page)}:{line_no}: taskloom {line}\n    {exc}")
    assert wrong == [], "\n".join(wrong)


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_every_python_block_parses_and_imports_names_that_exist(page: Path) -> None:
    """Each block is valid Python; its imports resolve and each ``taskloom.NAME`` it uses is
    exported. Blocks with a placeholder for the host's own code (``...``) are checked too."""
    for line_no, code in _blocks(page, "python"):
        tree = ast.parse(code, f"{_id(page)}:{line_no}")
        imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        exec(compile(ast.Module(imports, []), f"{_id(page)}:{line_no}", "exec"), {})
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "taskloom"
            ):
                assert node.attr in taskloom.__all__, f"{_id(page)}:{line_no}: {node.attr}"


def _run_blocks(page: Path, names: dict[str, Any]) -> None:
    """Run the Python blocks of ``page`` in order, in one namespace that starts as ``names``."""
    for line_no, code in _blocks(page, "python"):
        exec(compile(code, f"{_id(page)}:{line_no}", "exec"), names)


@pytest.fixture
def fresh_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An empty folder to work in, and ``$TASKLOOM_URL`` naming a database in it."""
    url = f"sqlite:///{tmp_path / 'docs.db'}"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TASKLOOM_URL", url)
    return url


def test_the_readmes_python_runs(fresh_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``output`` stands for a tool's result, which the guard's block wraps."""
    names: dict[str, Any] = {"output": '[{"n": 1}]'}
    _run_blocks(ROOT / "README.md", names)
    shown = capsys.readouterr().out
    assert "- [~] Write the failing test" in shown and "reviewed: Review PR 12" in shown
    assert names["result"].is_error is False and names["text"] == '[{"n":1}]'


def test_the_goal_pages_python_runs(fresh_db: str) -> None:
    """With the host's own parts (a turn, a model call) stubbed."""
    with taskloom.connect(fresh_db) as tl:
        names: dict[str, Any] = {
            "tl": tl,
            "run_turn": lambda goal: None,
            "run_model_turn": lambda message: message,
            "user_message": "hello",
        }
        _run_blocks(ROOT / "docs" / "goals.md", names)
    assert names["result"].reason == "no_goal"  # the page's first block cleared the goal
    assert names["items"] == []


def test_the_queue_pages_python_runs(fresh_db: str) -> None:
    """With the host's work stubbed, and a worker for the ``build`` task the page waits on."""
    with taskloom.connect(fresh_db) as tl:
        builder = taskloom.Worker(tl.queue, "builder", lambda task: "built", kinds=["build"])
        thread = threading.Thread(target=builder.run, daemon=True)
        thread.start()
        names: dict[str, Any] = {
            "tl": tl,
            "work_on": lambda task: "done",
            "ci_is_up": lambda: True,
            "run_review": lambda diff: "reviewed",
            "index": lambda task: "indexed",
        }
        try:
            _run_blocks(ROOT / "docs" / "queue.md", names)
        finally:
            builder.stop()
            thread.join(timeout=30)
    assert names["ended"].result == "built"


class _Echo(BaseModel):
    text: str


def test_the_tool_pages_python_runs(fresh_db: str) -> None:
    """With a call the model made, and a host's tool of its own (``my_spec``)."""
    my_spec = ToolSpec("echo", "Say it back.", _Echo, lambda env, args, ctx: ToolResult(args.text))
    with taskloom.connect(fresh_db) as tl:
        names: dict[str, Any] = {
            "tl": tl,
            "name": "todo",
            "arguments": {"op": "add", "content": "Write the failing test"},
            "ctx": taskloom.ToolContext(thread_id="t"),
            "my_spec": my_spec,
        }
        _run_blocks(ROOT / "docs" / "tools.md", names)
        assert names["result"].is_error is False
        assert "echo" in names["tools"].names(profile="all")


def test_the_guard_pages_python_runs(fresh_db: str) -> None:
    """With a tool's output, and one turn's calls and outputs (``results``)."""

    class Call:
        id, name = "call-1", "github_list_issues"

    output = json.dumps([{"number": n, "title": f"issue {n}"} for n in range(5000)])
    names: dict[str, Any] = {"output": output, "results": [(Call(), output)]}
    _run_blocks(ROOT / "docs" / "guard.md", names)
    assert names["text"].startswith("[stashed tool output") and len(names["texts"]) == 1


def _slug(heading: str) -> str:
    """The anchor GitHub makes of a heading: lower case, punctuation other than ``-`` and
    ``_`` dropped, each space a ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@functools.cache
def _anchors(page: Path) -> frozenset[str]:
    """The anchors of ``page``'s headings (a repeated one gets ``-1``, ``-2``…)."""
    seen: dict[str, int] = {}
    found = set()
    for match in re.finditer(r"^#{1,6} (.+)$", BLOCK.sub("", page.read_text()), re.M):
        slug = _slug(match.group(1))
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return frozenset(found)


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    """A link to a file names one that exists, and a ``#anchor`` names a heading of its page."""
    wrong = []
    for match in re.finditer(r"\]\(([^)\s]+)\)", BLOCK.sub("", page.read_text())):
        target = match.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:…
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            wrong.append(f"{_id(page)}: ({target}): no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            wrong.append(f"{_id(page)}: ({target}): no such heading")
    assert wrong == [], "\n".join(wrong)


def _leaf_commands(cmd: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    if not hasattr(cmd, "commands"):
        yield path
        return
    for name, sub in cmd.commands.items():
        if not sub.hidden:
            yield from _leaf_commands(sub, (*path, name))


def test_every_command_is_named_in_the_docs() -> None:
    """Each command of ``taskloom --help``, down to the last word (``board clear``), is shown
    as ``taskloom …`` somewhere (``board approve|reject`` names two)."""
    docs = "\n".join(page.read_text() for page in PAGES)
    unnamed = []
    for path in _leaf_commands(_root()):
        words = " ".join(rf"(?:[\w-]+\|)*{re.escape(w)}(?:\|[\w-]+)*" for w in path)
        if not re.search(rf"taskloom {words}(?![\w-])", docs):
            unnamed.append(" ".join(path))
    assert unnamed == []


def test_the_readme_layout_names_every_module_that_exists() -> None:
    """The layout names each module at the package's top and in ``domain/`` and ``store/``,
    and every ``name.py`` it names is a file of the package (or of examples/, scripts/)."""
    readme = (ROOT / "README.md").read_text()
    layout = readme[readme.index("## Layout") :]
    named = set(re.findall(r"\b([\w*]+\.py)\b", layout))
    src = ROOT / "src" / "taskloom"
    files = {p.name for p in src.rglob("*.py")} | {
        p.name for folder in ("examples", "scripts") for p in (ROOT / folder).glob("*.py")
    }
    assert {n for n in named if "*" not in n} - files == set()
    rooms = [src, src / "domain", src / "store"]
    unnamed = sorted(
        str(p.relative_to(src))
        for room in rooms
        for p in room.glob("*.py")
        if p.name not in named
        and p.name != "__init__.py"
        and not any(re.fullmatch(n.replace("*", ".*"), p.name) for n in named if "*" in n)
    )
    assert unnamed == []
