"""A dedup key is trimmed of the spaces around it, as a group key is, wherever it enters:
``" k "`` and ``"k"`` are one key."""

from __future__ import annotations

import json

import pytest

from taskloom.cli import main
from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput


def test_a_key_with_spaces_around_it_dedups_with_the_bare_key(tl: Taskloom) -> None:
    q = tl.queue
    first, added = q.add("first", dedup_key=" k ")
    assert added and first.dedup_key == "k"
    again, added = q.add("again", dedup_key="k")
    assert not added and again.id == first.id
    (answer,) = q.add_many([{"title": "batch", "dedup_key": "\tk  "}])
    assert (answer[0].id, answer[1]) == (first.id, False)


def test_a_batch_repeating_a_key_with_and_without_spaces_adds_one_task(tl: Taskloom) -> None:
    (a, added_a), (b, added_b) = tl.queue.add_many(
        [{"title": "a", "dedup_key": "k"}, {"title": "b", "dedup_key": " k"}]
    )
    assert (added_a, added_b) == (True, False) and a.id == b.id
    assert [t.title for t in tl.queue.list()] == ["a"]


def test_a_dependency_by_a_key_with_spaces_waits_for_the_task_holding_the_bare_key(
    tl: Taskloom,
) -> None:
    q = tl.queue
    after, _ = q.add("after", depends_on_keys=[" build ", "build"])
    assert after.depends_on_keys == ("build",)
    build, _ = q.add("build", dedup_key="build ")
    claimed = q.claim("w")
    assert claimed is not None and claimed.id == build.id
    q.done(build.id, claimed.lease_token or "")
    nxt = q.claim("w")
    assert nxt is not None and nxt.id == after.id


def test_a_blank_key_is_still_refused(tl: Taskloom) -> None:
    with pytest.raises(InvalidInput, match="'dedup_key', when given, must not be blank"):
        tl.queue.add("t", dedup_key="  ")
    with pytest.raises(InvalidInput, match="depends_on_keys"):
        tl.queue.add("t", depends_on_keys=[" "])


def test_the_cli_trims_dedup_and_after_key(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    db = ("--db", db_url)
    assert main(["tasks", "add", "one", "--dedup", " nightly ", *db, "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one["added"] and one["dedup_key"] == "nightly"
    assert main(["tasks", "add", "two", "--dedup", "nightly", *db, "--json"]) == 0
    two = json.loads(capsys.readouterr().out)
    assert not two["added"] and two["id"] == one["id"]
    assert main(["tasks", "add", "three", "--after-key", " nightly", *db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["depends_on_keys"] == ["nightly"]
