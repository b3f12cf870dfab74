"""``tasks add-many`` reads the files people and programs write: any line ending, a byte
order mark, JSON strings holding line separators, and it refuses bytes that are not UTF-8
naming the file, line and column."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from tests.test_queue import queue_of
from tests.test_queue_cli import run


def added_titles(capsys: pytest.CaptureFixture[str], db: str) -> list[str]:
    code, out, _ = run(capsys, "tasks", "list", "--db", db, "--json")
    assert code == 0
    return sorted(task["title"] for task in json.loads(out))


def test_a_json_string_holding_a_line_separator_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON writes U+2028, U+2029 and U+0085 unescaped (``ensure_ascii=False``): they are not
    line breaks of a JSON-lines file."""
    plan = tmp_path / "plan.jsonl"
    lines = [{"title": "para\u2028sep"}, {"title": "nel\x85x"}, {"title": "p\u2029q"}]
    plan.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in lines), "utf-8")
    db = f"sqlite:///{tmp_path / 'q.db'}"
    code, out, err = run(capsys, "tasks", "add-many", str(plan), "--db", db)
    assert code == 0 and out.strip().endswith("3 added, 0 already queued"), err
    assert len(added_titles(capsys, db)) == 3


def test_crlf_cr_and_a_byte_order_mark_are_read_and_lines_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.jsonl"
    plan.write_bytes(b'\xef\xbb\xbf{"title": "a"}\r\n\r\n{"title": "b"}\r{"title": "c"}\r\n')
    db = f"sqlite:///{tmp_path / 'q.db'}"
    code, out, _ = run(capsys, "tasks", "add-many", str(plan), "--db", db)
    assert code == 0 and out.strip().endswith("3 added, 0 already queued"), out
    plan.write_bytes(b'{"title": "d"}\r{"title": "e"}\r\r{"title": "f", "priority": "x"}\r')
    code, _, err = run(capsys, "tasks", "add-many", str(plan), "--db", db)
    assert code == 1 and f"{plan}: line 4: 'priority' must be a whole number" in err, err


def test_bytes_that_are_not_utf8_are_refused_naming_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """From a file and from standard input alike: never stored as U+FFFD in silence."""
    data = b'{"title": "ok"}\r\n\n{"title": "caf\xc3\xa9 \xff"}\n'
    plan = tmp_path / "plan.jsonl"
    plan.write_bytes(b"\xef\xbb\xbf" + data)
    db = f"sqlite:///{tmp_path / 'q.db'}"
    code, _, err = run(capsys, "tasks", "add-many", str(plan), "--db", db)
    where = "line 3, column 17: byte 0xff is not UTF-8 text"
    assert code == 1 and err.startswith(f"Error: {plan}: {where}"), err
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, _, err = run(capsys, "tasks", "add-many", "-", "--db", db)
    assert code == 1 and f"standard input: {where}" in err, err
    assert added_titles(capsys, db) == []


def test_errors_name_the_file_or_standard_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = tmp_path / "plan.jsonl"
    plan.write_text('{"title": "a"}\n[1]\n')
    db = f"sqlite:///{tmp_path / 'q.db'}"
    code, _, err = run(capsys, "tasks", "add-many", str(plan), "--db", db)
    assert code == 1 and err == f"Error: {plan}: line 2: a task must be an object of fields\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b'[{"title": "a"},]')))
    code, _, err = run(capsys, "tasks", "add-many", "-", "--db", db)
    assert code == 1 and err.startswith("Error: standard input: the JSON array"), err


def test_prune_refuses_an_empty_age_instead_of_taking_the_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--older-than "$AGE"`` with ``AGE`` unset is a mistake to name, as ``--dedup ""`` is."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    run(capsys, "tasks", "add", "t", "--db", db)
    for age in ("", " "):
        code, out, err = run(capsys, "tasks", "prune", "--older-than", age, "--db", db)
        assert code == 1 and out == "", out
        assert err.startswith("Error: --older-than takes a duration such as 7d"), err


def test_add_many_over_the_cap_is_refused_before_checking_every_task(tl: Taskloom) -> None:
    """A list is refused by its length, an iterable at the first task past the cap: neither
    is read, nor checked, to its end."""
    q = queue_of(tl, max_active=10)
    tasks: list[Any] = [{"title": f"t {i}"} for i in range(11)] + ["not a task"]
    with pytest.raises(InvalidInput, match=r"^12 tasks are more than the queue's cap of 10$"):
        q.add_many(tasks)
    read = 0

    def many() -> Iterator[dict[str, str]]:
        nonlocal read
        while read < 1_000:
            read += 1
            yield {"title": f"t {read}"}

    with pytest.raises(InvalidInput, match=r"^11 or more tasks are more than the queue's cap"):
        q.add_many(many())
    assert read == 11 and q.stats()["ready"] == 0


def test_a_file_over_the_cap_is_refused_before_its_lines_are_parsed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.jsonl"
    plan.write_text("not json\n" * 10_001)
    db = f"sqlite:///{tmp_path / 'q.db'}"
    code, _, err = run(capsys, "tasks", "add-many", str(plan), "--db", db)
    assert code == 1 and err == (
        f"Error: {plan}: 10,001 tasks are more than the queue's cap of 10,000\n"
    ), err


def test_a_large_file_is_announced_on_stderr_before_its_transaction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.jsonl"
    plan.write_text("".join(f'{{"title": "t {i}"}}\n' for i in range(1_000)))
    db = f"sqlite:///{tmp_path / 'q.db'}"
    code, out, err = run(capsys, "tasks", "add-many", str(plan), "--db", db)
    assert code == 0 and out.endswith("1,000 added, 0 already queued\n")
    assert err == f"adding 1,000 tasks from {plan} in one transaction…\n", err
