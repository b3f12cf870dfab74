"""Every path the guard reports reads back exactly, and filters take any quoted value."""

from __future__ import annotations

import json
import re

import pytest

from taskloom.client import Taskloom
from tests.test_guard_store import SMALL

AWKWARD = [
    "it's",
    "back\\slash",
    "trailing\\",
    "\\'",
    "'",
    'dq"x',
    "br[ack]et",
    "]",
    "do.t",
    "a b",
    "-dash",
    "名前",
    "",
]


def stashed(tl: Taskloom, value: object) -> str:
    out = tl.guard("t1", SMALL).stash("api", json.dumps(value))
    assert out.mode == "stashed" and out.result_id
    return out.result_id


@pytest.mark.parametrize("key", AWKWARD)
def test_a_path_extract_reports_reads_back_exactly(tl: Taskloom, key: str) -> None:
    """For keys like ``it's`` extract reported ``$['it\\'s']``, and that path then matched
    nothing in read_result: the escape was written but never undone."""
    items = [{key: {"marker": f"marker{i}", "n": i}} for i in range(60)]
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, {"items": items})
    answer = g.extract(rid, "marker37")
    [where] = re.findall(r"^--- (\$.*)$", answer, re.M)[:1]
    body = g.read(rid, path=where).split("\n", 1)[1]
    assert body.startswith(f"{where}: ")
    value = json.loads(body[len(where) + 2 :])
    assert value in (items[37], items[37][key])  # the record, or the object holding the marker
    assert body == f"{where}: {json.dumps(value, indent=2, ensure_ascii=False)}"
    compact = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert g.extract(rid, where).endswith(f"--- {where}\n{compact}")


def test_every_path_of_a_wildcard_reads_back_its_value(tl: Taskloom) -> None:
    doc: dict[str, object] = {key: {"inner " + key: [i, key]} for i, key in enumerate(AWKWARD)}
    doc["pad"] = "x " * 800  # stashed, not passed through
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, doc)
    listing = g.read(rid, path="$..*")
    heads = [line.split(": ", 1) for line in listing.splitlines()[1:] if line.startswith("$")]
    assert len(heads) == 1 + 4 * len(AWKWARD)  # pad; each key, its inner key, its 2 items
    for where, start in heads:
        read = g.read(rid, path=where)
        assert "1 match" in read.splitlines()[0], where
        assert read.splitlines()[1] == f"{where}: {start}", where


@pytest.mark.parametrize(
    "path",
    [
        '$[?(@.title=="Issue 1 (x)")].number',
        "$[?(@.title=='Issue 1 (x)')].number",
        "$[?(@.title == 'it\\'s (quoted)' )].number",
        "$[?(@.title=='a)b]c')].number",
    ],
)
def test_a_quoted_filter_value_may_hold_a_parenthesis(tl: Taskloom, path: str) -> None:
    """The value stopped at the first ``)``: ``[?(@.title=="Issue 1 (x)")]`` could not be
    parsed."""
    titles = ["Issue 1 (x)", "it's (quoted)", "a)b]c"]
    rows = [{"number": n, "title": titles[n % 3], "body": "text " * 20} for n in range(30)]
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, rows)
    wanted = titles.index(re.findall(r"[\"'](.*)[\"']", path)[0].replace("\\'", "'"))
    numbers = [n for n in range(30) if n % 3 == wanted]
    read = g.read(rid, path=path)
    assert f"{len(numbers)} matches" in read
    assert [int(v) for v in re.findall(r"\]\.number: (\d+)", read)] == numbers


def issues() -> list[dict[str, object]]:
    """Sixty issues, every third one closed: the others have ``closed_at: null``."""
    return [
        {
            "number": i,
            "title": f"issue {i}",
            "closed_at": f"2019-05-{i % 28 + 1:02d}T00:00:00Z" if i % 3 == 0 else None,
        }
        for i in range(60)
    ]


@pytest.mark.parametrize(
    ("path", "numbers"),
    [
        ("$[?(@.closed_at==null)].number", [i for i in range(60) if i % 3]),
        ("$[?(@.closed_at!=null)].number", [i for i in range(60) if i % 3 == 0]),
        ('$[?(@.closed_at!="2019-05-01T00:00:00Z")].number', [i for i in range(60) if i]),
        ('$[?(@.closed_at=="2019-05-01T00:00:00Z")].number', [0]),
        ('$[?(@.closed_at>"2019-05-27")].number', [27, 54]),
        ("$[?(@.closed_at<5)].number", []),
        ("$[?(@.number!=true)].number", list(range(60))),
    ],
)
def test_filters_compare_across_nulls_and_types(
    tl: Taskloom, path: str, numbers: list[int]
) -> None:
    """All six comparisons were built for each node, so ``None > None`` raised and every
    filter on a field that is sometimes ``null`` matched nothing, ``==null`` included."""
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, issues())
    if not numbers:
        assert "matches nothing" in g.extract(rid, path)
        return
    found = re.findall(r"^\$\[\d+\]\.number: (\d+)$", g.read(rid, path=path), re.M)
    assert [int(n) for n in found] == numbers
