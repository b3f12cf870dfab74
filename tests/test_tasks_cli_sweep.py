"""``taskloom tasks …`` as a demanding user drives it from a shell and from scripts."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import taskloom
from taskloom.cli import main
from tests.conftest import subprocess_env


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


FOLLOW_UP = textwrap.dedent(
    """
    import json, os, subprocess, sys
    task = json.load(sys.stdin)
    if task["title"] != "parent":
        sys.exit(0)
    os.chdir(sys.argv[1])  # a folder of its own, with no .taskloom/ in it or above
    subprocess.run(
        [sys.executable, "-m", "taskloom", "tasks", "add", "follow-up of " + task["title"],
         "--after", os.environ["TASKLOOM_TASK_ID"]],
        check=True, stdout=subprocess.DEVNULL,
    )
    """
)


def test_a_command_run_by_work_acts_on_the_workers_database(db_url: str, tmp_path: Path) -> None:
    """The worker's ``--db`` reaches the command as ``$TASKLOOM_URL``: the follow-up task it
    adds lands in the queue its task came from, not in a database made where it runs."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    script = tmp_path / "follow_up.py"
    script.write_text(FOLLOW_UP)
    # A SQLite URL relative to the worker's folder: the command, run elsewhere, still finds it.
    url = "sqlite:///work.db" if db_url.startswith("sqlite") else db_url
    with taskloom.connect(db_url if url == db_url else f"sqlite:///{project / 'work.db'}") as tl:
        parent, _ = tl.queue.add("parent")
        worker = [sys.executable, "-m", "taskloom", "tasks", "work", "--db", url, "--agent", "w"]
        done = subprocess.run(
            [*worker, "--until-empty", "--", sys.executable, str(script), str(elsewhere)],
            cwd=project,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert tl.queue.get(parent.id).status == "completed"
        follow_up = [t for t in tl.queue.list() if t.title == "follow-up of parent"]
        assert [t.depends_on for t in follow_up] == [(parent.id,)]
    assert not (elsewhere / ".taskloom").exists()


def pretty(*tasks: dict[str, object]) -> str:
    """Tasks as ``jq`` prints them by default: one object after another, each over lines."""
    return "".join(json.dumps(task, indent=2) + "\n" for task in tasks)


def test_a_file_of_objects_over_several_lines_is_read_as_jq_prints_them(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``jq '.tasks[]' plan.json | taskloom tasks add --from -``: each object spans lines."""
    plan = tmp_path / "plan.json"
    build = {"ref": "build", "title": "Build", "group_key": "ci"}
    plan.write_text(pretty(build, {"ref": "test", "title": "Test", "after": ["build"]}))
    code, out, err = run(capsys, "tasks", "add", "--from", str(plan), "--db", db_url, "--json")
    assert code == 0, err
    added = json.loads(out)
    assert [(t["title"], t["added"]) for t in added] == [("Build", True), ("Test", True)]
    assert added[1]["depends_on"] == [added[0]["id"]]
    # A bad task is named by the line it starts on (each object here takes 5 lines).
    plan.write_text(pretty(build, {"title": "", "kind": "ci"}))
    code, _, err = run(capsys, "tasks", "add-many", str(plan), "--db", db_url)
    assert code == 1 and "plan.json: line 6: task title must not be empty" in err
    # Bad JSON is named by the line and column it is at; one never closed, by where it opens.
    plan.write_text(pretty(build) + '{\n  "title": "x",\n}\n')
    code, _, err = run(capsys, "tasks", "add-many", str(plan), "--db", db_url)
    assert code == 1 and "line 8 is not valid JSON: Expecting property name" in err
    assert "(at column 1)" in err
    plan.write_text(pretty(build) + '{\n  "title": "x"\n')
    code, _, err = run(capsys, "tasks", "add-many", str(plan), "--db", db_url)
    assert code == 1 and "line 6 is not valid JSON: Expecting ',' delimiter" in err
    assert "(at the end of the text)" in err
    # A JSON line cut short before a whole one is that line's fault, named as before.
    plan.write_text('{"title": "a"\n{"title": "b"}\n')
    code, _, err = run(capsys, "tasks", "add-many", str(plan), "--db", db_url)
    assert code == 1 and "line 1 is not valid JSON: Expecting ',' delimiter (at column 14)" in err
    with taskloom.connect(db_url) as tl:  # the refused files added nothing
        assert [t.title for t in tl.queue.list()] == ["Build", "Test"]
    # The queue's cap (10,000) counts tasks, not lines: 3,400 tasks over 10,200 lines fit.
    plan.write_text(pretty(*({"title": f"t{n}"} for n in range(3400))))
    assert len(plan.read_text().splitlines()) == 10200
    code, out, err = run(capsys, "tasks", "add-many", str(plan), "--db", db_url)
    assert code == 0 and out.endswith("3,400 added, 0 already queued\n"), err


def test_ready_json_cut_by_limit_says_so_on_stderr(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ``tasks list --json`` does: the JSON stays whole, and stderr tells a script that
    --limit left tasks out, of either list."""
    with taskloom.connect(db_url) as tl:
        first, _ = tl.queue.add("first")
        for n in range(3):
            tl.queue.add(f"free {n}")
            tl.queue.add(f"after {n}", depends_on=[first.id])
    code, out, err = run(
        capsys, "tasks", "ready", "--explain", "--json", "--limit", "2", "--db", db_url
    )
    found = json.loads(out)
    assert code == 0 and found["count"] == 4
    assert len(found["ready"]) == 2 and len(found["waiting"]) == 2
    assert "2 of 4 ready tasks shown; use --limit" in err
    assert "2 tasks not ready shown and more exist; use --limit" in err
    code, out, err = run(capsys, "tasks", "ready", "--explain", "--json", "--db", db_url)
    assert code == 0 and len(json.loads(out)["waiting"]) == 3 and err == ""


def test_a_task_named_by_id_and_by_its_key_is_waited_on_once(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plan's task after another by its ref and by the dedup key it holds waits on one
    task: the explanation names it once, in text and JSON alike."""
    plan = tmp_path / "plan.jsonl"
    plan.write_text(
        '{"ref": "build", "title": "Build", "dedup_key": "build:42"}\n'
        '{"title": "Deploy", "after": ["build"], "depends_on_keys": ["build:42"]}\n'
    )
    code, out, _ = run(capsys, "tasks", "add", "--from", str(plan), "--db", db_url, "--json")
    build, deploy = (task["id"] for task in json.loads(out))
    assert code == 0
    code, out, _ = run(capsys, "tasks", "ready", "--explain", "--db", db_url)
    assert code == 0 and f"    waiting on task {build} (ready)\n" in out
    code, out, _ = run(capsys, "tasks", "show", deploy, "--db", db_url, "--json")
    assert [(r["text"], r["tasks"]) for r in json.loads(out)["why"]] == [
        (f"waiting on task {build} (ready)", [build])
    ]


def test_a_command_killed_by_sigkill_is_told_as_such(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command the out-of-memory killer ends dies of SIGKILL: the task's error says so, as
    it does for any other signal, not "exit 1"."""
    with taskloom.connect(sqlite_url) as tl:
        task, _ = tl.queue.add("eats memory", max_attempts=1)
        args = ("--db", sqlite_url, "--agent", "w", "--until-empty", "--")
        code = main(["tasks", "work", *args, "sh", "-c", "cat >/dev/null; kill -KILL $$"])
        out = capsys.readouterr().out
        assert code == 4 and "failed, dead (no attempts left): exit -9 (SIGKILL)" in out
        assert tl.queue.get(task.id).last_error == "exit -9 (SIGKILL)"
