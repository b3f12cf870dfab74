"""One key for a card title however a model might write it again.

The approval gate (:mod:`taskloom.domain.approval`) protects the title of a plan waiting for a
person: a model must not bring it back as a done card. ``todo_write`` has no ids, so the title
is the plan's identity there, and spacing, case, compatibility forms, invisible characters,
accents, look-alike letters, list markers and surrounding punctuation must not make it another
one. The key is only compared, never shown, so it may merge titles a reader would tell apart
("Déploy" and "Deploy"): a false match costs the model a message, a missed one lets a plan
through. Marks that are letters' own parts in other scripts (a kana's dakuten, a Thai tone
mark, a Devanagari vowel sign) stay: dropped, they would make "パス" (path) "バス" (bus).
"""

from __future__ import annotations

import re
import unicodedata

_DRAWN_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters and symbols drawn as blank space (Hangul fillers, the blank Braille pattern), read
as a space. The characters drawn as nothing are format characters (category Cf: zero-width
spaces, bidi and tag characters, the soft hyphen), dropped, and so are variation selectors and
the accents of Latin, Greek and Cyrillic letters (marks, Mn and Me)."""

_LOOK_ALIKES = str.maketrans(
    {
        "а": "a",
        "е": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "ѕ": "s",
        "і": "l",
        "ј": "j",
        "ԁ": "d",
        "һ": "h",
        "ԛ": "q",
        "ԝ": "w",
        "ү": "y",
        "к": "k",
        "ӏ": "l",
        "в": "b",
        "м": "m",
        "н": "h",
        "т": "t",
        "ԍ": "g",
        "ɑ": "a",
        "ɡ": "g",
        "ı": "l",
        "ɩ": "l",
        "ι": "l",
        "α": "a",
        "β": "b",
        "ε": "e",
        "ζ": "z",
        "η": "h",
        "κ": "k",
        "μ": "m",
        "ν": "n",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "u",
        "χ": "x",
        "ϲ": "c",
        "σ": "c",
        "օ": "o",
        "ս": "u",
        "հ": "h",
        "ո": "n",
        "ց": "g",
        "զ": "q",
        "ᴀ": "a",
        "ʙ": "b",
        "ᴄ": "c",
        "ᴅ": "d",
        "ᴇ": "e",
        "ɢ": "g",
        "ʜ": "h",
        "ɪ": "l",
        "ᴊ": "j",
        "ᴋ": "k",
        "ʟ": "l",
        "ᴍ": "m",
        "ɴ": "n",
        "ᴏ": "o",
        "ᴘ": "p",
        "ʀ": "r",
        "ꜱ": "s",
        "ᴛ": "t",
        "ᴜ": "u",
        "ᴠ": "v",
        "ᴡ": "w",
        "ʏ": "y",
        "ᴢ": "z",
        "ꓮ": "a",
        "ꓐ": "b",
        "ꓚ": "c",
        "ꓓ": "d",
        "ꓰ": "e",
        "ꓝ": "f",
        "ꓖ": "g",
        "ꓧ": "h",
        "ꓲ": "l",
        "ꓙ": "j",
        "ꓗ": "k",
        "ꓡ": "l",
        "ꓟ": "m",
        "ꓠ": "n",
        "ꓳ": "o",
        "ꓑ": "p",
        "ꓣ": "r",
        "ꓢ": "s",
        "ꓔ": "t",
        "ꓴ": "u",
        "ꓦ": "v",
        "ꓪ": "w",
        "ꓫ": "x",
        "ꓬ": "y",
        "ꓜ": "z",
        "Ꭺ": "a",
        "Ᏼ": "b",
        "Ꮯ": "c",
        "Ꭰ": "d",
        "Ꭼ": "e",
        "Ꮐ": "g",
        "Ꮋ": "h",
        "Ꭵ": "l",
        "Ꭻ": "j",
        "Ꮶ": "k",
        "Ꮮ": "l",
        "Ꮇ": "m",
        "Ꮎ": "o",
        "Ꮲ": "p",
        "Ꮢ": "r",
        "Ꮪ": "s",
        "Ꭲ": "t",
        "Ꮩ": "v",
        "Ꮃ": "w",
        "Ꮖ": "y",
        "Ꮍ": "y",
        "Ꭹ": "y",
        "Ꮓ": "z",
        "‐": "-",
        "‑": "-",
        "‒": "-",
        "–": "-",
        "—": "-",
        "―": "-",
        "−": "-",
    }
)
"""Letters drawn like Latin ones (Cyrillic, Greek, Armenian, Lisu, Cherokee, Latin small
capitals), as case folding leaves them (a Cyrillic or Greek capital folds to its small letter,
so the small one maps where the capital looks like: a Cyrillic н to h, as Н is an H), and
every dash to a hyphen. Applied after folding, so "Install" and
"install" keep one key; an ``i`` becomes an ``l``, as a capital I is drawn like one."""

_ACCENTED_SCRIPTS = ((0x0000, 0x0250), (0x0370, 0x0530), (0x1E00, 0x2000))
"""Latin, Greek and Cyrillic: the scripts whose marks are accents a model may add or drop."""

_MARKER = re.compile(r"(?:\d{1,3}[.)]|\[[ x✓✔?~!-]?\])\s+")
"""A list marker at a title's start: ``1.``, ``2)``, a checkbox."""


