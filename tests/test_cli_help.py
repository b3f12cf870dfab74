"""Every command's ``--help``: flags shown as flags, never with a value after them."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from taskloom.cli import ORDER, cli, main
from tests.conftest import subprocess_env


def command_paths() -> list[list[str]]:
    """Every command and group of ``taskloom``, as the words that name it."""
    paths: list[list[str]] = []
    todo: list[tuple[list[str], Any]] = [([], cli())]
    while todo:
        path, cmd = todo.pop()
        paths.append(path)
        todo += [([*path, name], sub) for name, sub in getattr(cmd, "commands", {}).items()]
    return sorted(paths)


def test_every_command_is_walked() -> None:
    paths = command_paths()
    assert ["init", "codex"] in paths and ["tasks", "work"] in paths and len(paths) > 40


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_no_flag_shows_a_value(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0
    shown = capsys.readouterr().out
    assert "--help" in shown and "<bool>" not in shown, shown


def test_print_is_a_flag_in_a_real_terminal_width() -> None:
    """``--print <bool>`` was shown, though ``--print true`` is refused."""
    done = subprocess.run(
        [sys.executable, "-m", "taskloom", "init", "codex", "--help"],
        env={**subprocess_env(), "COLUMNS": "120"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    line = next(row for row in done.stdout.splitlines() if "--print" in row)
    assert "<" not in line and "Print what would be written" in line, line
    assert "--thread" in done.stdout and "<str>" in done.stdout  # values still shown


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
def test_each_example_is_a_paragraph(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Two ``Example:`` lines in a row were joined into one run-on paragraph."""
    assert main([*path, "--help"]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    for paragraph in "\n".join(lines).split("\n\n"):
        assert paragraph.count("Example:") <= 1, paragraph
        if "Example:" in paragraph:
            assert paragraph.startswith("Example:"), paragraph


@pytest.mark.parametrize("path", [p for p in command_paths() if p], ids=" ".join)
def test_every_command_and_group_gives_an_example(
    path: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A group's help (``taskloom board --help``) said what it does, with no example."""
    assert main([*path, "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert f"Example: taskloom {' '.join(path)}" in shown, shown


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    """``taskloom --version`` was refused as an unknown option; a bug report needs it, and
    the MCP server reports the same version to its clients."""
    import taskloom

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"taskloom {taskloom.__version__}\n"
    assert main(["--help"]) == 0
    shown = capsys.readouterr().out
    assert "--version" in shown and "Durable work state for AI agents" in shown


def test_the_top_help_lists_first_steps_first(capsys: pytest.CaptureFixture[str]) -> None:
    """It listed ``doctor``, ``mcp`` and ``migrate-db`` before ``board``, and said nowhere
    how to start."""
    assert list(cli().commands) == list(ORDER)
    assert main(["--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "`taskloom demo` seeds a thread, `taskloom serve` shows it" in shown
    listed = [word for word in shown.split() if word in ORDER]
    assert listed[:5] == ["demo", "serve", "board", "goal", "tasks"]
