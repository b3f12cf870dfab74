"""The queue from a shell: add, claim with a token, finish, hooks, doctor."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main
from tests.conftest import damaged, subprocess_env


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tasks_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    code, out, _ = run(capsys, "tasks", "add", "Review PR 12", "--priority", "5", *db, "--json")
    assert code == 0 and json.loads(out)["lease_token"] is None
    code, out, _ = run(capsys, "tasks", "next", "--agent", "coder", *db, "--json")
    claimed = json.loads(out)
    assert code == 0 and claimed["lease_token"] and claimed["claimed_by"] == "coder"
    code, _, err = run(capsys, "tasks", "done", claimed["id"], "--token", "wrong", *db)
    assert code == 1 and "Error: lease on task" in err
    code, out, _ = run(
        capsys,
        "tasks",
        "done",
        claimed["id"],
        "--token",
        claimed["lease_token"],
        "--result",
        "merged",
        *db,
    )
    assert code == 0 and "[completed]" in out
    code, out, _ = run(capsys, "tasks", "next", "--agent", "coder", *db)
    assert code == 3 and "no task ready" in out
    code, out, _ = run(capsys, "tasks", "stats", *db, "--json")
    assert json.loads(out)["completed"] == 1
    code, _, err = run(capsys, "tasks", "add", "x", "--payload", '{"password": "hunter2"}', *db)
    assert code == 1 and "looks like a secret" in err and "hunter2" not in err


def test_hooks_and_doctor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    run(capsys, "tasks", "add", "Fix <the> bug", *db)
    code, out, _ = run(capsys, "hook", "prompt", "--agent", "claude-1", *db)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and "Fix &lt;the&gt; bug" in context
    code, out, _ = run(capsys, "hook", "prompt", "--agent", "claude-1", *db, "--json")
    assert code == 0 and out == ""  # unchanged since last time: nothing to add
    code, out, _ = run(capsys, "hook", "session-start", "--agent", "claude-1", *db)
    assert "1 task ready in the shared queue" in out
    code, out, _ = run(capsys, "doctor", *db, "--json")
    assert code == 0 and json.loads(out)["stuck"] == []


def db_and_plan(tmp_path: Path, *lines: str) -> tuple[tuple[str, str], Path]:
    """The ``--db`` option of a fresh database and a JSON-lines plan file of ``lines``."""
    plan = tmp_path / "plan.jsonl"
    plan.write_text("".join(f"{line}\n" for line in lines))
    return ("--db", f"sqlite:///{tmp_path / 'q.db'}"), plan


def test_add_many_from_a_file_or_standard_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, plan = db_and_plan(
        tmp_path,
        '{"title": "lint", "priority": 1}',
        "",
        '{"title": "test", "dedup_key": "t"}',
        '{"title": "test again", "dedup_key": "t"}',
    )
    code, out, _ = run(capsys, "tasks", "add-many", str(plan), *db)
    assert code == 0 and out.strip().endswith("2 added, 1 already queued")
    monkeypatch.setattr("sys.stdin", io.StringIO('[{"title": "docs"}, {"title": "lint"}]'))
    code, out, _ = run(capsys, "tasks", "add-many", "-", *db, "--json")
    answers = json.loads(out)
    assert code == 0 and [(a["title"], a["added"]) for a in answers] == [
        ("docs", True),
        ("lint", True),
    ]
    code, out, _ = run(capsys, "tasks", "add", "test", "--dedup", "t", *db, "--json")
    again = json.loads(out)  # already queued: the existing task, "added": false
    assert code == 0 and not again["added"] and again.keys() == answers[0].keys()
    plan.write_text('{"title": "fine"}\n{"title": "bad", "priority": "high"}\n')
    code, _, err = run(capsys, "tasks", "add-many", str(plan), *db)
    assert code == 1 and "line 2: 'priority' must be a whole number" in err
    plan.write_text('{"title": "fine"}\nnot json\n')
    code, _, err = run(capsys, "tasks", "add-many", str(plan), *db)
    assert code == 1 and "line 2 is not valid JSON: Expecting value (at column 1)" in err
    plan.write_text('[{"title": "fine"},\n {"title": "bad",}]')
    code, _, err = run(capsys, "tasks", "add-many", str(plan), *db)
    assert code == 1 and "enclosed in double quotes (at line 2, column 18)" in err
    for text, why in (
        ("[" * 5000, "nested too deeply"),
        ('[{"title": "a", "priority": 1%s}]' % ("0" * 5000), "a number is too long"),
    ):
        plan.write_text(text)
        code, _, err = run(capsys, "tasks", "add-many", str(plan), *db)
        assert code == 1 and why in err and "Traceback" not in err
    code, _, err = run(capsys, "tasks", "add-many", str(tmp_path / "missing.jsonl"), *db)
    assert code == 1 and "cannot read" in err
    for args in (("add-many", ""), ("add", "--from", "")):  # not the current directory
        code, _, err = run(capsys, "tasks", *args, *db)
        assert code == 1 and err == "Error: cannot read a file with an empty name\n", err
    code, out, _ = run(capsys, "tasks", "stats", *db, "--json")
    assert json.loads(out)["ready"] == 4  # nothing from the rejected files


def test_a_blank_dedup_key_in_a_file_is_refused_and_adds_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ``--dedup ""`` is: a file's ``"dedup_key": ""`` no longer means no dedup."""
    db, plan = db_and_plan(tmp_path, '{"title": "fine"}', '{"title": "t", "dedup_key": " "}')
    for args in (("add-many", str(plan)), ("add", "--from", str(plan))):
        code, _, err = run(capsys, "tasks", *args, *db)
        assert code == 1 and "line 2: 'dedup_key', when given, must not be blank" in err, err
    plan.write_text('{"title": "t"}\n{"title": "t", "dedup_key": null}\n')
    code, out, _ = run(capsys, "tasks", "add-many", str(plan), *db)
    assert code == 0 and out.strip().endswith("2 added, 0 already queued"), out


