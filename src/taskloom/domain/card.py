"""One card of a board: its statuses, fields and approval mode, how a patch applies to it,
how it is stored and shown, and what a person's approval keeps on it whatever writes it.

Cards are immutable; :mod:`taskloom.domain.board` holds them and runs the operations.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from taskloom.domain.common import UNSET, Unset, clean_list, no_controls, non_empty
from taskloom.domain.errors import InvalidInput
from taskloom.domain.limits import MAX_ITEMS, MAX_TITLE_BYTES, storable, storable_json
from taskloom.domain.text import shown_id


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
STATUS_VALUES = tuple(s.value for s in CardStatus)


def parse_status(value: str | CardStatus) -> CardStatus:
    """Canonical status from a canonical name or an alias (``pending``, ``completed``, …)."""
    if isinstance(value, CardStatus):
        return value
    found = _STATUS_ALIASES.get(str(value).strip().lower())
    if found is None:
        raise InvalidInput(f"invalid status '{shown_id(str(value))}' (expected {STATUS_CHOICES})")
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
    blocked_by: tuple[str, ...] = ()
    """Ids of cards of the same board this card comes after: it is ready to start once each
    of them is done (:mod:`taskloom.domain.graph`)."""
    metadata: dict[str, Any] | None = None
    """JSON a model or a host keeps on the card (a task tool's ``metadata``)."""
    number: int | None = None
    """The card's short id on its board: 1, 2, … in the order cards are made, never reused."""
    order: int = 0
    """The card's sort key on its board: cards are shown by increasing order. It moves only
    when cards are reordered, so removing a card leaves the others' as they are."""
    created_at: str = ""
    updated_at: str = ""
    # Cards are immutable, so their dict and markdown are computed once and reused: a
    # 1,000-card board re-encodes only the cards an operation changed.
    _dict: dict[str, Any] | None = field(default=None, init=False, compare=False, repr=False)
    _lines: list[str] | None = field(default=None, init=False, compare=False, repr=False)
    _text: str | None = field(default=None, init=False, compare=False, repr=False)
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
            object.__setattr__(self, "_size", _text_size(self))
        assert self._size is not None
        return self._size

    def markdown_lines(self) -> list[str]:
        if self._lines is None:
            object.__setattr__(self, "_lines", _markdown(self))
        assert self._lines is not None
        return self._lines

    def markdown(self) -> str:
        """The card's item of the board's markdown (cached)."""
        if self._text is None:
            object.__setattr__(self, "_text", "\n".join(self.markdown_lines()))
        assert self._text is not None
        return self._text

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
            "blocked_by": list(self.blocked_by),
            "metadata": self.metadata,
            "number": self.number,
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
            blocked_by=tuple(data.get("blocked_by") or ()),
            metadata=data.get("metadata"),
            number=data.get("number"),
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
        card.blocked_by,
        card.metadata,
    )


