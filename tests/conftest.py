"""Shared fixtures. Every store test runs against each backend in ``BACKENDS``."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import taskloom
from taskloom.client import Taskloom


class FakeClock:
    """A clock tests move by hand, so timestamps and budgets are exact."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'taskloom.db'}"


@pytest.fixture
def tl(db_url: str) -> Iterator[Taskloom]:
    with taskloom.connect(db_url) as t:
        yield t


@pytest.fixture
def tl_fixed(db_url: str, clock: FakeClock) -> Iterator[Taskloom]:
    """A Taskloom with a hand-moved clock and predictable ids (id-1, id-2, …)."""
    counter = itertools.count(1)
    with taskloom.connect(db_url, clock=clock, new_id=lambda: f"id-{next(counter)}") as t:
        yield t


@pytest.fixture
def make_tl(tmp_path: Path) -> Iterator[Callable[..., Taskloom]]:
    opened: list[Taskloom] = []

    def make(name: str = "taskloom.db", **kwargs: object) -> Taskloom:
        t = taskloom.connect(f"sqlite:///{tmp_path / name}", **kwargs)  # type: ignore[arg-type]
        opened.append(t)
        return t

    yield make
    for t in opened:
        t.close()


@pytest.fixture(autouse=True)
def _no_ambient_db(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never touch a real ./.taskloom or a developer's TASKLOOM_URL."""
    monkeypatch.delenv("TASKLOOM_URL", raising=False)
    monkeypatch.chdir(tmp_path)


SRC = Path(__file__).resolve().parents[1] / "src"


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("TASKLOOM_URL", None)
    return env
