"""Text others wrote, shown safely: as data inside our own tags (a model's context) and on a
person's terminal."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

UNSHOWN = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064"
    r"\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
"""Control characters, bidi controls, and what is drawn as nothing: zero-width spaces, the
soft hyphen, the byte order mark and Unicode tag characters (which spell a hidden text a
model reads and a person's terminal does not show)."""


def plural(n: int, noun: str) -> str:
    """``noun`` as ``n`` of it reads: plural unless ``n`` is 1 (``es`` added after a
    sibilant, as in ``processes``, else ``s``)."""
    if n == 1:
        return noun
    return f"{noun}es" if noun.endswith(("s", "x", "z", "ch", "sh")) else f"{noun}s"


def counted(n: int, noun: str) -> str:
    """``n`` with thousands separators and ``noun``, plural unless ``n`` is 1: ``1 event``,
    ``10,000 events``."""
    return f"{n:,} {plural(n, noun)}"


def chain(names: Sequence[str], joiner: str, *, ends: int = 4) -> str:
    """``names`` joined by ``joiner``. A long chain keeps its first and last ``ends`` names
    and says how many it leaves out between them, so a cycle through thousands of tasks is
    still one readable line."""
    if len(names) <= 2 * ends + 1:
        return joiner.join(names)
    hidden = len(names) - 2 * ends
    return joiner.join([*names[:ends], f"… {hidden:,} more …", *names[-ends:]])


MAX_SHOWN_ID = 60
"""How many characters of an id an error text repeats before "…"."""


def shown_id(value: str) -> str:
    """An id as an error text repeats it: whole up to :data:`MAX_SHOWN_ID` characters, else
    its first ones and "…". A caller may send an id kilobytes long (a URL path, a model's
    argument); an error saying it was not found need not carry it all back."""
    return value if len(value) <= MAX_SHOWN_ID else value[:MAX_SHOWN_ID] + "…"


def escape_xml(text: str, *, quote: bool = False) -> str:
    """``&``, ``<`` and ``>`` escaped (and quotes, for an attribute's value): text others
    wrote, framed as data inside our own tags. ``html.escape`` does it without the import
    cost of ``xml.sax.saxutils``, which every command and hook would pay."""
    return html.escape(text, quote=quote)


def terminal_safe(text: str) -> str:
    """``text`` with control characters (other than newline and tab) shown as ``\\xNN``, and
    bidirectional controls and invisible characters as ``\\uNNNN``: text written by agents
    or other people must not move the cursor, recolour or retitle the reader's terminal (ANSI
    escapes), show its characters in another order than they are stored, nor hide any."""
    return UNSHOWN.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