def _utf8(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _text_size(card: Card) -> int:
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
    for items in (
        card.plan,
        card.allowed_tools,
        card.acceptance_criteria,
        card.evidence,
        card.blocked_by,
    ):
        size += sum(map(_utf8, items))
    for data in (card.source_metadata, card.metadata):
        if data:
            size += _utf8(json.dumps(data, ensure_ascii=False))
    return size


def _markdown(card: Card) -> list[str]:
    """A card's item. Free text keeps its lines, each indented under its own field, so a
    note or a plan step cannot pose as another card (``"done\n- [x] fake"``)."""
    lines = [f"- {card.status.marker} {card.title}  `({card.id})`"]

    def detail(text: str, depth: int = 2) -> None:
        # Every line break markdown or a reader knows (a bare \r, U+2028, NEL, VT, FF: all
        # that str.splitlines splits at) is indented under the field.
        parts = text.splitlines() or [""]
        lines.append(" " * depth + "- " + ("\n" + " " * (depth + 2)).join(parts))

    if card.objective:
        detail(f"objective: {card.objective}")
    if card.assigned_agent:
        detail(f"agent: {card.assigned_agent}")
    if card.allowed_tools:
        detail(f"tools: {', '.join(card.allowed_tools)}")
    if card.approval_mode or card.status is CardStatus.AWAITING_APPROVAL:
        detail(f"approval: {approval_state(card)}")
    if card.blocked_by:
        detail(f"after: {', '.join(card.blocked_by)}")
    for label, items in (
        ("plan", card.plan),
        ("acceptance criteria", card.acceptance_criteria),
        ("evidence", card.evidence),
    ):
        if items:
            detail(f"{label}:")
            for item in items:
                detail(item, depth=4)
    if card.status == "blocked":
        reason = card.blocker or card.notes
        if reason:
            detail(f"_blocked:_ {reason}")
    elif card.notes:
        detail(card.notes)
    return lines


def approval_state(card: Card) -> str:
    """Where a card's approval stands, as the markdown shows it: ``approved`` (a person
    approved its plan), ``rejected``, ``required`` (it waits for a person) or
    ``not_required``."""
    if card.approval_mode is ApprovalMode.NOT_REQUIRED:
        return card.approval_mode.value
    if card.approval_mode is ApprovalMode.REQUIRED and card.status in APPROVED_STATUSES:
        return "approved"
    if card.approval_mode is ApprovalMode.REQUIRED and card.status is CardStatus.REJECTED:
        return "rejected"
    return ApprovalMode.REQUIRED.value


@dataclass(frozen=True, slots=True)
class CardPatch:
    """Fields to set on a card. ``UNSET`` leaves a field alone; ``None``/``""`` clears it.

    ``id`` is honoured only by :func:`~taskloom.domain.board.replace` (a card's id never
    changes after creation), and ``source_metadata`` is host-only: the model-facing tools
    never fill it. ``blocked_by`` sets the whole list of cards this one comes after;
    ``add_blocked_by`` and ``remove_blocked_by`` change it by the ids they name (added after
    it is set, removed last).
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
    metadata: dict[str, Any] | Unset | None = UNSET
    blocked_by: Sequence[str] | Unset | None = UNSET
    add_blocked_by: Sequence[str] | Unset | None = UNSET
    remove_blocked_by: Sequence[str] | Unset | None = UNSET


_TEXT_FIELDS = ("objective", "assigned_agent", "notes", "blocker", "active_form")
_LIST_FIELDS = ("plan", "allowed_tools", "acceptance_criteria", "evidence")
_CARD_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def clean_title(title: str) -> str:
    title = " ".join(storable(title, "todo content", MAX_TITLE_BYTES).split())
    if not title:
        raise InvalidInput("todo content must not be empty")
    return no_controls(title, "todo content")


def clean_text(value: str | None, name: str) -> str | None:
    return non_empty(None if value is None else no_controls(storable(value, name), name))


def clean_items(items: Sequence[str] | None, name: str) -> tuple[str, ...]:
    if isinstance(items, str):  # a list of its letters, otherwise
        raise InvalidInput(f"{name} must be a list of text, not one text")
    cleaned = clean_list([no_controls(storable(i, name), name) for i in items or ()])
    if len(cleaned) > MAX_ITEMS:
        raise InvalidInput(f"{name} holds more than {MAX_ITEMS} items")
    return cleaned


def clean_id(value: str | Unset | None) -> str | None:
    """A card id given by its writer (a model's ``todo_list``, ``replace``): letters, digits
    and ``. _ : -``, at most 64. It is shown in the markdown and in the panel's URLs, where
    a backtick, a line break, a slash or a look-alike (a zero-width space) would make a fake
    card, a card no one could approve from the panel, or a second card that looks like the
    first. Nor is it ``.`` or ``..``, which a browser drops from a URL path (as ``%2E`` too):
    the panel's decision for such a card would reach another route."""
    card_id = None if isinstance(value, Unset) else clean_text(value, "todo id")
    if card_id is not None and not _CARD_ID.fullmatch(card_id):
        shown = card_id[:64].encode("unicode_escape").decode("ascii")
        raise InvalidInput(
            f"todo id '{shown}' must not hold spaces, slashes or other signs: use letters,"
            " digits and . _ : - (at most 64)"
        )
    if card_id in (".", ".."):
        raise InvalidInput(f"a todo id cannot be {card_id!r} (a URL path drops it)")
    return card_id


def clean_ids(items: Sequence[str] | Unset | None, name: str) -> tuple[str, ...]:
    """Card ids a writer names (``blocked_by`` and its changes), each a valid id, once."""
    if isinstance(items, Unset) or items is None:
        return ()
    if isinstance(items, str):
        raise InvalidInput(f"{name} must be a list of card ids, not one text")
    if any(not isinstance(i, str) for i in items):
        raise InvalidInput(f"{name} must be a list of card ids (text)")
    cleaned = tuple(dict.fromkeys(i for i in map(clean_id, items) if i is not None))
    if len(cleaned) > MAX_ITEMS:
        raise InvalidInput(f"{name} names more than {MAX_ITEMS} cards")
    return cleaned


def _blocked_by(card: Card, patch: CardPatch) -> tuple[str, ...]:
    after = card.blocked_by
    if not isinstance(patch.blocked_by, Unset):
        after = clean_ids(patch.blocked_by, "blocked_by")
    added = clean_ids(patch.add_blocked_by, "add_blocked_by")
    removed = set(clean_ids(patch.remove_blocked_by, "remove_blocked_by"))
    if added or removed:
        after = tuple(i for i in dict.fromkeys((*after, *added)) if i not in removed)
        if len(after) > MAX_ITEMS:
            raise InvalidInput(f"blocked_by names more than {MAX_ITEMS} cards")
    return after


def apply_patch(card: Card, patch: CardPatch) -> Card:
    changes: dict[str, Any] = {}
    if not isinstance(patch.title, Unset):
        changes["title"] = clean_title(patch.title)
    if not isinstance(patch.status, Unset):
        changes["status"] = parse_status(patch.status)
    for name in _TEXT_FIELDS:
        value = getattr(patch, name)
        if not isinstance(value, Unset):
            changes[name] = clean_text(value, name)
    for name in _LIST_FIELDS:
        value = getattr(patch, name)
        if not isinstance(value, Unset):
            changes[name] = clean_items(value, name)
    if not isinstance(patch.approval_mode, Unset):
        changes["approval_mode"] = parse_approval_mode(patch.approval_mode)
    for name in ("source_metadata", "metadata"):
        value = getattr(patch, name)
        if not isinstance(value, Unset):
            if value is not None and not isinstance(value, Mapping):
                raise InvalidInput(f"{name} must be an object (a dict) or None")
            storable_json(value, name)
            changes[name] = dict(value) if value is not None else None
    after = _blocked_by(card, patch)
    if after != card.blocked_by:
        changes["blocked_by"] = after
    new = dataclasses.replace(card, **changes)
    if new.status is not CardStatus.BLOCKED and new.blocker is not None:
        if changes.get("blocker") is not None:  # a reason given now, not one left from before
            raise InvalidInput(
                "a blocker says why a card is blocked: give it with the status blocked,"
                f" not {new.status.value}"
            )
        new = dataclasses.replace(new, blocker=None)
    return new


@contextlib.contextmanager
def naming_item(n: int, count: int, title: object) -> Iterator[None]:
    """Refusals of item ``n`` of a list of ``count`` cards say which item it is (and its
    title, when printable), so the caller can fix that one and send the list again."""
    try:
        yield
    except InvalidInput as exc:
        shown = f" '{shown_id(title)}'" if isinstance(title, str) and title.isprintable() else ""
        raise InvalidInput(f"item {n} of {count}{shown}: {exc.message}") from None


# --- who decides -----------------------------------------------------------------------------

APPROVED_STATUSES = frozenset(
    {CardStatus.READY, CardStatus.IN_PROGRESS, CardStatus.BLOCKED, CardStatus.DONE}
)
UNFINISHED = frozenset(
    {CardStatus.TODO, CardStatus.READY, CardStatus.IN_PROGRESS, CardStatus.BLOCKED}
)


def waits_for_person(card: Card) -> bool:
    """Awaiting approval, or an approval-required card that a person has not approved yet
    (a rejected or withdrawn plan among them: see ``keeps_its_gate``)."""
    return card.status is CardStatus.AWAITING_APPROVAL or (
        card.approval_mode is ApprovalMode.REQUIRED and card.status not in APPROVED_STATUSES
    )


def needs_a_person(card: Card) -> bool:
    """A gated card: its plan waits for a person's approval or was approved by one."""
    return (
        card.approval_mode is ApprovalMode.REQUIRED or card.status is CardStatus.AWAITING_APPROVAL
    )


def waits_if_gated(card: Card) -> Card:
    """A new card that needs approval and is not finished starts awaiting it: added as
    ``todo`` it would be gated yet no one could approve it, and added as ``ready`` it would
    pass for approved and be started (the rule for a card made to need approval, at creation)."""
    if card.approval_mode is ApprovalMode.REQUIRED and card.status in UNFINISHED:
        return dataclasses.replace(card, status=CardStatus.AWAITING_APPROVAL)
    return card


def keeps_its_gate(old: Card, card: Card) -> Card:
    """What a person decides on stays theirs, whichever op or tool wrote the change:

    - a plan rejected or withdrawn while awaiting approval stays a person's to approve
      (``approval_mode`` becomes required) unless this very change set the mode (a host may;
      the model's gate refuses it): a ``not_required`` it was submitted with would let the
      model withdraw it and then finish it unapproved. A plain todo the model cancels (also
      ``rejected``) is not gated and stays free;
    - an approved card paused (moved to ``todo``, as a list tool's ``pending`` or a
      ``replace`` without a status does) lands on ``ready``, approved and not started: in
      ``todo`` it would wait for a person, yet no one could approve it (``decide_plan`` takes
      cards awaiting approval);
    - a card made to need approval (its mode set to required now) that is not finished waits
      for the person: left ready or in progress, it would pass for approved and be finished;
      so does a finished card made to need it and started again in the same change (a done
      card's edit to required and in_progress would forge an approved plan no one saw);
    - a plan moved from awaiting approval to work by a person (``board status … approved``)
      is approved, and stays a person's (mode required, as ``decide_plan`` makes it): left
      unset, the model could rewrite it and mark it done;
    - a waiting plan whose requirement a person lifts (``--no-approval``) goes back to todo:
      left awaiting approval, it would wait for an approval no longer needed."""
    mode = card.approval_mode
    if (
        mode is ApprovalMode.REQUIRED
        and old.approval_mode is not ApprovalMode.REQUIRED
        and old.status is not CardStatus.AWAITING_APPROVAL  # not the approval itself
        and card.status in UNFINISHED
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
