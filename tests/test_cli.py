"""The CLI, run as a person would: real processes, one-line errors, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main
from tests.conftest import subprocess_env


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskloom", *args],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
        cwd=cwd,
    )


def test_board_round_trip_in_real_processes(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    added = run("board", "add", "t1", "Write docs", "--plan", "outline", "--db", db, "--json")
    assert added.returncode == 0, added.stderr
    cid = json.loads(added.stdout)["card"]["id"]
    moved = run("board", "status", "t1", cid, "completed", "--db", db)
    assert moved.returncode == 0
    assert f"- [x] Write docs  `({cid})`" in moved.stdout
    with taskloom.connect(db) as tl:  # the library sees what the CLI wrote
        assert tl.board("t1").list()["cards"][0]["status"] == "done"


def test_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    bad = run("board", "status", "t1", "nope", "done", "--db", db)
    assert bad.returncode == 1  # a mistyped --db: nothing is created (as for tasks)
    assert bad.stderr.strip().startswith("Error: no taskloom database at ")
    assert not (tmp_path / "cli.db").exists()
    assert run("board", "add", "t1", "first", "--db", db).returncode == 0
    bad = run("board", "status", "t1", "nope", "done", "--db", db)
    assert bad.returncode == 1
    assert bad.stderr.strip() == "Error: todo id 'nope' not found"
    for args in (["board", "clear", "t1"], ["goal", "pause", "t1"], ["board", "revise", "t1"]):
        bad = run(*args, "--db", f"sqlite:///{tmp_path / 'typo.db'}")
        assert bad.returncode == 1 and "no taskloom database" in bad.stderr, args
    assert not (tmp_path / "typo.db").exists()
    bad = run("board", "list", "t1", "--db", "mysql://nope")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    bad = run("board", "frobnicate")
    assert bad.returncode == 2 and "No such command" in bad.stderr


def test_tool_call_and_schemas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    code = main(
        [
            "tool",
            "call",
            "todo",
            "--thread",
            "t",
            "--db",
            db,
            "--args",
            '{"op": "add", "content": "from cli"}',
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["is_error"] is False and "from cli" in result["content"]
    code = main(["tool", "call", "todo", "--thread", "t", "--db", db, "--args", '{"op": "add"}'])
    assert code == 1
    assert json.loads(capsys.readouterr().out)["content"] == "error: op 'add' needs `content`"
    code = main(["tool", "call", "todo", "--thread", "t", "--db", db, "--args", "{oops"])
    assert code == 1
    assert "Error: --args is not valid JSON" in capsys.readouterr().err
    assert main(["tool", "schemas", "--format", "anthropic"]) == 0
    names = [t["name"] for t in json.loads(capsys.readouterr().out)]
    assert "todo" in names and not {"todo_write", "todo_list"} & set(names)  # one board tool
    assert main(["tool", "schemas", "--format", "anthropic", "--tools", "all"]) == 0
    names = [t["name"] for t in json.loads(capsys.readouterr().out)]
    assert {"todo", "todo_write", "todo_list"} <= set(names)


def test_plan_approval_from_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["board", "add", "t", "Deploy", "--needs-approval", "--db", db, "--json"]) == 0
    cid = json.loads(capsys.readouterr().out)["card"]["id"]
    assert main(["board", "approve", "t", cid, "--db", db]) == 0
    assert "[ ] Deploy" in capsys.readouterr().out
    assert main(["board", "reject", "t", cid, "--db", db]) == 1
    assert "not awaiting approval (status: ready)" in capsys.readouterr().err


def test_approve_is_tied_to_the_plan_the_person_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without ``--seen``, a plan the model changed between ``board list`` and ``board
    approve`` was approved unseen."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert (
        main(["board", "add", "t", "Deploy", "--plan", "push", "--needs-approval", "--db", db]) == 0
    )
    capsys.readouterr()
    assert main(["board", "list", "t", "--db", db]) == 0
    listed = capsys.readouterr().out
    with taskloom.connect(db) as tl:
        card = tl.board("t").get().cards[0]
        assert f"taskloom board approve --seen {card.updated_at} --db {db} -- t {card.id}" in listed
        tl.board("t").as_model().edit(card.id, plan=["push", "drop the database"])
        for command in ("approve", "reject"):
            seen = ["--seen", card.updated_at]
            assert main(["board", command, "t", card.id, *seen, "--db", db]) == 1
            assert "changed since it was shown" in capsys.readouterr().err
        now = tl.board("t").get().cards[0].updated_at
    assert main(["board", "approve", "t", card.id, "--seen", now, "--db", db]) == 0
    assert "drop the database" in capsys.readouterr().out


def test_user_text_is_printed_verbatim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["board", "add", "t", "[bold]not markup[/bold]", "--db", db]) == 0
    assert "[bold]not markup[/bold]" in capsys.readouterr().out


def test_demo_prints_a_board(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--db", f"sqlite:///{tmp_path / 'demo.db'}"]) == 0
    text = capsys.readouterr().out
    assert "[~] Write the failing test" in text and "[?] Open the pull request" in text


def commands():  # type: ignore[no-untyped-def]
    """Every leaf command of the CLI with its path, e.g. (["tasks", "add"], <command>)."""
    import typer.main

    from taskloom.cli import app

    def walk(cmd, path):  # type: ignore[no-untyped-def]
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                yield from walk(sub, [*path, name])
        else:
            yield path, cmd

    return list(walk(typer.main.get_command(app()), []))


def test_every_command_has_help_with_an_example() -> None:
    for path, cmd in commands():
        assert cmd.help and "Example:" in cmd.help, " ".join(path)
        # reStructuredText's literals print as typed in a terminal: ``--json`` was shown so
        assert "``" not in cmd.help, " ".join(path)


def test_every_command_summary_is_one_line() -> None:
    """A group's ``--help`` lists each command with the first paragraph of its help, line
    breaks kept: a summary wrapped in the source showed broken mid-sentence in that list."""
    import inspect

    for path, cmd in commands():
        summary = inspect.cleandoc(cmd.help or "").split("\n\n")[0]
        assert "\n" not in summary, " ".join(path)


def test_help_paragraphs_are_unwrapped_for_the_terminal_to_wrap() -> None:
    """Typer prints a docstring's line breaks as they are: at 80 columns every sentence
    wrapped in the source came out ragged."""
    from taskloom.cli import cli

    todo, seen = [cli()], 0
    while todo:
        cmd = todo.pop()
        todo += getattr(cmd, "commands", {}).values()
        seen += 1
        assert all("\n" not in p for p in (cmd.help or "").split("\n\n")), cmd.name
    assert seen > 40


def test_help_texts_show_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """``--help`` reads help texts as rich markup: ``[default: …]`` was taken for a tag and
    dropped, hiding where the database is by default."""
    from rich.text import Text

    for path, cmd in commands():
        for param in cmd.params:
            text = getattr(param, "help", None) or ""
            assert Text.from_markup(text).plain == text, f"{' '.join(path)} {param.opts}"
    assert main(["tasks", "list", "--help"]) == 0
    shown = capsys.readouterr().out
    words = " ".join(shown.replace("│", " ").split())
    assert "(default: $TASKLOOM_URL, else the nearest .taskloom/ folder here or above," in words


def test_every_option_and_argument_has_help() -> None:
    for path, cmd in commands():
        for param in cmd.params:
            assert getattr(param, "help", None), f"{' '.join(path)} {param.opts}"


def test_queue_commands_take_json() -> None:
    """Scripts pass ``--json`` to any queue command; none may answer "No such option"."""
    queue = {"tasks", "doctor", "hook"}
    for path, cmd in commands():
        if path[0] in queue and path != ["hook", "prompt"]:  # prompt prints hook JSON always
            assert any("--json" in p.opts for p in cmd.params), " ".join(path)


def test_arguments_that_are_not_utf8_are_refused_cleanly(tmp_path: Path) -> None:
    """Undecodable bytes reach Python as lone surrogates, which crashed deep in a command."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    for args in (
        ("tasks", "add", "bad\udcffbyte", "--db", db),
        ("board", "add", "t\udcff", "hi", "--db", db),
        ("tasks", "show", "\udcff", "--db", db),
    ):
        bad = run(*args)  # subprocess passes the surrogate on as the raw byte 0xff
        assert bad.returncode == 1 and "Traceback" not in bad.stderr, bad.stderr
        shown = next(a for a in args if "\udcff" in a).replace("\udcff", "\\xff")
        assert bad.stderr.strip() == f"Error: argument '{shown}' is not valid UTF-8"
    assert not (tmp_path / "cli.db").exists()


