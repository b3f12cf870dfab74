"""A small suffix stripper, so a question's verb or noun meets a field's name.

"failed", "fails", "failing" and "failure" all read as ``fail``; "skipped" and "skips" as
``skip``; "errored" and "errors" as ``error``; "entries" as ``entry`` and "applied" as
``apply``. One inflectional suffix is stripped (``ures``, ``ure``, ``ings``, ``ing``, ``ies``
and ``ied`` to ``y``, ``ed``, ``es`` after a sibilant, ``s`` but not ``ss``), then a doubled
final consonant is undoubled, a final ``ie`` read as ``y`` ("movie" as "movies" is) and a
final ``e`` dropped, leaving a stem of at least three letters. Both sides of a comparison
are stemmed alike, so a stem need not be a word.
"""

from __future__ import annotations

_SUFFIXES = ("ures", "ure", "ings", "ing", "ies", "ied", "ed", "es", "s")
_TO_Y = ("ies", "ied")
_SIBILANT = ("s", "x", "z", "ch", "sh")
_KEEP_DOUBLE = frozenset("aeioulsz")


def stem(word: str) -> str:
    """The stem of ``word`` (lower case); a word of three letters or fewer is itself."""
    w = word.lower()
    for suffix in _SUFFIXES:
        rest = w[: -len(suffix)]
        if not w.endswith(suffix) or len(rest) < 3:
            continue
        if suffix == "s" and rest.endswith(("s", "u", "i")):
            continue
        if suffix == "es" and not rest.endswith(_SIBILANT):
            continue
        w = rest + "y" if suffix in _TO_Y else rest
        break
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in _KEEP_DOUBLE:
        w = w[:-1]
    if len(w) >= 4 and w.endswith("ie"):
        w = w[:-2] + "y"
    if len(w) >= 4 and w.endswith("e"):
        w = w[:-1]
    return w
