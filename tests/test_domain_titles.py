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
    "DEPLOY ALL",  # capitals map where their small letters do: "Install" was not "install"
    "- Deploy all",
    "1. Deploy all",
    "[x] Deploy all",
    "\u2705 Deploy all \U0001f680",
    "\u00abDeploy all\u00bb",
    "Dep\u0399oy all",  # a Greek capital iota for the l
    "\ua4d3\ua4f0\ua4d1\ua4e1\ua4f3\ua4ec \ua4ee\ua4e1\ua4e1",  # Lisu capitals
    "\u13a0\u13ac\u13e2\u13de\u13be\u13bd all",  # Cherokee
    "Depl\u0585y all",  # an Armenian o
    "\u1d05eploy all",  # a Latin small capital D
    "[?] Deploy all",
    "[~] Deploy all",
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


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "\u0423\u0434\u0430\u043b\u0438\u0442\u044c \u0431\u0430\u0437\u0443",
            "\u0423\u0414\u0410\u041b\u0418\u0422\u042c \u0411\u0410\u0417\u0423",
        ),
        (
            "\u0395\u03bd\u03b7\u03bc\u03ad\u03c1\u03c9\u03c3\u03b7",
            "\u0395\u039d\u0397\u039c\u0395\u03a1\u03a9\u03a3\u0397",
        ),
        ("prod-db", "prod\u2013db"),
    ],
)
def test_case_and_dashes_never_make_another_title(a: str, b: str) -> None:
    """Cyrillic and Greek capitals were mapped to Latin, their small letters not: a model
    finished a waiting plan by sending its title in capitals."""
    assert title_key(a) == title_key(b)


@pytest.mark.parametrize(
    "spoof",
    [
        "Remo\u03bde old \u03bdolumes",  # a Greek small nu, drawn like a v
        "Remove old volumes".replace("v", "\u0475"),  # Cyrillic izhitsa
        "REMO\u0475E OLD \u0474OLUMES",
    ],
)
def test_letters_whose_small_and_capital_forms_look_like_two_latin_ones(spoof: str) -> None:
    """One map could not hold both: a Greek ν was read as the N its capital looks like, and
    "Remoνe old νolumes" sent as completed dropped the waiting "Remove old volumes"."""
    assert title_key(spoof) == title_key("Remove old volumes")
    assert title_key("\u03a5ES") == title_key("YES") and title_key("\u043fame") == title_key("name")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "\u30d1\u30b9\u8a2d\u5b9a\u3092\u5909\u66f4",
            "\u30d0\u30b9\u8a2d\u5b9a\u3092\u5909\u66f4",
        ),
        (
            "\u0e0b\u0e37\u0e49\u0e2d\u0e02\u0e49\u0e32\u0e27",
            "\u0e0b\u0e37\u0e49\u0e2d\u0e02\u0e32\u0e27",
        ),
        (
            "\u092a\u0941\u0932 \u0915\u0940 \u091c\u093e\u0901\u091a",
            "\u092a\u0932 \u0915\u0940 \u091c\u093e\u0901\u091a",
        ),
    ],
)
def test_marks_that_are_part_of_a_letter_keep_titles_apart(a: str, b: str) -> None:
    """Every mark was dropped: "\u30d1\u30b9" (path) was "\u30d0\u30b9" (bus), and a Thai
    tone mark or a Devanagari vowel sign made no difference."""
    assert title_key(a) != title_key(b)
