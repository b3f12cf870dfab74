"""What the shape benchmark's two sets share: a question with its gold answer, and the
words their seeded data is made of."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Q:
    kind: str
    text: str
    gold: object  # str: shown verbatim; tuple: all shown; int: exact count


FIRST = [
    "Ada", "Bram", "Chen", "Dara", "Emil", "Fatou", "Goran", "Hana", "Ivo", "Jun", "Kofi",
    "Lena", "Mira", "Nils", "Oona", "Pavel", "Quinn", "Rosa", "Sami", "Tove",
]  # fmt: skip
LAST = [
    "Okafor", "Lindqvist", "Moreau", "Tanaka", "Silva", "Novak", "Haddad", "Kowalski",
    "Nguyen", "Petrov", "Schmidt", "Rossi",
]  # fmt: skip
WORDS = [
    "alpha", "bravo", "cedar", "delta", "ember", "fjord", "granite", "harbor", "island",
    "juniper", "kelp", "lantern", "meadow", "nectar", "orbit", "prairie", "quartz", "river",
    "summit", "tundra",
]  # fmt: skip


def unique(rng: random.Random, n: int, make: Callable[[], Any]) -> list[Any]:
    """``n`` distinct values of ``make()``, in the order first made (``rng`` is the caller's,
    which ``make`` draws from)."""
    out: list[Any] = []
    seen: set[Any] = set()
    while len(out) < n:
        v = make()
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out
