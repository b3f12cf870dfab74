"""``sudo taskloom init`` in a user's project leaves files the user owns."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from taskloom.cli import main
from tests.conftest import subprocess_env

USER, GROUP = 4321, 4322
"""An owner and group other than root's (root can give a file to any id, known or not)."""


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving files away needs root"
)
def test_run_as_root_files_keep_their_owner_and_new_ones_take_their_folder_s(
    tmp_path: Path,
) -> None:
    """Every file written was left owned by root, and ``.claude/`` too: the user could no
    longer edit their own settings."""
    project = tmp_path / "proj"
    project.mkdir()
    os.chown(project, USER, GROUP)
    mcp = project / ".mcp.json"
    mcp.write_text('{"mcpServers": {}}\n')
    mcp.chmod(0o640)
    os.chown(mcp, USER + 1, GROUP + 1)
    run = subprocess.run(
        [sys.executable, "-m", "taskloom", "init", "claude-code", "--thread", "t"],
        cwd=project,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    kept = mcp.stat()
    assert (kept.st_uid, kept.st_gid, stat.S_IMODE(kept.st_mode)) == (USER + 1, GROUP + 1, 0o640)
    for made in (project / ".claude", project / ".claude" / "settings.json"):
        assert (made.stat().st_uid, made.stat().st_gid) == (USER, GROUP), made


def test_other_users_give_no_file_away(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not root, taskloom tries no chown: it could only fail."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("chown tried")

    monkeypatch.setattr(os, "geteuid", lambda: USER)
    monkeypatch.setattr(os, "chown", refuse)
    monkeypatch.setattr(os, "fchown", refuse)
    (tmp_path / ".mcp.json").write_text("{}")
    assert main(["init", "claude-code", "--thread", "t", "--project", str(tmp_path)]) == 0
    assert (tmp_path / ".claude" / "settings.json").is_file()
