"""The suffix stripper that lets a question's word meet a field's name or value."""

from __future__ import annotations

import json

import pytest

from taskloom.client import Taskloom
from taskloom.guard.stems import stem
from tests.test_guard_text_records import ask


@pytest.mark.parametrize(
    ("word", "other"),
    [
        ("entries", "entry"),
        ("policies", "policy"),
        ("copies", "copy"),
        ("applied", "apply"),
        ("retried", "retry"),
        ("movies", "movie"),
        ("failed", "failure"),
        ("skipped", "skip"),
    ],
)
def test_inflected_forms_share_a_stem(word: str, other: str) -> None:
    """ "entries" stemmed to ``entri`` and "entry" to ``entry``: an ``-ies`` plural never
    met its singular."""
    assert stem(word) == stem(other)


def test_ies_plurals_read_as_y() -> None:
    assert stem("entries") == "entry"
    assert stem("policies") == "policy"
    assert stem("ties") == "tie"  # too short a stem: left whole
    assert stem("classes") == "class"


def test_a_retried_job_is_counted_by_its_retry_field(tl: Taskloom) -> None:
    """A field ``retry`` set on some records is the condition "retried" sets."""
    jobs = [
        {"job": f"j-{i}", "queue": "mail", **({"retry": {"at": i}} if i % 4 == 0 else {})}
        for i in range(120)
    ]
    (count,) = ask(tl, json.dumps(jobs), "how many jobs were retried?")
    assert "Exact count: 30 " in count
