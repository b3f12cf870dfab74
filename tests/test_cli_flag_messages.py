"""Errors say what the person typed: the flags of the command, the line of the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--for", ""], "--for, when given, must be non-empty text"),
        (["--delay", "-1"], "--delay must be at least 0 seconds"),
        (["--ttl", "-1"], "--ttl must be at least 0 seconds"),
        (["--max-attempts", "0"], "--max-attempts must be between 1 and"),
    ],
)
def test_tasks_add_errors_name_its_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: list[str], said: str
) -> None:
    code, _, err = run(capsys, "tasks", "add", "x", *given, "--db", f"sqlite:///{tmp_path / 'q'}")
    assert code == 1 and err.startswith(f"Error: {said}") and "_" not in err, err


@pytest.mark.parametrize(
    "command",
    [["next", "--agent", "a"], ["extend", "0193", "--token", "t"]],
    ids=["next", "extend"],
)
@pytest.mark.parametrize("lease", ["0", "-5", "nan"])
def test_a_bad_lease_is_named_by_its_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], lease: str
) -> None:
    """ "a lease must be more than 0 seconds" named no flag of the command."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    code, _, err = run(capsys, "tasks", *command, "--lease", lease, "--db", db)
    assert code == 1 and err.startswith("Error: --lease must be"), err


def test_goal_and_stash_errors_name_their_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'g.db'}"
    code, _, err = run(capsys, "goal", "set", "t", "Ship", "--budget", "0", "--db", db)
    assert code == 1 and err.startswith("Error: --budget must be a positive integer"), err
    with taskloom.connect(db) as tl:
        text = "\n".join(f"line {i} " + "x" * 80 for i in range(3000))
        rid = tl.guard("t").stash("shell", text).result_id
    assert rid is not None
    code, _, err = run(capsys, "stash", "read", "t", rid, "--lines", "abc", "--db", db)
    assert code == 1 and err.startswith("Error: --lines must look like '120-180'"), err


def test_add_many_names_the_line_of_the_file_a_bad_task_is_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.jsonl"
    tasks = [{"title": "a"}, {"title": "b"}, {"title": "c", "kind": "Bad Kind"}]
    plan.write_text(f"{json.dumps(tasks[0])}\n\n{json.dumps(tasks[1])}\n{json.dumps(tasks[2])}\n")
    db = f"sqlite:///{tmp_path / 'q.db'}"
    code, _, err = run(capsys, "tasks", "add-many", str(plan), "--db", db)
    assert code == 1 and err.startswith(f"Error: {plan}: line 4: invalid task kind 'Bad Kind'"), err
    plan.write_text(json.dumps(tasks))  # a JSON array has no lines to name: its place
    code, _, err = run(capsys, "tasks", "add-many", str(plan), "--db", db)
    assert code == 1 and err.startswith(f"Error: {plan}: task 3: invalid task kind"), err


def test_tasks_list_json_says_on_stderr_when_the_limit_left_tasks_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    with taskloom.connect(db) as tl:
        tl.queue.add_many([{"title": f"task {i}"} for i in range(55)])
        tl.queue.add("targeted", target_agent="a1")
        tl.queue.add("targeted too", target_agent="a1")
    code, out, err = run(capsys, "tasks", "list", "--json", "--db", db)
    assert code == 0 and len(json.loads(out)) == 50
    assert err == "50 of 57 tasks shown; use --limit\n"
    code, out, err = run(capsys, "tasks", "list", "--json", "--limit", "60", "--db", db)
    assert code == 0 and len(json.loads(out)) == 57 and err == ""
    code, out, err = run(
        capsys, "tasks", "list", "--json", "--agent", "a1", "--limit", "1", "--db", db
    )
    assert code == 0 and len(json.loads(out)) == 1
    assert err == "1 task shown and more exist; use --limit\n"


def test_serve_refuses_an_empty_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--token "$UNSET"`` served without a token (or with $TASKLOOM_TOKEN's instead)."""
    for env in ("", "from-the-environment"):
        monkeypatch.setenv("TASKLOOM_TOKEN", env)
        code, out, err = run(capsys, "serve", "--token", "", "--port", "0")
        assert code == 1 and out == ""
        assert err == "Error: the token must not be blank or start or end with spaces\n", err


def test_serve_refuses_an_empty_host(capsys: pytest.CaptureFixture[str]) -> None:
    """``--host ""`` bound every interface and printed the address http://:8765/."""
    for host in ("", " "):
        code, out, err = run(capsys, "serve", "--host", host, "--token", "t0ken", "--port", "0")
        assert code == 1 and out == ""
        assert err == "Error: --host must not be empty (0.0.0.0 binds every interface)\n", err


def test_serve_names_its_poll_as_tasks_work_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tasks work --poll`` and ``serve --poll`` both take seconds between looks; serve's was
    ``--poll-s`` only, which it still accepts. A bad value is refused before a file is made."""
    db = f"sqlite:///{tmp_path / 'p.db'}"
    for flag in ("--poll", "--poll-s"):
        code, out, err = run(capsys, "serve", flag, "0", "--port", "8799", "--db", db)
        assert code == 1 and out == ""
        assert err == "Error: --poll must be more than 0 and at most 86400\n", err
    assert not (tmp_path / "p.db").exists()


def test_mcp_refuses_an_empty_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--agent ""`` started a server whose every queue tool then failed for want of one."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    code, out, err = run(capsys, "mcp", "--thread", "t", "--agent", " ", "--db", db)
    assert code == 1 and out == ""
    assert err == "Error: --agent, when given, must be non-empty text\n", err


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["tasks", "next"], "--agent must be"),
        (["tasks", "work", "--until-empty"], "--agent must be"),
        (["hook", "prompt"], "--agent must be"),
        (["hook", "session-start"], "--agent must be"),
        (["tasks", "ready"], "--agent, when given, must be"),
    ],
)
def test_a_blank_agent_is_named_by_its_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], said: str
) -> None:
    """A blank --agent was "an agent id to claim for is required", after `tasks work` had
    announced its database."""
    db = f"sqlite:///{tmp_path / 'q.db'}"
    args = [*command, "--agent", " ", "--db", db]
    code, out, err = run(capsys, *args, *(["--", "true"] if "work" in command else []))
    assert (code, out, err) == (1, "", f"Error: {said} non-empty text\n")
