"""Three general readings found missing on unseen results: a value two mirrored fields hold
under a key the question names (``owner.name``/``owner.handle``), a two-word key the
question says in the other order, in another form ("release patched" for
``patched_release``), and a run of ``key=value`` lines among other lines read as records."""

from __future__ import annotations

import json
import random

from taskloom.guard.exact import answer
from taskloom.guard.extract import extract_local
from taskloom.guard.jsondoc import JsonDoc
from taskloom.guard.pairlines import pair_records
from taskloom.guard.table import cell, read_table


def _alerts(rng: random.Random) -> list[dict[str, object]]:
    teams = ["payments-core", "edge", "data-plat"]
    rows: list[dict[str, object]] = []
    for i in range(240):
        handle = rng.choice(teams)
        rows.append(
            {
                "alertId": f"AL-{i:05d}",
                "severity": rng.choice(["p1", "p2", "p3"]),
                "owner": {"name": handle, "handle": handle, "oncall": f"{handle}@acme.test"},
                "summary": f"{rng.choice(['disk', 'latency', 'errors'])} on {handle}-node",
            }
        )
    return rows


def test_a_value_two_mirrored_fields_hold_under_a_named_key_is_one_condition() -> None:
    rows = _alerts(random.Random(3))
    want = sum(r["owner"]["handle"] == "data-plat" for r in rows)  # type: ignore[index]
    found = answer(JsonDoc(json.dumps(rows)), "how many alerts belong to the data-plat owner?")
    assert found is not None and found.exact and found.total == want


def test_mirrored_fields_the_question_does_not_name_stay_ambiguous() -> None:
    """``from`` and ``to`` hold the same city as often, but are not the same field:
    "how many trips with Lyon?" names neither, so it is no condition."""
    rows = [{"id": i, "leg": {"from": c, "to": c}} for i, c in enumerate(["Lyon", "Oslo"] * 40)]
    found = answer(JsonDoc(json.dumps(rows)), "how many trips with Lyon?")
    assert found is None or not found.exact or found.path.count("Lyon") <= 1
    found = answer(JsonDoc(json.dumps(rows)), "how many trips go to Lyon?")
    assert found is None or found.total == 40


def test_a_two_word_key_said_in_the_other_order_is_the_field_asked() -> None:
    """The inner record holding the id, whose ``patched_in`` the question asks ("in which
    release is it patched"), wins over the outer record's ``release``."""
    doc = {
        "modules": [
            {
                "module": f"mod{m}",
                "release": f"{m}.0.0",
                "advisories": [
                    {"ref": f"ADV-{m}-{k}", "patched_release": f"{m}.{k + 1}.3"} for k in range(4)
                ],
            }
            for m in range(30)
        ]
    }
    out = extract_local(json.dumps(doc), True, "which release patched ADV-17-2?")
    text = out.summary + "".join(body for _where, body in out.fragments)
    assert "17.3.3" in text and "patched_release" in out.path


def test_a_run_of_pair_lines_reads_as_records() -> None:
    rng = random.Random(11)
    lines = ["[pool stats]", "uptime=88123", ""]
    users = [f"svc-{w}" for w in ("ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen")]
    hits = {}
    for u in users:
        hits[u] = rng.randrange(10, 10**6)
        lines.append(f"{u}=active={rng.randrange(9)} waiting={rng.randrange(5)} hits={hits[u]}")
    lines += ["", "# end"]
    text = "\n".join(lines) + "\n"
    table = read_table(text)
    assert table is not None and table.kind == "pair lines" and len(table.records) == 8
    assert table.records[0]["name"] == "svc-ant" and table.spans[0] == (4, 4)
    top = max(hits, key=lambda u: hits[u])
    out = extract_local(text, False, "which pool user has the most hits?")
    assert top in "".join(body for _where, body in out.fragments)


def test_logfmt_lines_without_a_name_are_records_too() -> None:
    lines = [
        f"level={lv} dur_ms={d} route=/r{d % 3}" for d, lv in zip(range(20), "ew" * 10, strict=True)
    ]
    found = pair_records(lines, cell)
    assert found is not None and found[0][3] == {"level": "w", "dur_ms": 3, "route": "/r0"}


def test_a_few_pair_lines_in_a_log_are_no_table() -> None:
    lines = [f"12:00:{s:02d} INFO request served in {s} ms" for s in range(30)]
    lines[4:9] = [f"retry={k} backoff={k * 2}" for k in range(5)]
    assert pair_records(lines, cell) is None
    assert pair_records(["a=1 b=2"] * 4, cell) is None  # under the run's minimum
