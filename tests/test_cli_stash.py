"""``taskloom guard wrap`` and ``taskloom stash …`` as a person or a hook would run them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main
from tests.conftest import subprocess_env

PAYLOAD = json.dumps(
    [{"number": i, "title": f"issue number {i}", "state": "open"} for i in range(400)], indent=2
)


def test_guard_wrap_in_a_real_process_then_stash_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    done = subprocess.run(
        [sys.executable, "-m", "taskloom", "guard", "wrap", "t1", "--tool", "gh", "--db", db],
        input=PAYLOAD,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('[stashed tool output: result_id="res_')
    with taskloom.connect(db) as tl:
        [row] = tl.guard("t1").results()
    rid = row["result_id"]

    assert main(["stash", "list", "t1", "--db", db]) == 0
    assert rid in capsys.readouterr().out
    assert main(["stash", "show", "t1", rid, "--db", db]) == 0
    assert capsys.readouterr().out.strip() == done.stdout.strip()
    assert main(["stash", "read", "t1", rid, "--path", "$[2].title", "--db", db]) == 0
    assert '"issue number 2"' in capsys.readouterr().out
    assert main(["stash", "extract", "t1", rid, "title of issue 377", "--db", db]) == 0
    assert "issue number 377" in capsys.readouterr().out
    assert main(["stash", "log", "t1", "--db", db]) == 0
    assert "stored" in capsys.readouterr().out
    assert main(["stash", "read", "t2", rid, "--db", db]) == 1
    assert f"Error: no stashed result '{rid}' in this thread" in capsys.readouterr().err
    page = "<!doctype html><html><body><b>small</b> output</body></html>"
    monkeypatch.setattr(sys, "stdin", io.StringIO(page))
    assert main(["guard", "wrap", "t1", "--tool", "web", "--db", db]) == 0
    assert capsys.readouterr().out.strip() == page  # cleaning it would save next to nothing


def _stashed(tmp_path: Path) -> tuple[str, str]:
    """A database holding :data:`PAYLOAD` stashed in thread ``t1``, and the result's id."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    with taskloom.connect(db) as tl:
        return db, tl.guard("t1").stash("gh", PAYLOAD).result_id or ""


def test_stash_read_reports_bad_filters_and_pages_as_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, rid = _stashed(tmp_path)
    assert main(["stash", "read", "t1", rid, "--path", "$[?(@.number==x)]", "--db", db]) == 1
    err = capsys.readouterr().err
    assert "Error: cannot parse JSONPath '$[?(@.number==x)]'" in err and "Traceback" not in err
    assert main(["stash", "read", "t1", rid, "--page", "0", "--db", db]) == 1
    assert "Error: pages are numbered from 1 (got 0)" in capsys.readouterr().err
    assert main(["stash", "read", "t1", rid, "--page", "1", "--db", db]) == 0
    assert capsys.readouterr().out.startswith("[lines 1-")


def test_guard_wrap_with_no_input_is_an_error(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    done = subprocess.run(
        [sys.executable, "-m", "taskloom", "guard", "wrap", "t", "--tool", "x", "--db", db],
        capture_output=True, text=True, env=subprocess_env(), timeout=60,
        preexec_fn=lambda: os.close(0),  # stdin closed, as `<&-` does
    )  # fmt: skip
    assert done.returncode == 1 and "standard input is closed" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_output_in_an_ascii_locale_is_escaped_not_a_crash(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    env = {**subprocess_env(), "PYTHONIOENCODING": "ascii"}
    for args in (["board", "add", "enc", "café"], ["board", "add", "enc", "plain"]):
        done = subprocess.run(
            [sys.executable, "-m", "taskloom", *args, "--db", db],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "caf\\xe9" in done.stdout


def test_guard_wrap_names_the_tool_flag_when_it_is_blank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    for blank in ("", "  "):
        monkeypatch.setattr(sys, "stdin", io.StringIO(PAYLOAD))
        assert main(["guard", "wrap", "t", "--tool", blank, "--db", db]) == 1
        assert capsys.readouterr().err == "Error: --tool is required\n"  # not tool_name


def test_stash_errors_name_the_commands_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """They said result_id, and "give one of path, lines or page", the tool's names."""
    db, rid = _stashed(tmp_path)
    for args in (["show", "t1", " "], ["read", "t1", ""], ["extract", "t1", "", "q"]):
        assert main(["stash", *args, "--db", db]) == 1
        assert capsys.readouterr().err == "Error: a result id is required\n"
    both = ["stash", "read", "t1", rid, "--path", "$[0]", "--lines", "1-2", "--db", db]
    assert main(both) == 1
    said = "Error: give one of --path, --lines or --page (got --path, --lines)\n"
    assert capsys.readouterr().err == said


def test_stash_json_output_says_is_json_as_true_or_false(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A script reading ``stash list --json`` gets JSON's booleans, not the database's 0/1."""
    db, rid = _stashed(tmp_path)
    assert main(["stash", "list", "t1", "--json", "--db", db]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["result_id"] == rid and row["is_json"] is True
    assert main(["stash", "show", "t1", rid, "--json", "--db", db]) == 0
    assert json.loads(capsys.readouterr().out)["is_json"] is True