_CASED_LOOK_ALIKES = str.maketrans(
    {"ν": "v", "Ν": "n", "η": "n", "Η": "h", "υ": "u", "Υ": "y", "п": "n", "ѵ": "v", "Ѵ": "v"}
)
"""Letters whose small and capital forms are drawn like different Latin letters (a Greek ν
like a v, its capital Ν like an N; η like an n, Η like an H; Υ like a Y), read before case
folding would make them one: otherwise "Remoνe old νolumes" would pass for another plan than
"Remove old volumes". With a Cyrillic п (an n) and izhitsa (a v), which folding leaves alone."""
_LATIN = re.compile(r"[A-Za-z]")


def _unmix(text: str) -> str:
    """``text`` with :data:`_CASED_LOOK_ALIKES` read in the words that mix them with Latin
    letters, the look-alike's trick; a Greek word keeps one key in small and capital letters
    ("Ενημέρωση", "ΕΝΗΜΕΡΩΣΗ")."""
    return " ".join(
        word.translate(_CASED_LOOK_ALIKES) if _LATIN.search(word) else word
        for word in text.split(" ")
    )


def title_key(title: str) -> str:
    """A title as a model might send it again: spacing, case, compatibility forms (a
    fullwidth letter), invisible characters (a zero-width space, a tag character), accents,
    Cyrillic and Greek look-alike letters, dashes, list markers and surrounding punctuation
    do not make another card."""
    text = title.casefold()
    if not text.isascii():  # decomposed first, so an accented ή is an η to the cased table
        text = _unmix(unicodedata.normalize("NFKD", title)).casefold()
        text = unicodedata.normalize("NFC", _visible(unicodedata.normalize("NFKD", text)))
        text = text.casefold()  # a compatibility form may decompose to a capital (ℌ to H)
    text = " ".join(text.translate(_LOOK_ALIKES).replace("i", "l").split())
    while True:  # "✅ 1. [x] «Deploy»": markers and punctuation in any order
        trimmed = _trim(text)
        marker = _MARKER.match(trimmed)
        if marker:
            trimmed = trimmed[marker.end() :]
        if trimmed == text or not trimmed:
            return trimmed or text
        text = trimmed


def _trim(text: str) -> str:
    """``text`` without punctuation, symbols (a bullet, quotes, an emoji) and spaces at either
    end; marks stay (a Devanagari vowel sign ends a word)."""
    start, end = 0, len(text)
    while start < end and text[start] != "[" and unicodedata.category(text[start])[0] in "PSZ":
        start += 1  # a "[" may open a checkbox, a list marker
    while end > start and unicodedata.category(text[end - 1])[0] in "PSZ":
        end -= 1
    return text[start:end]


def _visible(text: str) -> str:
    """``text`` (decomposed) without what is drawn as nothing, blank letters as spaces."""
    kept: list[str] = []
    for char in text:
        category = unicodedata.category(char)
        if category == "Cf" or (category in ("Mn", "Me") and _accent_on(kept, char)):
            continue
        kept.append(" " if char in _DRAWN_BLANK else char)
    return "".join(kept)


def _accent_on(kept: list[str], mark: str) -> bool:
    """Whether ``mark`` is dropped: a variation selector or a combining grapheme joiner
    anywhere, another mark when it sits on a Latin, Greek or Cyrillic letter."""
    code = ord(mark)
    if (
        0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
        or code in (0x034F, 0x180B, 0x180C, 0x180D)
    ):
        return True
    base = ord(kept[-1]) if kept else 0
    return any(low <= base < high for low, high in _ACCENTED_SCRIPTS)
