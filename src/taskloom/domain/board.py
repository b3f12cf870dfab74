"""The per-thread todo board: cards, statuses, markdown rendering and every board operation.

Each operation is a pure function ``(board, args, now[, new_id]) -> board`` that either returns
the next board or raises a :class:`~taskloom.domain.errors.TaskloomError`. The store runs it
inside one write transaction; nothing here reads a clock, a random source or a database.

Rules kept here (and bugs of the seed fixed here):

- ids come from the injected ``new_id`` (uuids in production), never from a process counter;
- at most one card is ``in_progress``; breaking that is an error, never silently repaired;
- a card that is not ``blocked`` has no blocker (leaving ``blocked`` clears it);
- ``updated_at`` moves only on the cards that actually changed;
- ``replace`` drops empty-title cards *before* checking the invariant;
- card text must be storable on every backend (no NUL, no lone surrogates);
- a card's and a board's text are bounded (:mod:`taskloom.domain.limits`);
- a model never approves a plan: :mod:`taskloom.domain.approval` gates the model's writes.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from taskloom.domain.board_markdown import render_card
from taskloom.domain.common import (
    UNSET,
    Unset,
    clean_list,
    iso,
    no_controls,
    non_empty,
    parse_iso,
)
from taskloom.domain.errors import Conflict, InvalidInput, InvariantViolation, NotFound
from taskloom.domain.limits import (
    MAX_CARDS,
    MAX_ITEMS,
    MAX_TITLE_BYTES,
    check_sizes,
    storable,
    storable_json,
    text_size,
)

IdFactory = Callable[[], str]


class CardStatus(enum.StrEnum):
    """Where a card stands; ``awaiting_approval`` waits for a person to decide its plan."""

    TODO = "todo"
    AWAITING_APPROVAL = "awaiting_approval"
    READY = "ready"
    IN_PROGRESS = "in_progress"
    BLOCKED = "blocked"
    DONE = "done"
    REJECTED = "rejected"

    @property
    def marker(self) -> str:
        return MARKERS[self]


MARKERS: dict[CardStatus, str] = {
    CardStatus.TODO: "[ ]",
    CardStatus.AWAITING_APPROVAL: "[?]",
    CardStatus.READY: "[ ]",
    CardStatus.IN_PROGRESS: "[~]",
    CardStatus.BLOCKED: "[!]",
    CardStatus.DONE: "[x]",
    CardStatus.REJECTED: "[-]",
}

_STATUS_ALIASES: dict[str, CardStatus] = {
    **{s.value: s for s in CardStatus},
    "pending": CardStatus.TODO,
    "open": CardStatus.TODO,
    "awaiting-approval": CardStatus.AWAITING_APPROVAL,
    "awaiting approval": CardStatus.AWAITING_APPROVAL,
    "needs_approval": CardStatus.AWAITING_APPROVAL,
    "approved": CardStatus.READY,
    "in-progress": CardStatus.IN_PROGRESS,
    "in progress": CardStatus.IN_PROGRESS,
    "inprogress": CardStatus.IN_PROGRESS,
    "started": CardStatus.IN_PROGRESS,
    "doing": CardStatus.IN_PROGRESS,
    "completed": CardStatus.DONE,
    "complete": CardStatus.DONE,
    "finished": CardStatus.DONE,
    "denied": CardStatus.REJECTED,
    "cancelled": CardStatus.REJECTED,
    "canceled": CardStatus.REJECTED,
}

STATUS_CHOICES = "|".join(s.value for s in CardStatus)
_STATUS_VALUES = tuple(s.value for s in CardStatus)


def parse_status(value: str | CardStatus) -> CardStatus:
    """Canonical status from a canonical name or an alias (``pending``, ``completed``, …)."""
    if isinstance(value, CardStatus):
        return value
    found = _STATUS_ALIASES.get(str(value).strip().lower())
    if found is None:
        raise InvalidInput(f"invalid status '{value}' (expected {STATUS_CHOICES})")
    return found


class ApprovalMode(enum.StrEnum):
    """Whether a card's plan needs a person's approval before it starts."""

    REQUIRED = "required"
    NOT_REQUIRED = "not_required"


def parse_approval_mode(value: str | ApprovalMode | None) -> ApprovalMode | None:
    if value is None or isinstance(value, ApprovalMode):
        return value
    try:
        return ApprovalMode(value.strip().lower())
    except ValueError:
        raise InvalidInput(
            f"invalid approval_mode '{value}' (expected required|not_required|null)"
        ) from None


@dataclass(frozen=True, slots=True)
class Card:
    """One card of a board: a step of the plan, with its status and details."""

    id: str
    title: str
    status: CardStatus = CardStatus.TODO
    objective: str | None = None
    plan: tuple[str, ...] = ()
    assigned_agent: str | None = None
    allowed_tools: tuple[str, ...] = ()
    approval_mode: ApprovalMode | None = None
    acceptance_criteria: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    notes: str | None = None
    blocker: str | None = None
    session_thread_id: str | None = None
    source_metadata: dict[str, Any] | None = None
    active_form: str | None = None
    order: int = 0
    created_at: str = ""
    updated_at: str = ""
    # Cards are immutable, so their dict and markdown are computed once and reused: a
    # 1,000-card board re-encodes only the cards an operation changed.
    _dict: dict[str, Any] | None = field(default=None, init=False, compare=False, repr=False)
    _lines: list[str] | None = field(default=None, init=False, compare=False, repr=False)
    _size: int | None = field(default=None, init=False, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The card as JSON-ready data (cached; treat the result as read-only)."""
        if self._dict is None:
            object.__setattr__(self, "_dict", self._build_dict())
        assert self._dict is not None
        return self._dict

    def text_size(self) -> int:
        """Bytes of text across the card's fields (cached), for the size limits."""
        if self._size is None:
            object.__setattr__(self, "_size", text_size(self))
        assert self._size is not None
        return self._size

    def markdown_lines(self) -> list[str]:
        if self._lines is None:
            object.__setattr__(self, "_lines", render_card(self))
        assert self._lines is not None
        return self._lines

    def _build_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status.value,
            "objective": self.objective,
            "plan": list(self.plan),
            "assigned_agent": self.assigned_agent,
            "allowed_tools": list(self.allowed_tools),
            "approval_mode": self.approval_mode.value if self.approval_mode else None,
            "acceptance_criteria": list(self.acceptance_criteria),
            "evidence": list(self.evidence),
            "notes": self.notes,
            "blocker": self.blocker,
            "session_thread_id": self.session_thread_id,
            "source_metadata": self.source_metadata,
            "active_form": self.active_form,
            "order": self.order,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Card:
        mode = data.get("approval_mode")
        return cls(
            id=data["id"],
            title=data["title"],
            status=CardStatus(data.get("status", "todo")),
            objective=data.get("objective"),
            plan=tuple(data.get("plan") or ()),
            assigned_agent=data.get("assigned_agent"),
            allowed_tools=tuple(data.get("allowed_tools") or ()),
            approval_mode=ApprovalMode(mode) if mode else None,
            acceptance_criteria=tuple(data.get("acceptance_criteria") or ()),
            evidence=tuple(data.get("evidence") or ()),
            notes=data.get("notes"),
            blocker=data.get("blocker"),
            session_thread_id=data.get("session_thread_id"),
            source_metadata=data.get("source_metadata"),
            active_form=data.get("active_form"),
            order=int(data.get("order", 0)),
            created_at=data.get("created_at", ""),
            updated_at=data.get("updated_at", ""),
        )

    def same_content(self, other: Card) -> bool:
        """Equal apart from order and timestamps: decides whether ``updated_at`` moves."""
        return self is other or _content(self) == _content(other)


