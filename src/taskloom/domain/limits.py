"""How much a board holds: cards, fields, and the text of a card and of a whole board.

Every board operation returns the whole board into the model's context, and every change
stores it whole (a snapshot per change, in the board and in its event). Per-field limits alone
would let five cards of 100 steps of 64 KiB make a 97 MB board, returned on every op; the totals
here stop that while leaving a full board of short cards (1,000 cards, ~330 KB of markdown)
far below them. Sizes are counted once per card object and cached on it
(:meth:`~taskloom.domain.card.Card.text_size`), and a board's total is kept up to date from
each change (:mod:`taskloom.domain.index`), so checking a change costs what it changed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from taskloom.domain.common import storable_size
from taskloom.domain.errors import InvalidInput

MAX_CARDS = 1000
"""The most cards a board holds: every board operation returns the whole board into the
model's context, and every change stores it whole."""
MAX_TITLE_BYTES = 1024
MAX_FIELD_BYTES = 65_536
"""Each free-text field (objective, notes, a plan step…)."""
MAX_ITEMS = 100
"""Each list field (plan, acceptance criteria, evidence, allowed tools)."""
MAX_CARD_BYTES = 65_536
"""All of one card's text together (title, objective, plan, criteria, evidence, notes…)."""
MAX_BOARD_BYTES = 1_048_576
"""All the cards' text of a board together: the stored board holds it about twice (as cards
and as markdown), and so does each change's event."""


def storable(value: str, name: str, limit: int = MAX_FIELD_BYTES) -> str:
    """Refuse text neither backend can hold the same way, before it reaches a statement,
    and text over ``limit`` bytes."""
    if storable_size(value, name) > limit:
        raise InvalidInput(f"{name} is longer than {limit} bytes")
    return value


def storable_json(value: Any, name: str) -> None:
    """Host-supplied JSON such as ``source_metadata``, stored the same way by both backends:
    text keys, storable strings, finite numbers within 64 bits (NaN would be stored as null,
    and read back as NaN only by the process that wrote it), lists and objects."""
    if isinstance(value, str):
        storable(value, name)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInput(f"{name} keys must be text (got {type(key).__name__})")
            storable(key, name)
            storable_json(item, name)
    elif isinstance(value, list | tuple):
        for item in value:
            storable_json(item, name)
    elif isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"{name} holds {value}, which JSON cannot store")
    elif isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        raise InvalidInput(f"{name} holds an integer beyond 64 bits")
    elif value is not None and not isinstance(value, bool | int | float):
        raise InvalidInput(f"{name} holds a {type(value).__name__}, which is not JSON")


def check_card_count(count: int, current: int, finished: int) -> None:
    """Refuse a change that leaves ``count`` cards on a board of ``current`` cards, of which
    ``finished`` are done or rejected: more than a board holds (a board already over it may
    shrink). The refusal says how to make room."""
    if count <= max(MAX_CARDS, current):
        return
    room = f" ({finished} of its cards are done or rejected)" if finished else ""
    raise InvalidInput(
        f"a board holds at most {MAX_CARDS} cards; this change would leave {count}: remove"
        f" cards that are finished{room} or no longer needed, or merge small steps into one"
        " card, then try again"
    )


def check_card_size(title: str, size: int, before: int | None) -> None:
    """Refuse a change that makes a card (titled ``title``) hold ``size`` bytes of text, more
    than it may. A card already over the limit (``before``: its size before the change,
    stored before the limit existed) may still shrink or stay as it is."""
    if size > MAX_CARD_BYTES and (before is None or size > before):
        shown = title if len(title) <= 60 else title[:57] + "..."
        raise InvalidInput(
            f"card '{shown}' would hold {size} bytes of text, more than the"
            f" {MAX_CARD_BYTES} (64 KiB) a card may hold across its fields: shorten its"
            " notes, plan, acceptance criteria or evidence (keep long output in a file and"
            " cite its path), or split the work into several cards"
        )


def check_board_size(total: int, before: int) -> None:
    """Refuse a change that makes a board hold ``total`` bytes of card text, more than it
    may; one already over it (``before``) may still shrink."""
    if total > MAX_BOARD_BYTES and total > before:
        raise InvalidInput(
            f"the board would hold {total} bytes of card text, more than the"
            f" {MAX_BOARD_BYTES} (1 MiB) a board may hold (every operation returns the whole"
            " board): shorten long notes or evidence, or remove cards that are done"
        )
