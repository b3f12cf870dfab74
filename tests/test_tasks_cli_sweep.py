"""``taskloom tasks …`` as a demanding user drives it from a shell and from scripts."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import taskloom
from tests.conftest import subprocess_env

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
