"""scripts/screenshots.py overwrites the committed panel images; its arguments come first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "screenshots.py"


def images() -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (ROOT / "docs" / "img").glob("*.png")}


def test_help_and_a_bad_flag_leave_the_images_alone() -> None:
    before = images()
    shown = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert "Regenerate the panel screenshots in docs/img/" in shown.stdout
    wrong = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", "x"],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert wrong.returncode == 2 and "unrecognized arguments: --out x" in wrong.stderr
    assert images() == before
