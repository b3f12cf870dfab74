"""``make run`` seeds and serves the checkout's own ``./.taskloom/taskloom.db``, as the README
says, whatever ``$TASKLOOM_URL`` or a ``.taskloom/`` folder above the checkout would name."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import taskloom
from tests.conftest import subprocess_env
from tests.test_cli_discovery import free_port

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_seeds_and_serves_the_checkouts_database(tmp_path: Path) -> None:
    outer = tmp_path / "home"
    (outer / ".taskloom").mkdir(parents=True)  # a user's own database above the checkout
    checkout = outer / "checkout"
    checkout.mkdir()
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, checkout / name)
    bin_dir = checkout / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    launcher = bin_dir / "taskloom"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} -m taskloom "$@"\n')
    launcher.chmod(0o755)
    (checkout / ".venv" / ".installed-stamp").touch()  # installed: make goes straight to run
    elsewhere = tmp_path / "elsewhere.db"
    env = {**subprocess_env(), "TASKLOOM_URL": f"sqlite:///{elsewhere}"}
    make = subprocess.Popen(
        ["make", "run", f"PORT={free_port()}"],
        cwd=checkout,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert make.stdout is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("panel on" in x for x in lines):
            line = make.stdout.readline()
            if not line:
                break
            lines.append(line)
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=30)
    demo = checkout / ".taskloom" / "taskloom.db"
    assert any(line.startswith(f"database: sqlite:///{demo}") for line in lines), lines
    assert demo.exists() and not elsewhere.exists()
    assert list((outer / ".taskloom").iterdir()) == []
    with taskloom.connect(f"sqlite:///{demo}") as tl:
        assert tl.board("demo").list()["cards"]
