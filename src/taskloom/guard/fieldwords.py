"""How a question's words name a field beyond its spelling: a two-word key said in the other
order and another form ("version fixes" for ``fix_versions``), a key said word by word
(surer than one of its words alone), and fields that mirror each other under a key the
question names (``project.name`` and ``project.slug``)."""

from __future__ import annotations

from typing import Any

from taskloom.guard.groups import Group
from taskloom.guard.rank import parts_of
from taskloom.guard.stems import stem


def turned_mentions(
    texts: list[str], skipped: list[bool], name: tuple[str, ...]
) -> list[tuple[int, int, int]]:
    """Where the question (its tokens' ``texts``; ``skipped``: quoted or an operator) names a
    two-word key in the other order, each word in any form ("version fixes" for
    ``fix_versions``, "count error" for ``error_count``), as (how surely, first token, token
    after): as surely as a nested field's last key alone (1)."""
    parts = parts_of(name[-1])
    if len(parts) != 2 or min(len(p) for p in parts) < 3:
        return []
    want = [stem(parts[1]), stem(parts[0])]
    return [
        (1, i, i + 2)
        for i in range(len(texts) - 1)
        if [stem(t) for t in texts[i : i + 2]] == want and not any(skipped[i : i + 2])
    ]


def key_support(name: tuple[str, ...], texts: list[str]) -> int:
    """How many keys of an asked field's path the question's unquoted ``texts`` say
    (``owner`` and ``repos_url`` for ``owner.repos_url``), plus one; a key of several words
    that the question says only word by word, each in some form ("which version fixes …"
    for ``fix_versions``), counts its words: surer than one of them alone (``version``)."""
    said = {t.lower().rstrip("s") for t in texts}
    stems = {stem(t) for t in texts}
    return 1 + sum(
        1 if part.lower().rstrip("s") in said else _words_said(part, stems) for part in name
    )


def _words_said(key: str, stems: set[str]) -> int:
    words = parts_of(key)
    if len(words) < 2 or not all(stem(w) in stems for w in words):
        return 0
    return len(words)


def mirrored(
    group: Group, holders: list[tuple[str, ...]], value: tuple[str, Any], texts: list[str]
) -> list[tuple[str, ...]]:
    """Of several fields holding a value, the one to read it on when they mirror each other
    under a key the question (its unquoted ``texts``) names: ``project.name`` and
    ``project.slug`` both holding ``billing-worker`` as often, in "issues in the
    billing-worker project". The first of them then stands for all; fields under different
    keys, that hold it a different number of times, or that the question does not name,
    stay apart (which is meant is a guess). Fewer than two holders are returned as they are."""
    if len(holders) < 2:
        return holders
    said = {t.lower().rstrip("s") for t in texts}
    named = [h for h in holders if any(p.lower().rstrip("s") in said for p in h[:-1])]
    if len(named) != len(holders) or len({group.fields[h].values[value] for h in holders}) != 1:
        return holders
    return [holders[0]] if len({h[:-1] for h in holders}) == 1 else holders