def _content(card: Card) -> tuple[Any, ...]:
    return (
        card.id,
        card.title,
        card.status,
        card.objective,
        card.plan,
        card.assigned_agent,
        card.allowed_tools,
        card.approval_mode,
        card.acceptance_criteria,
        card.evidence,
        card.notes,
        card.blocker,
        card.session_thread_id,
        card.source_metadata,
        card.active_form,
    )


@dataclass(frozen=True, slots=True)
class Board:
    """A thread's todo board: its cards in order, and its version."""

    thread_id: str
    cards: tuple[Card, ...] = ()
    version: int = 0
    updated_at: str | None = None
    retired_ids: tuple[str, ...] = ()
    """Ids of removed cards that needed a person's approval (the last :data:`MAX_RETIRED`):
    a model may not bring one back as a new card, which would look like the approved or
    waiting plan it replaced (see :mod:`taskloom.domain.approval`)."""
    retired_titles: tuple[str, ...] = ()
    """Titles (``title_key``) of removed or renamed gated cards (waiting for a person or
    approved by one): a whole-list write (``todo_write``) has no ids, so a plan dropped and
    sent again as ``done`` under its title would otherwise pass for the plan a person was
    asked about, or approved. Only a model's changes add to both (``model_change``): a
    person who removes a plan knows what they removed."""

    def find(self, card_id: str) -> Card | None:
        card_id = card_id.strip()
        return next((c for c in self.cards if c.id == card_id), None)

    def get(self, card_id: str) -> Card:
        card = self.find(card_id)
        if card is None:
            raise NotFound(f"todo id '{card_id}' not found")
        return card

    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(_STATUS_VALUES, 0)
        for card in self.cards:
            counts[card.status] += 1
        counts["total"] = len(self.cards)
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "version": self.version,
            "updated_at": self.updated_at,
            "cards": [c.to_dict() for c in self.cards],
            **({"retired_ids": list(self.retired_ids)} if self.retired_ids else {}),
            **({"retired_titles": list(self.retired_titles)} if self.retired_titles else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Board:
        return cls(
            thread_id=data["thread_id"],
            cards=tuple(Card.from_dict(c) for c in data.get("cards", ())),
            version=int(data.get("version", 0)),
            updated_at=data.get("updated_at"),
            retired_ids=tuple(data.get("retired_ids", ())),
            retired_titles=tuple(data.get("retired_titles", ())),
        )


@dataclass(frozen=True, slots=True)
class CardPatch:
    """Fields to set on a card. ``UNSET`` leaves a field alone; ``None``/``""`` clears it.

    ``id`` is honoured only by :func:`replace` (a card's id never changes after creation), and
    ``source_metadata`` is host-only: the model-facing tools never fill it.
    """

    id: str | Unset | None = UNSET
    title: str | Unset = UNSET
    status: str | CardStatus | Unset = UNSET
    objective: str | Unset | None = UNSET
    plan: Sequence[str] | Unset | None = UNSET
    assigned_agent: str | Unset | None = UNSET
    allowed_tools: Sequence[str] | Unset | None = UNSET
    approval_mode: str | ApprovalMode | Unset | None = UNSET
    acceptance_criteria: Sequence[str] | Unset | None = UNSET
    evidence: Sequence[str] | Unset | None = UNSET
    notes: str | Unset | None = UNSET
    blocker: str | Unset | None = UNSET
    active_form: str | Unset | None = UNSET
    source_metadata: dict[str, Any] | Unset | None = UNSET


_TEXT_FIELDS = ("objective", "assigned_agent", "notes", "blocker", "active_form")
_LIST_FIELDS = ("plan", "allowed_tools", "acceptance_criteria", "evidence")


MAX_RETIRED = 256
_CARD_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def _clean_title(title: str) -> str:
    title = " ".join(storable(title, "todo content", MAX_TITLE_BYTES).split())
    if not title:
        raise InvalidInput("todo content must not be empty")
    return no_controls(title, "todo content")


def _clean_text(value: str | None, name: str) -> str | None:
    return non_empty(None if value is None else no_controls(storable(value, name), name))


def _clean_items(items: Sequence[str] | None, name: str) -> tuple[str, ...]:
    if isinstance(items, str):  # a list of its letters, otherwise
        raise InvalidInput(f"{name} must be a list of text, not one text")
    cleaned = clean_list([no_controls(storable(i, name), name) for i in items or ()])
    if len(cleaned) > MAX_ITEMS:
        raise InvalidInput(f"{name} holds more than {MAX_ITEMS} items")
    return cleaned


def _clean_id(value: str | Unset | None) -> str | None:
    """A card id given by its writer (a model's ``todo_list``, ``replace``): letters, digits
    and ``. _ : -``, at most 64. It is shown in the markdown and in the panel's URLs, where
    a backtick, a line break, a slash or a look-alike (a zero-width space) made a fake card,
    a card no one could approve from the panel, or a second card that looked like the first."""
    card_id = None if isinstance(value, Unset) else _clean_text(value, "todo id")
    if card_id is not None and not _CARD_ID.fullmatch(card_id):
        shown = card_id[:64].encode("unicode_escape").decode("ascii")
        raise InvalidInput(
            f"todo id '{shown}' must not hold spaces, slashes or other signs: use letters,"
            " digits and . _ : - (at most 64)"
        )
    return card_id


def _apply_patch(card: Card, patch: CardPatch) -> Card:
    changes: dict[str, Any] = {}
    if not isinstance(patch.title, Unset):
        changes["title"] = _clean_title(patch.title)
    if not isinstance(patch.status, Unset):
        changes["status"] = parse_status(patch.status)
    for name in _TEXT_FIELDS:
        value = getattr(patch, name)
        if not isinstance(value, Unset):
            changes[name] = _clean_text(value, name)
    for name in _LIST_FIELDS:
        value = getattr(patch, name)
        if not isinstance(value, Unset):
            changes[name] = _clean_items(value, name)
    if not isinstance(patch.approval_mode, Unset):
        changes["approval_mode"] = parse_approval_mode(patch.approval_mode)
    if not isinstance(patch.source_metadata, Unset):
        if patch.source_metadata is not None and not isinstance(patch.source_metadata, Mapping):
            raise InvalidInput("source_metadata must be an object (a dict) or None")
        storable_json(patch.source_metadata, "source_metadata")
        changes["source_metadata"] = patch.source_metadata
    new = dataclasses.replace(card, **changes)
    if new.status is not CardStatus.BLOCKED and new.blocker is not None:
        new = dataclasses.replace(new, blocker=None)
    return new


def check_single_in_progress(cards: Iterable[Card], before: Board | None = None) -> None:
    """At most one card in progress. The error names the card that already was (the one
    in progress on ``before``), so the model can finish or park it without listing first."""
    working = [c for c in cards if c.status is CardStatus.IN_PROGRESS]
    if len(working) > 1:
        was = {c.id for c in before.cards if c.status is CardStatus.IN_PROGRESS} if before else ()
        first = next((c for c in working if c.id in was), working[0])
        raise InvariantViolation(
            f"only one todo may be `in_progress` at a time (got {len(working)}): '{first.title}'"
            f" ({first.id}) is in progress already; mark it done, blocked or todo first"
        )


def _commit(board: Board, cards: Sequence[Card], now: datetime) -> Board:
    """Check invariants, renumber, and stamp only the cards whose content changed."""
    if len(cards) > max(MAX_CARDS, len(board.cards)):  # a board already over it may shrink
        raise InvalidInput(f"a board holds at most {MAX_CARDS} cards")
    check_single_in_progress(cards, board)
    seen: set[str] = set()
    for card in cards:
        if card.id in seen:
            raise InvariantViolation(f"duplicate todo id '{card.id}'")
        seen.add(card.id)
    stamp = iso(now)
    before = {c.id: c for c in board.cards}
    out: list[Card] = []
    changed = len(cards) != len(board.cards)
    for index, card in enumerate(cards):
        old = before.get(card.id)
        if old is card and card.order == index:
            out.append(card)
            continue
        if old is None:
            card = dataclasses.replace(
                _waits_if_gated(card), order=index, created_at=stamp, updated_at=stamp
            )
            changed = True
        elif old.same_content(card):
            card = dataclasses.replace(
                card, order=index, created_at=old.created_at, updated_at=old.updated_at
            )
            changed = changed or old.order != index
        else:
            card = dataclasses.replace(
                _keeps_its_gate(old, card),
                order=index,
                created_at=old.created_at,
                updated_at=_later(stamp, old.updated_at),
            )
            changed = True
        out.append(card)
    if not changed:
        return board
    check_sizes(before, out)
    return dataclasses.replace(board, cards=tuple(out), updated_at=stamp)


def _later(stamp: str, before: str) -> str:
    """``stamp``, or a millisecond after ``before`` when that is not earlier: a card's
    ``updated_at`` changes with every change of the card, even two in one millisecond. A
    person's decision names the version it saw by it (``decide_plan(seen=…)``), and a model's
    edit landing in the same millisecond as the plan it replaced passed for that plan."""
    if before and stamp <= before:
        return iso(parse_iso(before) + timedelta(milliseconds=1))
    return stamp


def needs_a_person(card: Card) -> bool:
    """A gated card: its plan waits for a person's approval or was approved by one."""
    return (
        card.approval_mode is ApprovalMode.REQUIRED or card.status is CardStatus.AWAITING_APPROVAL
    )


def _waits_if_gated(card: Card) -> Card:
    """A new card that needs approval and is not finished starts awaiting it: added as
    ``todo`` it was gated yet no one could approve it, and added as ``ready`` it passed for
    approved and was started (the rule for a card made to need approval, at creation)."""
    if card.approval_mode is ApprovalMode.REQUIRED and card.status in _UNFINISHED:
        return dataclasses.replace(card, status=CardStatus.AWAITING_APPROVAL)
    return card


def _keeps_its_gate(old: Card, card: Card) -> Card:
    """What a person decides on stays theirs, whichever op or tool wrote the change:

    - a plan rejected or withdrawn while awaiting approval stays a person's to approve
      (``approval_mode`` becomes required) unless this very change set the mode (a host may;
      the model's gate refuses it): a ``not_required`` it was submitted with let the model
      withdraw it and then finish it unapproved. A plain todo the model cancelled (also
      ``rejected``) was never gated and stays free;
    - an approved card paused (moved to ``todo``, as a list tool's ``pending`` or a
      ``replace`` without a status does) lands on ``ready``, approved and not started: in
      ``todo`` it waited for a person, yet no one could approve it (``decide_plan`` takes
      cards awaiting approval);
    - a card made to need approval (its mode set to required now) that is not finished waits
      for the person: left ready or in progress, it passed for approved and was finished; so
      does a finished card made to need it and started again in the same change (a done
      card's edit to required and in_progress forged an approved plan no one saw);
    - a plan moved from awaiting approval to work by a person (``board status … approved``)
      is approved, and stays a person's (mode required, as ``decide_plan`` makes it): left
      unset, the model could rewrite it and mark it done;
    - a waiting plan whose requirement a person lifts (``--no-approval``) goes back to todo:
      left awaiting approval, it still waited for the approval no longer needed."""
    mode = card.approval_mode
    if (
        mode is ApprovalMode.REQUIRED
        and old.approval_mode is not ApprovalMode.REQUIRED
        and old.status is not CardStatus.AWAITING_APPROVAL  # not the approval itself
        and card.status in _UNFINISHED
    ):
        return dataclasses.replace(card, status=CardStatus.AWAITING_APPROVAL)
    if old.status is CardStatus.AWAITING_APPROVAL and card.status in APPROVED_STATUSES:
        return dataclasses.replace(card, approval_mode=ApprovalMode.REQUIRED)
    if (
        old.status is card.status is CardStatus.AWAITING_APPROVAL
        and mode is ApprovalMode.NOT_REQUIRED
        and old.approval_mode is not ApprovalMode.NOT_REQUIRED
    ):
        return dataclasses.replace(card, status=CardStatus.TODO)
    if (
        old.status is CardStatus.AWAITING_APPROVAL
        and card.status is CardStatus.REJECTED
        and mode is not ApprovalMode.REQUIRED
        and mode == old.approval_mode
    ):
        return dataclasses.replace(card, approval_mode=ApprovalMode.REQUIRED)
    if (
        card.status is CardStatus.TODO
        and old.status in APPROVED_STATUSES
        and old.approval_mode is ApprovalMode.REQUIRED
        and mode is ApprovalMode.REQUIRED
    ):
        return dataclasses.replace(card, status=CardStatus.READY)
    return card


def _index(board: Board, card_id: str) -> int:
    card_id = card_id.strip()
    for i, card in enumerate(board.cards):
        if card.id == card_id:
            return i
    raise NotFound(f"todo id '{card_id}' not found")


def _with_card(board: Board, index: int, card: Card) -> list[Card]:
    cards = list(board.cards)
    cards[index] = card
    return cards


# --- operations -------------------------------------------------------------------------------


def add(
    board: Board,
    title: str,
    patch: CardPatch = CardPatch(),
    *,
    now: datetime,
    new_id: IdFactory,
) -> tuple[Board, Card]:
    card = _apply_patch(Card(id=new_id(), title=_clean_title(title)), patch)
    new = _commit(board, [*board.cards, card], now)
    return new, new.cards[-1]


def edit(board: Board, card_id: str, patch: CardPatch, *, now: datetime) -> Board:
    if not isinstance(patch.id, Unset) and patch.id != card_id:
        raise InvalidInput("a card's id cannot be changed")
    i = _index(board, card_id)
    return _commit(board, _with_card(board, i, _apply_patch(board.cards[i], patch)), now)


def update_status(
    board: Board,
    card_id: str,
    status: str | CardStatus,
    *,
    now: datetime,
    blocker: str | Unset | None = UNSET,
) -> Board:
    return edit(board, card_id, CardPatch(status=status, blocker=blocker), now=now)


def decide_plan(
    board: Board, card_id: str, approve: bool, *, now: datetime, seen: str | None = None
) -> Board:
    """A person's decision on a plan awaiting approval. ``seen``: the card's ``updated_at``
    as the person saw it; if the card changed since (the model may still edit a waiting
    plan), the decision is refused, so no one approves a plan they were not shown. Either
    way the card stays a person's to approve from then on (``approval_mode`` required): an
    approved card whose mode was unset could be rewritten by the model and marked done."""
    i = _index(board, card_id)
    card = board.cards[i]
    if card.status is not CardStatus.AWAITING_APPROVAL:
        raise InvariantViolation(
            f"card '{card.id}' is not awaiting approval (status: {card.status.value})"
        )
    if seen is not None and seen != card.updated_at:
        raise Conflict(
            f"'{card.title}' ({card.id}) changed since it was shown (updated"
            f" {card.updated_at}): look at its plan again before deciding"
        )
    target = CardStatus.READY if approve else CardStatus.REJECTED
    decided = dataclasses.replace(card, status=target, approval_mode=ApprovalMode.REQUIRED)
    return _commit(board, _with_card(board, i, decided), now)


def revise_plan(board: Board, *, now: datetime) -> Board:
    """Reject every card awaiting approval (the plan goes back to the model). No-op if none."""
    cards = [
        dataclasses.replace(c, status=CardStatus.REJECTED)
        if c.status is CardStatus.AWAITING_APPROVAL
        else c
        for c in board.cards
    ]
    return _commit(board, cards, now)


def remove(board: Board, card_id: str, *, now: datetime) -> Board:
    i = _index(board, card_id)
    return _commit(board, [c for j, c in enumerate(board.cards) if j != i], now)


def replace(board: Board, items: Sequence[CardPatch], *, now: datetime, new_id: IdFactory) -> Board:
    """Make the board exactly ``items``. Items with an empty title are dropped first."""
    before = {c.id: c for c in board.cards}
    cards: list[Card] = []
    for item in items:
        title = "" if isinstance(item.title, Unset) else " ".join(item.title.split())
        if not title:
            continue
        card_id = _clean_id(item.id) or new_id()
        base = Card(id=card_id, title=title)
        old = before.get(card_id)
        if old is not None:  # what an item cannot give, or need not repeat, is kept
            base = dataclasses.replace(
                base,
                source_metadata=old.source_metadata,
                session_thread_id=old.session_thread_id,
                approval_mode=old.approval_mode,
            )
        cards.append(_apply_patch(base, item))
    return _commit(board, cards, now)


def upsert(
    board: Board,
    items: Sequence[CardPatch],
    *,
    prune: bool,
    now: datetime,
    new_id: IdFactory,
) -> Board:
    """Patch the cards named by ``items`` in place and append the rest as new cards.

    An item names an existing card by ``id``. With ``prune`` the board keeps only the named
    cards, in the order given (a whole-list write such as TodoWrite); without it, cards not
    named stay where they are (a merge). Untouched fields of an existing card are kept.
    """
    by_id = {c.id: c for c in board.cards}
    named: dict[str, Card] = {}
    order: list[str] = []
    for item in items:
        given = _clean_id(item.id)
        old = named.get(given) if given else None
        old = old or (by_id.get(given) if given else None)
        if old is None:
            if isinstance(item.title, Unset):
                raise InvalidInput(f"todo '{given}' is new and needs content")
            old = Card(id=given or new_id(), title=_clean_title(item.title))
        card = _apply_patch(old, dataclasses.replace(item, id=UNSET))
        if card.id not in named:
            order.append(card.id)
        named[card.id] = card
    if prune:
        cards = [named[i] for i in order]
    else:
        cards = [named.pop(c.id, c) for c in board.cards]
        cards.extend(named[i] for i in order if i in named)
    return _commit(board, cards, now)


def clear(board: Board, *, now: datetime, forget_removed: bool = False) -> Board:
    """Remove every card. ``forget_removed`` (a person's clear, never a model's) also drops
    the memory of removed plans (``retired_ids``, ``retired_titles``): a fresh start."""
    cleared = _commit(board, [], now)
    if forget_removed and (cleared.retired_ids or cleared.retired_titles):
        stamp = iso(now)
        cleared = dataclasses.replace(cleared, retired_ids=(), retired_titles=(), updated_at=stamp)
    return cleared


def claim_card(
    board: Board,
    card_id: str,
    expected: Collection[str | CardStatus] | str | CardStatus,
    target: str | CardStatus,
    *,
    now: datetime,
) -> tuple[Board, Card]:
    """Compare-and-set on a card's status: move it to ``target`` only if it is in ``expected``
    (a list of statuses, or one status: a lone ``"todo"`` was read letter by letter)."""
    if isinstance(expected, str):
        expected = [expected]
    elif not isinstance(expected, Collection):
        raise InvalidInput(
            f"claim_card: expected must be a status or a list of statuses, not"
            f" {type(expected).__name__}"
        )
    allowed = [parse_status(s) for s in expected]
    goal = parse_status(target)
    try:
        i = _index(board, card_id)
    except NotFound:
        raise NotFound(f"claim_card: card '{card_id}' not found on board") from None
    card = board.cards[i]
    if card.status not in allowed:
        names = ", ".join(s.value for s in allowed)
        raise InvariantViolation(
            f"claim_card: card '{card.id}' status is '{card.status.value}', "
            f"expected one of [{names}]; claim rejected"
        )
    new = _commit(board, _with_card(board, i, _apply_patch(card, CardPatch(status=goal))), now)
    return new, new.cards[i]


def set_session_thread(
    board: Board, card_id: str, session_thread_id: str | None, *, now: datetime
) -> Board:
    i = _index(board, card_id)
    thread = _clean_text(session_thread_id, "session_thread_id")
    card = dataclasses.replace(board.cards[i], session_thread_id=thread)
    return _commit(board, _with_card(board, i, card), now)


# --- who decides -----------------------------------------------------------------------------

APPROVED_STATUSES = frozenset(
    {CardStatus.READY, CardStatus.IN_PROGRESS, CardStatus.BLOCKED, CardStatus.DONE}
)
_UNFINISHED = frozenset(
    {CardStatus.TODO, CardStatus.READY, CardStatus.IN_PROGRESS, CardStatus.BLOCKED}
)


def waits_for_person(card: Card) -> bool:
    """Awaiting approval, or an approval-required card that a person has not approved yet
    (a rejected or withdrawn plan among them: see ``_keeps_its_gate``)."""
    return card.status is CardStatus.AWAITING_APPROVAL or (
        card.approval_mode is ApprovalMode.REQUIRED and card.status not in APPROVED_STATUSES
    )


# --- rendering --------------------------------------------------------------------------------


def render_markdown(board: Board) -> str:
    """The board as a markdown checklist, one card per item, details indented under it."""
    if not board.cards:
        return "_No todos yet._"
    lines: list[str] = []
    for card in board.cards:
        lines.extend(card.markdown_lines())
    return "\n".join(lines).rstrip()


def snapshot(board: Board) -> dict[str, Any]:
    """What every board operation returns and what a ``todo_state`` event carries."""
    return {
        "thread_id": board.thread_id,
        "version": board.version,
        "updated_at": board.updated_at,
        "cards": [c.to_dict() for c in board.cards],
        "markdown": render_markdown(board),
        "summary": board.summary(),
    }
