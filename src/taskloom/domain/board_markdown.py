"""A card as markdown: its checklist item with every detail indented under it. Apart from
:mod:`taskloom.domain.board`, which holds the cards and renders each once."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taskloom.domain.board import Card


def render_card(card: Card) -> list[str]:
    """A card's item. Free text keeps its lines, each indented under its own field, so a
    note or a plan step cannot pose as another card (``"done\n- [x] fake"``)."""
    lines = [f"- {card.status.marker} {card.title}  `({card.id})`"]

    def field(text: str, depth: int = 2) -> None:
        # Every line break markdown or a reader knows (a bare \r, U+2028, NEL, VT, FF: all
        # that str.splitlines splits at) is indented under the field.
        parts = text.splitlines() or [""]
        lines.append(" " * depth + "- " + ("\n" + " " * (depth + 2)).join(parts))

    if card.objective:
        field(f"objective: {card.objective}")
    if card.assigned_agent:
        field(f"agent: {card.assigned_agent}")
    if card.allowed_tools:
        field(f"tools: {', '.join(card.allowed_tools)}")
    if card.approval_mode:
        field(f"approval: {card.approval_mode.value}")
    for label, items in (
        ("plan", card.plan),
        ("acceptance criteria", card.acceptance_criteria),
        ("evidence", card.evidence),
    ):
        if items:
            field(f"{label}:")
            for item in items:
                field(item, depth=4)
    if card.status == "blocked":
        reason = card.blocker or card.notes
        if reason:
            field(f"_blocked:_ {reason}")
    elif card.notes:
        field(card.notes)
    return lines