def test_main_refuses_surrogates_passed_directly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "list", "--status", "\ud800"]) == 1
    assert capsys.readouterr().err.strip() == "Error: argument '\\ud800' is not valid UTF-8"


def run_unread(*args: str, closed: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``taskloom ARGS`` with nobody reading its output: the reader gone before the
    first line (``| head -0``) or, ``closed``, standard output closed (``>&-``)."""
    command = [sys.executable, "-m", "taskloom", *args]
    if closed:
        command = ["sh", "-c", 'exec "$@" >&-', "sh", *command]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env()
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read()
    return subprocess.CompletedProcess(command, proc.wait(timeout=60), "", stderr)


def test_output_nobody_reads_is_dropped_quietly_after_the_work_is_saved(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    plan = tmp_path / "plan.jsonl"
    plan.write_text("".join(f'{{"title": "task {n}"}}\n' for n in range(300)))  # > a buffer
    for args, closed in (
        (("tasks", "add", "one"), True),
        (("tasks", "add", "two"), False),
        (("tasks", "add-many", str(plan)), False),
        (("tasks", "list", "--limit", "1000"), False),
    ):
        done = run_unread(*args, "--db", db, closed=closed)
        assert (done.returncode, done.stderr) == (0, ""), args
    assert json.loads(run("tasks", "stats", "--db", db, "--json").stdout)["ready"] == 302


def test_the_approve_line_runs_as_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It left out --db (so it acted on another database) and put ids that start with `-`
    (thread `-t`, a model's card `-1`) where they were read as options."""
    import shlex

    db = f"sqlite:///{tmp_path / 'my db.db'}"
    with taskloom.connect(db) as tl:
        tl.board("-t").replace([{"id": "-1", "title": "Deploy", "status": "awaiting_approval"}])
        assert main(["board", "list", "--db", db, "--", "-t"]) == 0
        line = capsys.readouterr().out.splitlines()[-1]
        card = tl.board("-t").get().cards[0]
        seen = f"--seen {card.updated_at}"
        assert line == f"    taskloom board approve {seen} --db '{db}' -- -t -1"
        tl.board("-t").as_model().edit("-1", plan=["drop the database"])
        argv = shlex.split(line)[1:]
        assert main(argv) == 1
        error = capsys.readouterr().err
        assert f"run `taskloom board list --db '{db}' -- -t` again for the fresh command" in error
        assert main(["board", "list", "--db", db, "--", "-t"]) == 0
        assert main(shlex.split(capsys.readouterr().out.splitlines()[-1])[1:]) == 0
        assert tl.board("-t").get().cards[0].status.value == "ready"


def test_the_approve_line_never_prints_a_password() -> None:
    from taskloom.cli.board import _waiting

    waiting = {"id": "c1", "status": "awaiting_approval", "updated_at": "2026-01-01T12:00:00.000Z"}
    snap = {"thread_id": "t", "cards": [{**waiting, "title": "Deploy\nrm -rf ~"}]}
    shown = _waiting(snap, "postgresql://me:s3cret@db.example/taskloom")
    assert "s3cret" not in shown and "--db" not in shown.splitlines()[-1]
    assert "add --db with your database URL" in shown
    plain = _waiting(snap, None).splitlines()
    assert plain[-1] == "    taskloom board approve --seen 2026-01-01T12:00:00.000Z -- t c1"
    # Each line says which plan it decides, on a line of its own: a line break in the title
    # is shown, never a line a shell would run.
    assert plain[-2] == "  Deploy / rm -rf ~:"


def test_seen_help_says_where_updated_at_is_shown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["board", "approve", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "approve line" in help_text and "--json" in help_text


def test_a_person_makes_a_card_need_approval_and_a_bad_seen_is_said_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No command set approval_mode on an existing card; and a --seen that is no timestamp
    was reported as a plan changed since it was shown."""
    db = f"sqlite:///{tmp_path / 'b.db'}"
    with taskloom.connect(db) as tl:
        cid = tl.board("t").add("Deploy prod", status="ready")["card"]["id"]
        assert main(["board", "edit", "t", cid, "--needs-approval", "--db", db]) == 0
        card = tl.board("t").get().get(cid)
        assert card.status.value == "awaiting_approval" and card.approval_mode.value == "required"
        capsys.readouterr()
        assert main(["board", "approve", "--seen", "yesterday", "--db", db, "--", "t", cid]) == 1
        error = capsys.readouterr().err
        assert "is not a card's updated_at" in error and "changed since" not in error
        assert (
            main(
                [
                    "board",
                    "approve",
                    "--seen",
                    "2030-01-01T00:00:00.000Z",
                    "--db",
                    db,
                    "--",
                    "t",
                    cid,
                ]
            )
            == 1
        )
        assert "'Deploy prod' (" in capsys.readouterr().err  # named by its title too


def test_remove_refused_names_the_cli_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal named the model tool's arguments (remove_blocked_by, force), which the
    command does not have."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    with taskloom.connect(db) as tl:
        a = tl.board("t").add("A")["card"]["id"]
        b = tl.board("t").add("B", blocked_by=[a])["card"]["id"]
    assert main(["board", "remove", "t", a, "--db", db]) == 1
    assert capsys.readouterr().err == (
        f"Error: card 'A' ({a}) cannot be removed: 'B' ({b}) comes after it. Remove that edge"
        " first (board edit --not-after), or remove it with --force, which drops the edge\n"
    )
    assert main(["board", "remove", "t", a, "--force", "--db", db]) == 0
    with taskloom.connect(db) as tl:
        assert [c["id"] for c in tl.board("t").list()["cards"]] == [b]


def test_a_blocker_with_another_status_than_blocked_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``board status … done --blocker "…"`` succeeded and dropped the text: a card that is
    not blocked keeps no blocker."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    with taskloom.connect(db) as tl:
        cid = tl.board("t").add("Deploy")["card"]["id"]
    assert main(["board", "status", "t", cid, "done", "--blocker", "CI red", "--db", db]) == 1
    assert capsys.readouterr().err == (
        "Error: --blocker says why a card is blocked: give it with the status blocked, not done\n"
    )
    assert main(["board", "status", "t", cid, "blocked", "--blocker", "CI red", "--db", db]) == 0
    with taskloom.connect(db) as tl:
        card = tl.board("t").list()["cards"][0]
        assert (card["status"], card["blocker"], tl.board("t").list()["version"]) == (
            "blocked",
            "CI red",
            2,
        )


def test_tool_call_runs_a_host_only_tool_as_the_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tool call goal_pause`` answered "unknown tool 'goal_pause'" though the tool exists
    and the docs say ``tool call`` is the host's own call; nothing could make it run."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    with taskloom.connect(db) as tl:
        tl.goal("t").set("Ship it", token_budget=100)
    base = ["tool", "call", "goal_pause", "--thread", "t", "--db", db]
    assert main(base) == 1
    assert capsys.readouterr().err == (
        "Error: goal_pause is a host-only tool: add --include-host to call it as the host\n"
    )
    assert main([*base, "--include-host"]) == 0
    assert json.loads(capsys.readouterr().out)["is_error"] is False
    with taskloom.connect(db) as tl:
        assert tl.goal("t").get()["goal"]["status"] == "paused"
    assert main(["tool", "call", "goal_nope", "--thread", "t", "--db", db]) == 1
    assert "unknown tool 'goal_nope'" in capsys.readouterr().out


def test_tool_call_without_a_thread_says_how_to_bind_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tool call todo`` with no ``--thread`` said only that the call had no thread bound;
    the answer names how each host binds one, as the queue tools' does for an agent."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["tool", "call", "todo", "--db", db, "--args", '{"op": "list"}']) == 1
    content = json.loads(capsys.readouterr().out)["content"]
    assert content == (
        "error: tool 'todo' needs a thread, and this call has none bound: the host names the"
        " thread (`taskloom tool call --thread THREAD`, `taskloom mcp --thread THREAD`, the"
        " X-Taskloom-Thread header on /mcp, ToolContext(thread_id=…) in Python)"
    )


def test_board_edit_with_nothing_to_change_says_so(tmp_path: Path) -> None:
    """An edit without a field to change is an error, not a silent success."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    added = run("board", "add", "t1", "Write docs", "--db", db, "--json")
    cid = json.loads(added.stdout)["card"]["id"]
    edited = run("board", "edit", "t1", cid, "--db", db)
    assert edited.returncode == 1
    assert edited.stderr.startswith("Error: nothing to change: give --title"), edited.stderr
    assert edited.stderr.count("\n") == 1 and edited.stdout == ""
    with taskloom.connect(db) as tl:
        assert tl.board("t1").list()["version"] == 1


def test_a_missing_or_folder_task_file_is_named_once_with_the_reason(tmp_path: Path) -> None:
    """The error repeated the path in Python's words: ``[Errno 2] No such file or
    directory: 'missing.jsonl'``."""
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    (tmp_path / "plans").mkdir()
    for name, why in (("missing.jsonl", "No such file or directory"), ("plans", "Is a directory")):
        for args in (("add-many", name), ("add", "--from", name)):
            done = run("tasks", *args, "--db", db, cwd=tmp_path)
            assert done.returncode == 1
            assert done.stderr == f"Error: cannot read {name}: {why}\n", done.stderr
