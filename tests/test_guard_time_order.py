"""The latest, newest, oldest or earliest record is picked by the instant its time field
holds: ISO times in any offset, epoch numbers, mail and log dates; not by their text."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask

BASE = datetime(2026, 3, 4, 6, 0, tzinfo=UTC)


def _moments(n: int) -> list[datetime]:
    """``n`` instants whose order differs from their order in the document."""
    return [BASE + timedelta(minutes=(i * 37) % n * 11) for i in range(n)]


def _picked(moments: list[Any], latest: bool) -> int:
    best = max(moments) if latest else min(moments)
    return moments.index(best)


def test_iso_times_in_several_offsets_are_ordered_as_instants(tl: Taskloom) -> None:
    offsets = [timezone(timedelta(hours=h)) for h in (-7, 0, 2, 5, 9)]
    moments = _moments(40)
    moments[13] = BASE + timedelta(days=1, hours=3)  # latest: at -07:00, "2026-03-05T02:…"
    moments[21] = BASE + timedelta(days=1, hours=2)  # at +09:00, "2026-03-05T17:…"
    moments[30] = BASE - timedelta(hours=3)  # earliest: at +09:00, "2026-03-04T12:…"
    zone = {13: offsets[0], 21: offsets[4], 30: offsets[4]}
    rows = [
        {
            "ref": f"evt-{i}",
            "payload": {"n": i},
            "occurredOn": m.astimezone(zone.get(i, offsets[i % 5])).isoformat(),
        }
        for i, m in enumerate(moments)
    ]
    doc = json.dumps({"cursor": "abc", "Events": rows})
    latest, oldest = ask(tl, doc, "Which is the latest event?", "Show the oldest event")
    assert "$.Events[13]" in latest and "latest occurredOn" in latest
    assert "$.Events[30]" in oldest and "earliest occurredOn" in oldest


def test_epoch_seconds_and_milliseconds_are_ordered_as_instants(tl: Taskloom) -> None:
    moments = _moments(30)
    rows = [
        {
            "id": 1_700_000_000 + i,  # an id in the epoch's range, in no field of time
            "build": f"b{i}",
            "finished_ts": int(m.timestamp() * (1000 if i % 2 else 1)),
        }
        for i, m in enumerate(moments)
    ]
    newest, earliest = ask(
        tl, json.dumps(rows), "What is the newest record?", "What is the earliest record?"
    )
    assert f"$[{_picked(moments, True)}]" in newest and "latest finished_ts" in newest
    assert f"$[{_picked(moments, False)}]" in earliest and "earliest finished_ts" in earliest


def test_mail_dates_and_log_times_are_ordered_as_instants(tl: Taskloom) -> None:
    moments = _moments(25)
    mails = [
        {
            "Subject": f"re: ticket {i}",
            "Date": format_datetime(m.astimezone(timezone(timedelta(hours=i % 4)))),
        }
        for i, m in enumerate(moments)
    ]
    hits = [
        {
            "client": f"10.0.0.{i}",
            "stamp": m.astimezone(timezone(timedelta(hours=-(i % 3)))).strftime(
                "[%d/%b/%Y:%H:%M:%S %z]"
            ),
        }
        for i, m in enumerate(moments)
    ]
    recent, first = ask(
        tl,
        json.dumps({"mailbox": {"messages": mails}}),
        "Which is the most recent message?",
        "Which is the earliest message?",
    )
    (hit,) = ask(tl, json.dumps({"hits": hits, "total": len(hits)}), "Show the latest hit")
    assert f"$.mailbox.messages[{_picked(moments, True)}]" in recent
    assert f"$.mailbox.messages[{_picked(moments, False)}]" in first
    assert f"$.hits[{_picked(moments, True)}]" in hit and "latest stamp" in hit


def test_a_time_field_that_does_not_always_parse_is_ordered_as_text(tl: Taskloom) -> None:
    rows = [{"k": i, "seen": f"2026-01-{(i * 7) % 28 + 1:02d} (approx)"} for i in range(30)]
    rows[4]["seen"] = "2026-01-09T10:00:00+02:00"
    gold = max(range(30), key=lambda i: (rows[i]["seen"], i))
    (latest,) = ask(tl, json.dumps({"rows": rows}), "Which is the latest row?")
    assert f"$.rows[{gold}]" in latest and "compared as text" in latest
