"""One key for a card title however a model might write it again.

The approval gate (:mod:`taskloom.domain.approval`) protects the title of a plan waiting for a
person: a model must not bring it back as a done card. ``todo_write`` has no ids, so the title
is the plan's identity there, and spacing, case, compatibility forms, invisible characters,
look-alike letters and trailing punctuation must not make it another one.
"""

from __future__ import annotations

import re
import unicodedata

_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
"""Characters that show as nothing (zero-width, soft hyphen, bidi controls, variation
selectors, Hangul fillers): a title with one looks like the title without it."""


_LOOK_ALIKES = str.maketrans(
    "АВЕКМНОРСТХУЅІЈԚԜҮҺаеорсухѕіјԁһԛԝүкΑΒΕΖΗΙΚΜΝΟΡΤΥΧοαινκρυχıɑɡ",
    "ABEKMHOPCTXYSIJQWYHaeopcyxsijdhqwykABEZHIKMNOPTYXoaivkpuxiag",
)
"""Cyrillic and Greek letters drawn like Latin ones, by case (a Greek capital Nu is an N, its
small letter a v), and dotless or single-storey Latin forms: mapped before case folding."""


def title_key(title: str) -> str:
    """A title as a model might send it again: spacing, case, compatibility forms (a
    fullwidth letter), invisible characters (a zero-width space, a soft hyphen), Cyrillic and
    Greek look-alike letters and trailing punctuation do not make another card."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", title)).translate(_LOOK_ALIKES)
    return " ".join(text.split()).casefold().rstrip(_TRAILING)


_TRAILING = " .,;:!?…·-–—_*~`'\""
