"""One key for a card title however a model might write it again.

The approval gate (:mod:`taskloom.domain.approval`) protects the title of a plan waiting for a
person: a model must not bring it back as a done card. ``todo_write`` has no ids, so the title
is the plan's identity there, and spacing, case, compatibility forms, invisible characters,
accents, look-alike letters and trailing punctuation must not make it another one. The key is
only compared, never shown, so it may merge titles a reader would tell apart ("Déploy" and
"Deploy"): a false match costs the model a message, a missed one lets a plan through.
"""

from __future__ import annotations

import unicodedata

_DRAWN_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters and symbols drawn as blank space (Hangul fillers, the blank Braille pattern), read
as a space. The characters drawn as nothing are format characters (category Cf: zero-width
spaces, bidi and tag characters, the soft hyphen) and marks (Mn, Me: accents, variation
selectors), dropped."""

_LOOK_ALIKES = str.maketrans(
    "АВЕКМНОРСТХУЅІЈԚԜҮҺаеорсухѕіјԁһԛԝүкΑΒΕΖΗΙΚΜΝΟΡΤΥΧοαινκρυχϲϹıɑɡɩӀӏI",
    "ABEKMHOPCTXYSlJQWYHaeopcyxsijdhqwykABEZHlKMNOPTYXoaivkpuxcCiagilll",
)
"""Cyrillic and Greek letters drawn like Latin ones, by case (a Greek capital Nu is an N, its
small letter a v), dotless or single-storey Latin forms, and the strokes drawn like a small L
(a capital I, the palochka): mapped before case folding."""

_TRAILING = " .,;:!?…·-–—_*~`'\""


def title_key(title: str) -> str:
    """A title as a model might send it again: spacing, case, compatibility forms (a
    fullwidth letter), invisible characters (a zero-width space, a tag character), accents,
    Cyrillic and Greek look-alike letters and trailing punctuation do not make another card."""
    if not title.isascii():
        # Look-alikes before the decomposition too: it turns a lunate sigma (a c) into a ς.
        decomposed = unicodedata.normalize("NFKD", title.translate(_LOOK_ALIKES))
        title = "".join(" " if c in _DRAWN_BLANK else c for c in decomposed if _shown(c))
    text = title.translate(_LOOK_ALIKES)
    return " ".join(text.split()).casefold().rstrip(_TRAILING)


def _shown(char: str) -> bool:
    return unicodedata.category(char) not in ("Cf", "Mn", "Me")
