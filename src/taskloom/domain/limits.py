"""How much a board holds: cards, fields, and the text of a card and of a whole board.

Every board operation returns the whole board into the model's context, and every change
stores it whole (a snapshot per change, in the board and in its event). Per-field limits alone
let five cards of 100 steps of 64 KiB make a 97 MB board, returned on every op; the totals
here stop that while leaving a full board of short cards (1,000 cards, ~330 KB of markdown)
far below them. Sizes are counted once per card object and cached on it (:meth:`Card.text_size`),
so checking a 1,000-card board costs a sum, not a re-encode.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from taskloom.domain.common import storable_size
from taskloom.domain.errors import InvalidInput

if TYPE_CHECKING:
    from taskloom.domain.board import Card

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
    text keys, storable strings, finite numbers within 64 bits (NaN was stored as null, and
    read back as NaN only by the process that wrote it), lists and objects."""
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


def _utf8(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def text_size(card: Card) -> int:
    """The UTF-8 bytes of a card's text, every field together (timestamps, status and other
    fixed-size fields aside): what its stored JSON and its markdown grow with."""
    size = _utf8(card.id) + _utf8(card.title)
    for text in (
        card.objective,
        card.assigned_agent,
        card.notes,
        card.blocker,
        card.session_thread_id,
        card.active_form,
    ):
        if text:
            size += _utf8(text)
    for items in (card.plan, card.allowed_tools, card.acceptance_criteria, card.evidence):
        size += sum(map(_utf8, items))
    if card.source_metadata:
        size += _utf8(json.dumps(card.source_metadata, ensure_ascii=False))
    return size


def check_sizes(before: Mapping[str, Card], cards: Sequence[Card]) -> None:
    """Refuse a change that makes a card or the board hold more text than it may. A card or
    a board already over a limit (stored before it existed, or by an older version) may still
    shrink or stay as it is: only growth past the limit is refused."""
    total = 0
    for card in cards:
        size = card.text_size()
        total += size
        old = before.get(card.id)
        if size > MAX_CARD_BYTES and old is not card and (old is None or size > old.text_size()):
            shown = card.title if len(card.title) <= 60 else card.title[:57] + "..."
            raise InvalidInput(
                f"card '{shown}' would hold {size} bytes of text, more than the"
                f" {MAX_CARD_BYTES} (64 KiB) a card may hold across its fields: shorten its"
                " notes, plan, acceptance criteria or evidence (keep long output in a file and"
                " cite its path), or split the work into several cards"
            )
    if total > MAX_BOARD_BYTES and total > sum(c.text_size() for c in before.values()):
        raise InvalidInput(
            f"the board would hold {total} bytes of card text, more than the"
            f" {MAX_BOARD_BYTES} (1 MiB) a board may hold (every operation returns the whole"
            " board): shorten long notes or evidence, or remove cards that are done"
        )
