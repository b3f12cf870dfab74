"""The title key of the approval gate: a plan waiting for a person cannot come back as another
card under its title written some other way."""

from __future__ import annotations

import pytest

from taskloom import ToolContext
from taskloom.client import Taskloom
from taskloom.domain.titles import title_key

CTX = ToolContext(thread_id="t")

SAME_TITLE = [
    "deploy ALL",
    "Deploy all.",
    "Deploy\u200b all",
    "Deploy all\U000e0020",  # a tag character
    "Deploy all\U000e0100",  # a supplementary variation selector
    "Deploy\u2800all",  # the blank Braille pattern, drawn as a space
    "Deploy\u3164all",  # a Hangul filler
    "Deploy\U0001d173 all",  # an invisible musical formatting character
    "Dep\u04cfoy all",  # a Cyrillic palochka for the l
    "DepIoy all",  # a capital I for the l
    "D\u0435ploy \u0430ll",  # Cyrillic e and a
    "D\u00e9ploy \u00e4ll",  # accents
    "\uff24\uff45\uff50\uff4c\uff4f\uff59 all",  # fullwidth
]


@pytest.mark.parametrize("title", SAME_TITLE)
def test_a_title_written_another_way_is_the_same_title(title: str) -> None:
    assert title_key(title) == title_key("Deploy all")


@pytest.mark.parametrize(
    ("a", "b"), [("\u0451", "\u00eb"), ("\u04d3", "\u00e4"), ("\u03f2at", "cat")]
)
def test_accented_and_lunate_look_alikes_match(a: str, b: str) -> None:
    """Precomposed Cyrillic letters with accents and the lunate sigma were never decomposed."""
    assert title_key(a) == title_key(b)


@pytest.mark.parametrize("other", ["Deploy", "Deploy all services", "Redeploy all"])
def test_other_titles_stay_other(other: str) -> None:
    assert title_key(other) != title_key("Deploy all")


@pytest.mark.parametrize("title", SAME_TITLE)
def test_a_withdrawn_plan_cannot_come_back_done_under_a_look_alike_title(
    tl: Taskloom, title: str
) -> None:
    add = {"op": "add", "content": "Deploy all", "status": "awaiting_approval"}
    card = tl.tools.dispatch("todo", {**add, "approval_mode": "required"}, CTX).data["card"]
    assert not tl.tools.dispatch("todo", {"op": "remove", "id": card["id"]}, CTX).is_error
    back = tl.tools.dispatch("todo", {"op": "add", "content": title, "status": "done"}, CTX)
    assert back.is_error, back.content
    assert tl.board("t").list()["cards"] == []