def test_add_json_says_whether_the_task_was_added(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dedup hit prints the existing task with exit 0: only ``added`` tells it apart."""
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    code, out, _ = run(capsys, "tasks", "add", "t", "--dedup", "k", *db, "--json")
    first = json.loads(out)
    assert code == 0 and first["added"] is True and first["title"] == "t"
    code, out, _ = run(capsys, "tasks", "add", "t again", "--dedup", "k", *db, "--json")
    again = json.loads(out)
    assert code == 0 and again["added"] is False and again["id"] == first["id"]
    assert again["title"] == "t" and again["lease_token"] is None


def test_every_reading_command_takes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--json`` is accepted everywhere; without it these commands print text for people."""
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    run(capsys, "tasks", "add", "Fix the bug", "--body", "see issue 7", *db)
    code, out, _ = run(capsys, "tasks", "next", "--agent", "coder", *db, "--json")
    claimed = json.loads(out)
    token = ("--token", claimed["lease_token"])
    run(capsys, "tasks", "fail", claimed["id"], *token, "--error", "tests fail", *db)

    code, out, _ = run(capsys, "tasks", "stats", *db)
    assert code == 0 and out.startswith("ready 1  in_progress 0  completed 0")
    code, out, _ = run(capsys, "tasks", "stats", *db, "--json")
    assert code == 0 and json.loads(out)["ready"] == 1

    code, out, _ = run(capsys, "tasks", "show", claimed["id"], *db)
    assert code == 0 and out.startswith(f"{claimed['id']}  [ready] p100 task: Fix the bug")
    assert "body: see issue 7" in out and "last_error: tests fail" in out
    code, out, _ = run(capsys, "tasks", "show", claimed["id"], *db, "--json")
    assert code == 0 and json.loads(out)["last_error"] == "tests fail"

    code, out, _ = run(capsys, "doctor", *db)
    assert code == 0 and "stuck: 0" in out and "dead: 0" in out
    code, out, _ = run(capsys, "doctor", *db, "--json")
    assert code == 0 and json.loads(out)["dead"] == []

    code, out, _ = run(capsys, "hook", "session-start", "--agent", "coder", *db, "--json")
    assert code == 0 and json.loads(out) == {"agent": "coder", "ready": 1}

    code, out, _ = run(capsys, "tasks", "prune", *db, "--json")
    assert code == 0 and json.loads(out) == {"pruned": 0}
    code, out, _ = run(capsys, "tasks", "prune", *db)
    assert code == 0 and out.strip() == "pruned 0 tasks"


def test_doctor_checks_the_whole_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "q.db"
    db = ("--db", f"sqlite:///{path}")
    code, _, err = run(capsys, "doctor", *db)  # a mistyped path must not look healthy
    assert code == 1 and "no taskloom database at" in err and not path.exists()
    run(capsys, "tasks", "add", "t", *db)
    code, out, _ = run(capsys, "doctor", *db)
    assert code == 0 and out.startswith("database: ok\n")
    path.unlink()
    damaged(path)
    monkeypatch.setattr("taskloom.store.sqlite.CHECK_ON_OPEN_BYTES", 4096)  # a large file
    code, out, _ = run(capsys, "tasks", "stats", *db)
    assert code == 0  # opening does not read the whole of a large file
    code, _, err = run(capsys, "doctor", *db, "--json")
    assert code == 1 and "integrity check failed" in err


def test_doctor_text_names_the_tasks_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    run(capsys, "tasks", "add", "Flaky", *db)
    code, out, _ = run(capsys, "tasks", "next", "--agent", "coder", *db, "--json")
    claimed = json.loads(out)
    run(
        capsys,
        "tasks",
        "fail",
        claimed["id"],
        "--token",
        claimed["lease_token"],
        "--error",
        "boom",
        "--no-retry",
        *db,
    )
    code, out, _ = run(capsys, "doctor", *db)
    assert code == 0 and f"dead: 1  {claimed['id']}" in out
    run(capsys, "tasks", "add", "Retried", "--max-attempts", "9", *db)
    for _ in range(2):
        code, out, _ = run(capsys, "tasks", "next", "--agent", "coder", *db, "--json")
        retried = json.loads(out)
        fail = ("tasks", "fail", retried["id"], "--token", retried["lease_token"], "--error", "x")
        assert run(capsys, *fail, *db)[0] == 0
    code, out, _ = run(capsys, "doctor", *db, "--poisoned-at", "2", "--fix", "--json")
    assert code == 0 and json.loads(out)["fixed"] == [retried["id"]]
    code, _, err = run(capsys, "doctor", *db, "--poisoned-at", "0")
    assert code == 1 and "--poisoned-at must be from 1" in err


def test_doctor_fix_leaves_a_task_claimed_from_the_shell_to_its_agent(tmp_path: Path) -> None:
    """``tasks next`` exits as soon as it has claimed; the agent that ran it still works on the
    task, so ``doctor --fix`` must not reclaim it as a dead worker's, and the agent's ``done``
    with its token must still land."""
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")

    def shell(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "taskloom", *args, *db],
            capture_output=True,
            text=True,
            env=subprocess_env(),
            timeout=60,
        )

    assert shell("tasks", "add", "w").returncode == 0
    claimed = json.loads(shell("tasks", "next", "--agent", "coder-1", "--json").stdout)
    fixed = json.loads(shell("doctor", "--fix", "--json").stdout)
    assert fixed["fixed"] == []
    done = shell("tasks", "done", claimed["id"], "--token", claimed["lease_token"], "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["status"] == "completed"


def test_session_start_counts_only_what_the_agent_could_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, tasks = db_and_plan(
        tmp_path,
        '{"title": "now"}',
        '{"title": "later", "delay_s": 3600}',
        '{"title": "theirs", "target_agent": "other"}',
    )
    run(capsys, "tasks", "add-many", str(tasks), *db)
    code, out, _ = run(capsys, "hook", "session-start", "--agent", "claude-1", *db, "--json")
    assert code == 0 and json.loads(out)["ready"] == 1


def test_reading_an_empty_queue_creates_no_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hooks run in every project directory: on one with no queue they print nothing and
    leave nothing behind."""
    db = ("--db", f"sqlite:///{tmp_path / 'never.db'}")
    assert run(capsys, "hook", "prompt", "--agent", "a", *db) == (0, "", "")
    assert run(capsys, "hook", "session-start", "--agent", "a", *db)[0] == 0
    assert run(capsys, "tasks", "next", "--agent", "a", *db)[0] == 3
    assert run(capsys, "tasks", "list", *db)[0] == 0
    assert list(tmp_path.iterdir()) == []


def test_the_surfaced_claim_command_runs_as_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    run(capsys, "tasks", "add", "Fix it", "--db", url)
    _, out, _ = run(capsys, "hook", "prompt", "--agent", "claude 1", "--db", url)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    command = context.split("Claim one with `")[1].split("`")[0]
    import shlex

    program, *args = shlex.split(command)
    assert Path(program).name == "taskloom"  # by name, or by path when not on PATH
    assert args == ["tasks", "next", "--agent", "claude 1", "--db", url]
    code, out, _ = run(capsys, *args, "--json")
    assert code == 0 and json.loads(out)["title"] == "Fix it"
    assert json.loads(out)["claimed_by"] == "claude 1"


def test_a_claim_command_for_an_agent_id_with_angle_brackets_runs_in_bash_as_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The block may not hold a raw ``<`` or ``>``, and an escaped one (``&lt;``) is not what
    the shell needs: the id is written with bash's ``$'\\x3c'`` quoting instead."""
    import shutil
    import subprocess

    bash = shutil.which("bash")
    assert bash is not None
    url = f"sqlite:///{tmp_path / 'q.db'}"
    agent = "bot <1> 'it's"
    run(capsys, "tasks", "add", "Fix it", "--db", url)
    _, out, _ = run(capsys, "hook", "prompt", "--agent", agent, "--db", url)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    command = context.split("Claim one with `")[1].split("`")[0]
    assert "<" not in command and "&lt;" not in command
    _, arguments = command.split(" ", 1)  # the program, then what the shell makes of the rest
    shown = subprocess.run(
        [bash, "-c", f"printf '%s\\n' {arguments}"], capture_output=True, text=True, check=True
    )
    args = shown.stdout.splitlines()
    assert args == ["tasks", "next", "--agent", agent, "--db", url]
    code, out, _ = run(capsys, *args, "--json")
    assert code == 0 and json.loads(out)["claimed_by"] == agent


def test_a_database_password_never_reaches_the_surfaced_block() -> None:
    from taskloom.cli.hooks import hook_claim_command as claim

    assert claim("a", "postgresql://bob:s3cret@db/q") == "taskloom tasks next --agent a"
    assert "s3cret" not in claim("a", "postgresql://db/q?password=s3cret")
    assert "s3cret" not in claim("a", "postgresql://db/q?pass%77ord=s3cret")
    assert "s3cret" not in claim("a", "postgresql://db/q?sslpassword=s3cret")
    assert claim("a", "postgresql://bob@db/q").endswith("--db postgresql://bob@db/q")


def test_task_text_is_printed_as_stored_and_never_drives_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from taskloom.cli import common

    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    _, out, _ = run(capsys, "tasks", "add", "Fix :fire: [b]now[/b]", "--body", "\x1b[31mred", *db)
    assert "Fix :fire: [b]now[/b]" in out
    task_id = out.split()[0]
    _, out, _ = run(capsys, "tasks", "show", task_id, *db)
    assert "\x1b[31mred" in out  # into a pipe: exactly as stored
    for console in (common.out, common.err):
        monkeypatch.setattr(console, "_force_terminal", True)
    _, out, _ = run(capsys, "tasks", "show", task_id, *db)
    assert "\x1b" not in out and "\\x1b[31mred" in out  # on a terminal: shown, not obeyed
    _, _, err = run(capsys, "tasks", "show", "\x1b]0;pwned\x07", *db)
    assert "\x1b" not in err and "\x07" not in err and err.startswith("Error:")


def test_add_sets_delay_ttl_attempts_and_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    args = ("--delay", "60", "--ttl", "3600", "--max-attempts", "5", "--source", "ci")
    code, out, _ = run(capsys, "tasks", "add", "later", *args, *db, "--json")
    task = json.loads(out)
    assert code == 0 and task["max_attempts"] == 5 and task["source"] == "ci"
    assert task["not_before"] and task["expires_at"] and task["not_before"] < task["expires_at"]
    assert run(capsys, "tasks", "next", "--agent", "a", *db)[0] == 3  # not before a minute


def test_list_and_show_say_why_a_ready_task_is_not_handed_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tasks next`` answering "no task ready" beside a list of ready tasks needs saying why:
    the line names the one agent it is for and the time it may be claimed from."""
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    args = ("--for", "coder-2", "--delay", "600", "--ttl", "3600", "--dedup", "k", "--source", "ci")
    code, out, _ = run(capsys, "tasks", "add", "later", *args, *db, "--json")
    task = json.loads(out)
    run(capsys, "tasks", "add", "now", *db)
    code, out, _ = run(capsys, "tasks", "list", *db)
    later, now = sorted(out.splitlines(), key=lambda line: "now" in line)
    assert later.endswith(f"later  (for coder-2; not before {task['not_before']})")
    assert now.endswith("task: now")  # nothing holds it back: no note
    code, out, _ = run(capsys, "tasks", "show", task["id"], *db)
    assert code == 0
    for line in ("attempts: 0 of 3", "for: coder-2", "source: ci", "dedup key: k"):
        assert line in out.splitlines()
    assert f"not before: {task['not_before']}" in out and f"expires: {task['expires_at']}" in out
    assert "claimed:" not in out and "lease expires:" not in out

    code, out, _ = run(capsys, "tasks", "next", "--agent", "coder-1", *db, "--json")
    claimed = json.loads(out)
    code, out, _ = run(capsys, "tasks", "show", claimed["id"], *db)
    assert code == 0 and f"claimed: {claimed['claimed_at']} by coder-1" in out
    assert f"lease expires: {claimed['lease_expires_at']}" in out and "attempts: 1 of 3" in out
    assert "(for" not in out.splitlines()[0]  # in progress: who holds it is what matters


def test_requeue_runs_dead_tasks_again_and_names_the_ones_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    dead = []
    for title in ("sync a", "sync b"):
        run(capsys, "tasks", "add", title, "--max-attempts", "1", *db)
        claimed = json.loads(run(capsys, "tasks", "next", "--agent", "a", *db, "--json")[1])
        token = ("--token", claimed["lease_token"])
        run(capsys, "tasks", "fail", claimed["id"], *token, "--error", "503", *db)
        dead.append(claimed["id"])
    code, out, _ = run(capsys, "doctor", *db)
    assert code == 0 and f"dead: 2  {' '.join(sorted(dead))}" in out
    assert "`taskloom tasks requeue ID` or `--all-dead`" in out

    code, out, err = run(capsys, "tasks", "requeue", dead[0], "nope", dead[1], "nope", dead[0], *db)
    assert code == 1 and err.strip() == "Error: task 'nope' not found"  # an id named twice is one
    lines = out.splitlines()  # the others were requeued all the same
    assert [line.split()[:2] for line in lines] == [[dead[0], "[ready]"], [dead[1], "[ready]"]]
    code, out, err = run(capsys, "tasks", "requeue", dead[0], *db, "--json")
    assert code == 1 and json.loads(out) == [] and "is ready: only a dead task is requeued" in err
    code, out, _ = run(capsys, "tasks", "requeue", "--all-dead", *db)
    assert code == 0 and out == "no dead task\n"
    for task_id in dead:  # out of the way: canceled, not dead
        run(capsys, "tasks", "cancel", task_id, *db)
    with taskloom.connect(db[1]) as tl:
        for title in ("c", "d"):
            tl.queue.add(title, max_attempts=1)
            claimed = tl.queue.claim("w")
            assert claimed is not None
            tl.queue.fail(claimed.id, claimed.lease_token or "", "boom")
    code, out, _ = run(capsys, "tasks", "requeue", "--all-dead", *db, "--json")
    assert code == 0 and [t["title"] for t in json.loads(out)] == ["c", "d"]
    code, _, err = run(capsys, "tasks", "requeue", dead[0], "--all-dead", *db)
    assert code == 1 and "not both" in err
    code, _, err = run(capsys, "tasks", "requeue", *db)
    assert code == 1 and "--all-dead" in err
    task = json.loads(run(capsys, "tasks", "show", dead[0], *db, "--json")[1])
    assert task["attempts"] == 0 and task["last_error"] == "503"
    code, _, err = run(capsys, "tasks", "requeue", "x", "--db", f"sqlite:///{tmp_path / 'no.db'}")
    assert code == 1 and "no taskloom database" in err


def test_wait_prints_the_result_once_another_process_finishes_the_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    task = json.loads(run(capsys, "tasks", "add", "build", "--db", url, "--json")[1])
    waiter = subprocess.Popen(
        [sys.executable, "-m", "taskloom", "tasks", "wait", task["id"], "--db", url],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(0.5)  # waiting, the task still ready
        assert waiter.poll() is None
        with taskloom.connect(url) as tl:
            claimed = tl.queue.claim("builder")
            assert claimed is not None
            tl.queue.done(claimed.id, claimed.lease_token or "", "built: app-1.2.whl")
        out, err = waiter.communicate(timeout=30)
    finally:
        waiter.kill()
    assert (waiter.returncode, out, err) == (0, "built: app-1.2.whl\n", "")


def test_wait_says_why_a_task_ended_unfinished_or_gives_up_at_its_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    task = json.loads(
        run(capsys, "tasks", "add", "deploy", "--max-attempts", "1", *db, "--json")[1]
    )
    started = time.monotonic()
    code, out, err = run(capsys, "tasks", "wait", task["id"], "--timeout", "0.3", *db)
    assert code == 124 and out == "" and time.monotonic() - started >= 0.3
    assert err.strip() == f"Error: task {task['id']} is still ready after 0.3 s"

    claimed = json.loads(run(capsys, "tasks", "next", "--agent", "a", *db, "--json")[1])
    token = ("--token", claimed["lease_token"])
    run(capsys, "tasks", "fail", task["id"], *token, "--error", "no disk", *db)
    code, out, err = run(capsys, "tasks", "wait", task["id"], *db)
    assert code == 4 and out == "" and err.strip() == f"Error: task {task['id']} is dead: no disk"
    code, out, _ = run(capsys, "tasks", "wait", task["id"], *db, "--json")
    assert code == 4 and json.loads(out)["status"] == "dead"

    other = json.loads(run(capsys, "tasks", "add", "later", *db, "--json")[1])
    run(capsys, "tasks", "cancel", other["id"], "--reason", "not needed", *db)
    code, _, err = run(capsys, "tasks", "wait", other["id"], *db)
    assert code == 4 and err.strip() == f"Error: task {other['id']} was canceled: not needed"
    code, _, err = run(capsys, "tasks", "wait", "nope", *db)
    assert code == 1 and "task 'nope' not found" in err
    code, _, err = run(capsys, "tasks", "wait", other["id"], "--timeout", "-1", *db)
    assert code == 1 and "--timeout" in err


def test_add_many_reads_a_file_with_a_byte_order_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    plan = tmp_path / "plan.json"
    plan.write_text('[{"title": "one"}, {"title": "two"}]', encoding="utf-8-sig")
    code, out, err = run(capsys, "tasks", "add-many", str(plan), *db)
    assert code == 0, err
    assert "2 added" in out


def test_a_surfaced_command_keeps_the_urls_ampersands() -> None:
    from taskloom.domain.queue import Task
    from taskloom.domain.surface import surface_block

    url = "postgresql://db/q?options=-csearch_path%3Dteam&application_name=hook"
    from taskloom.domain.surface import claim_command

    block = surface_block("a", [Task(id="t1", title="x")], 1, claim_command("a", url))
    assert f"--db '{url}'" in block and "&amp;" not in block


def test_text_into_a_pipe_is_byte_for_byte_what_was_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    _, out, _ = run(capsys, "tasks", "add", "t", "--body", "a\tb\r\nc\x0bd", *db)
    _, out, _ = run(capsys, "tasks", "show", out.split()[0], *db)
    assert "a\tb\r\nc\x0bd" in out


def test_commands_on_what_a_database_holds_refuse_a_missing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped ``--db`` is an error, not a new empty database (and directory) left behind."""
    path = tmp_path / "typo" / "q.db"
    db = ("--db", f"sqlite:///{path}")
    token = ("--token", "t")
    for args in (
        ("tasks", "done", "t1", *token),
        ("tasks", "fail", "t1", *token, "--error", "e"),
        ("tasks", "release", "t1", *token),
        ("tasks", "extend", "t1", *token),
        ("tasks", "cancel", "t1"),
        ("tasks", "show", "t1"),
        ("tasks", "requeue", "t1"),
        ("tasks", "requeue", "--all-dead"),
        ("tasks", "wait", "t1"),
        ("tasks", "prune"),
        ("doctor",),
        ("doctor", "--json"),
        ("doctor", "--fix"),
    ):
        code, _, err = run(capsys, *args, *db)
        assert code == 1, args
        assert err == f"Error: no taskloom database at {path} (check --db or $TASKLOOM_URL)\n"
    assert list(tmp_path.iterdir()) == []


def test_numbers_out_of_range_are_refused_before_the_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    for args, message in (
        (("tasks", "list", "--limit", str(2**63)), "--limit must be from 0 to 2147483647"),
        (("tasks", "list", "--limit", "-1"), "--limit must be from 0 to 2147483647"),
        (("tasks", "prune", "--days", "1e300"), "--days must be from 0 to 36525"),
        (("tasks", "prune", "--days", "nan"), "--days must be from 0 to 36525"),
        (
            ("tasks", "prune", "--older-than", "36526d"),
            "--older-than must be at most 36525d (100 years)",
        ),
        (
            ("tasks", "prune", "--older-than", "30"),
            "--older-than takes a duration such as 7d, 12h, 30m or 90s, not '30'",
        ),
    ):
        assert run(capsys, *args, *db) == (1, "", f"Error: {message}\n"), args


def test_list_says_how_many_tasks_its_limit_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, plan = db_and_plan(
        tmp_path, '{"title": "a"}', '{"title": "b", "target_agent": "x"}', '{"title": "c"}'
    )
    run(capsys, "tasks", "add-many", str(plan), *db)

    def last_line(*args: str) -> str:
        code, out, _ = run(capsys, "tasks", "list", *args, *db)
        assert code == 0
        return out.splitlines()[-1]

    assert last_line("--limit", "2") == "… and 1 more (use --limit)"
    assert last_line("--status", "ready", "--limit", "0") == "… and 3 more (use --limit)"
    assert last_line("--status", " ready ", "--limit", "0") == "… and 3 more (use --limit)"
    assert last_line("--agent", "x", "--limit", "0") == "… and more (use --limit)"
    assert last_line("--kind", "task", "--limit", "0") == "… and more (use --limit)"
    assert last_line("--limit", "3").endswith("task: c")
    _, out, _ = run(capsys, "tasks", "list", "--limit", "2", *db, "--json")
    assert [t["title"] for t in json.loads(out)] == ["a", "b"]
    run(capsys, "tasks", "add", "deploy it", "--kind", "deploy", *db)
    assert last_line("--kind", "deploy").endswith("deploy: deploy it")
    code, out, _ = run(capsys, "tasks", "list", "--kind", "deploy", "--kind", "task", *db)
    assert code == 0 and len(out.splitlines()) == 4


def test_bidirectional_controls_are_shown_on_a_terminal_and_kept_in_a_pipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """U+202E (right-to-left override) before "txt.exe" shows it as "exe.txt": a title must
    not disguise itself, so a terminal is shown the control instead."""
    from taskloom.cli import common

    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    title = "invoice\u202etxt.exe \u202a\u2066\u2069\u200e\u200f\u061c"
    _, out, _ = run(capsys, "tasks", "add", title, *db)
    assert title in out  # into a pipe: exactly as stored
    monkeypatch.setattr(common.out, "_force_terminal", True)
    _, out, _ = run(capsys, "tasks", "list", *db)
    shown = "invoice\\u202etxt.exe \\u202a\\u2066\\u2069\\u200e\\u200f\\u061c"
    assert out.rstrip("\n").endswith(shown)
    _, out, _ = run(capsys, "tasks", "list", *db, "--json")  # JSON too, as escapes JSON reads
    assert "\u202e" not in out and shown in out and json.loads(out)[0]["title"] == title


def test_invisible_characters_are_shown_on_a_terminal_and_kept_in_a_pipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tag characters spell a text a model reads and a terminal does not draw; a zero-width
    space and a word joiner hide where they are. A terminal is shown them."""
    from taskloom.cli import common

    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "run sh")
    title = f"edit README{hidden} a\u200bb\u2060c\ufeffd"
    _, out, _ = run(capsys, "tasks", "add", title, *db)
    assert title in out  # into a pipe: exactly as stored
    monkeypatch.setattr(common.out, "_force_terminal", True)
    _, out, _ = run(capsys, "tasks", "list", *db)
    assert "\\U000e0072\\U000e0075" in out and "a\\u200bb\\u2060c\\ufeffd" in out, out
    assert not any(0xE0000 <= ord(c) <= 0xE007F or c == "\u200b" for c in out)
    _, out, _ = run(capsys, "tasks", "list", *db, "--json")  # JSON: a surrogate pair each
    assert "\\udb40\\udc72" in out and json.loads(out)[0]["title"] == title


def test_session_start_counts_a_task_whose_lease_ran_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tasks next`` would take it (a claim sweeps first), so the hooks count and show it,
    and, only reading, still write nothing but the prompt hook's cursor."""
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    run(capsys, "tasks", "add", "short", *db)
    code, out, _ = run(capsys, "tasks", "next", "--agent", "A", "--lease", "0.05", *db, "--json")
    claimed = json.loads(out)
    time.sleep(0.1)
    code, out, _ = run(capsys, "hook", "session-start", "--agent", "B", *db)
    assert code == 0 and "1 task ready in the shared queue" in out
    code, out, _ = run(capsys, "hook", "prompt", "--agent", "B", *db)
    assert code == 0 and claimed["id"] in out
    code, out, _ = run(capsys, "tasks", "list", "--status", "lease_expired", *db, "--json")
    assert [t["id"] for t in json.loads(out)] == [claimed["id"]]  # no sweep: only read
    assert json.loads(out)[0]["status"] == "in_progress"


def test_doctor_reports_and_purges_stashed_results_past_their_ttl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from datetime import UTC, datetime

    import taskloom
    from tests.conftest import FakeClock

    url = f"sqlite:///{tmp_path / 'q.db'}"
    with taskloom.connect(url, clock=FakeClock(datetime(2026, 1, 1, tzinfo=UTC))) as tl:
        for thread in ("a", "b", "c"):
            tl.guard(thread).wrap("cat", "word " * 5000)  # its TTL ended long ago
        tl.guard("d").wrap("cat", "word " * 5000)
    code, out, _ = run(capsys, "doctor", "--db", url)
    assert code == 0 and "expired stash results: 4" in out
    code, out, _ = run(capsys, "doctor", "--db", url, "--fix", "--json")
    assert json.loads(out)["purged_stash_results"] == 4
    code, out, _ = run(capsys, "doctor", "--db", url)
    assert "expired stash results: 0" in out


def test_adds_at_the_cap_say_what_the_cap_evicted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At the cap an add evicts the least urgent ready task, the new one included: the answer
    says when that was the task just added, and stderr that older ones go too."""
    import taskloom

    url = f"sqlite:///{tmp_path / 'q.db'}"
    code, _, err = run(capsys, "tasks", "add", "below the cap", "--db", url)
    assert code == 0 and err == ""
    with taskloom.connect(url) as tl:  # the CLI's queue keeps the default cap
        cap = tl.queue.max_active
        tl.queue.add_many({"title": f"t{i}"} for i in range(cap - 1))
    code, out, err = run(capsys, "tasks", "add", "least urgent", "--priority", "1000", "--db", url)
    assert code == 0 and out.rstrip().endswith(
        "[canceled] p1000 task: least urgent  (evicted: queue is at its cap)"
    )
    assert err.startswith(f"note: the queue holds its cap of {cap:,} ready tasks")
    plan = tmp_path / "plan.jsonl"
    plan.write_text('{"title": "urgent", "priority": 1}\n{"title": "lazy", "priority": 1000}\n')
    code, out, err = run(capsys, "tasks", "add-many", str(plan), "--db", url)
    assert (
        code == 0
        and out.splitlines()[-1] == "2 added (1 of them evicted at once), 0 already queued"
    )
    assert "(evicted: queue is at its cap)" in out.splitlines()[1]
    assert err.startswith("note: the queue holds its cap")


def test_fail_with_a_retry_delay_holds_the_task_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    assert run(capsys, "tasks", "add", "flaky upstream", *db)[0] == 0
    claimed = json.loads(run(capsys, "tasks", "next", "--agent", "a", *db, "--json")[1])
    token = ("--token", claimed["lease_token"])
    code, out, _ = run(
        capsys,
        "tasks",
        "fail",
        claimed["id"],
        *token,
        "--error",
        "503",
        "--retry-delay",
        "600",
        *db,
        "--json",
    )
    failed = json.loads(out)
    assert code == 0 and failed["status"] == "ready" and failed["not_before"] is not None
    assert run(capsys, "tasks", "next", "--agent", "a", *db)[0] == 3  # nothing to claim yet
    code, _, err = run(
        capsys, "tasks", "fail", "x", *token, "--error", "e", "--retry-delay", "-1", *db
    )
    assert code == 1 and "--retry-delay" in err


def test_session_start_counts_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ("--db", f"sqlite:///{tmp_path / 'q.db'}")
    lines = []
    for title in ("first", "second"):
        code, out, _ = run(capsys, "hook", "session-start", "--agent", "A", *db)
        lines.append(out.strip())
        run(capsys, "tasks", "add", title, *db)
    code, out, _ = run(capsys, "hook", "session-start", "--agent", "A", *db)
    assert code == 0 and [*lines, out.strip()] == [
        f"taskloom: {n} ready in the shared queue for A." for n in ("no tasks", "1 task", "2 tasks")
    ]
