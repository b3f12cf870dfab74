"""JSON is re-written only when it comes back exactly: a number its encoders would write
differently keeps the whole output as the text it was, in every view of it."""

from __future__ import annotations

import json
import math

import pytest

from taskloom.client import Taskloom
from tests.test_guard_store import SMALL

ALTERED = ["12345678901234567890.5", "0.30000000000000000001", "1e-400", "-0"]
"""Numbers a double cannot hold with their value: the output stays text."""
RESPELLED = ["0.5", "12.75", "1e-05", "-2.5e-05", "1e3", "3.0e8", "1.50", "1E5", "1e-7", "1e16"]
"""Numbers a double holds exactly, whatever their spelling: typical API JSON."""


def records(number: str, n: int = 150) -> str:
    """A JSON array, as a tool writes it, of ``n`` records each holding ``number``."""
    rows = [f'{{"id": {i}, "marker": "m{i}", "amount": {number}}}' for i in range(n)]
    return "[" + ", ".join(rows) + "]"


@pytest.mark.parametrize("number", ALTERED)
def test_a_small_result_passes_with_its_numbers_as_written(tl: Taskloom, number: str) -> None:
    text = f'{{"amount": {number}}}'
    assert tl.guard("t1", SMALL).wrap("api", text) == text


@pytest.mark.parametrize("number", ALTERED)
def test_a_stashed_result_shows_reads_and_extracts_its_numbers_as_written(
    tl: Taskloom, number: str
) -> None:
    """``12345678901234567890.5`` came back as ``1.2345678901234567e+19`` in the preview, in
    ``read_result`` and in ``extract_from_result``: data changed with no sign of it."""
    g = tl.guard("t1", SMALL)
    out = g.stash("api", records(number))
    assert out.mode == "stashed" and out.result_id
    assert f'"amount": {number}' in out.text  # the preview
    assert f'"amount": {number}' in g.read(out.result_id, lines="1-5")
    assert f'"amount": {number}' in g.extract(out.result_id, "m7")


@pytest.mark.parametrize("number", ["1.5", "0.1", "-2.25", "1e+16", "5e-324", "0.0001", "7"])
def test_numbers_written_as_the_encoders_write_them_stay_json(tl: Taskloom, number: str) -> None:
    g = tl.guard("t1", SMALL)
    out = g.stash("api", records(number))
    assert out.result_id and "JSON array of 150 items" in out.text
    read = g.read(out.result_id, path="$[7].amount")
    assert read.endswith(f"$[7].amount: {number}")
    assert json.loads(read.rsplit(": ", 1)[1]) == json.loads(number)


@pytest.mark.parametrize("number", RESPELLED)
def test_numbers_spelled_otherwise_keep_their_value_and_stay_json(
    tl: Taskloom, number: str
) -> None:
    """Asking the encoders to write ``1e-05`` or ``1.50`` back verbatim kept such outputs as
    text, and ``read_result(path=...)`` said the result was text."""
    g = tl.guard("t1", SMALL)
    out = g.stash("api", records(number))
    assert out.result_id and "JSON array of 150 items" in out.text
    read = g.read(out.result_id, path="$[7].amount")
    assert json.loads(read.rsplit(": ", 1)[1]) == json.loads(number)
    found = g.extract(out.result_id, "$[?(@.amount==" + number + ")].marker")
    assert "method: JSONPath" in found and '"m7"' in found


@pytest.mark.parametrize(("number", "written"), [(math.nan, "NaN"), (-math.inf, "-Infinity")])
def test_a_python_value_holding_nan_is_not_shown_as_null(
    tl: Taskloom, number: float, written: str
) -> None:
    """A tool returning a Python value with ``float("nan")`` in it (a pandas row, a metric
    not computed) was encoded by orjson, which writes ``null``: the preview, read_result and
    extract_from_result all said null. It is written out as JSON text and kept as text, as
    JSON text holding ``NaN`` is."""
    g = tl.guard("t1", SMALL)
    rows = [{"id": i, "marker": f"m{i}", "amount": number if i == 7 else i} for i in range(150)]
    out = g.stash("api", rows)
    assert out.mode == "stashed" and out.result_id and "Shape: text" in out.text
    assert f'"marker": "m7", "amount": {written}}}' in g.extract(out.result_id, "m7")
    assert "null" not in g.read(out.result_id, lines="1-1")
    small = g.wrap("api", {"amount": number})
    assert small == f'{{"amount": {written}}}'


def _parcels() -> list[dict[str, object]]:
    return [
        {
            "parcel": f"pc-{i:04d}",
            "shipping": {"carrier": {"code": ("dhl", "ups", "gls")[i % 3], "depot": f"d{i % 5}"}},
            "retry_count": (i * 7) % 4 if i % 5 else None,
            "grams": 100 + i,
        }
        for i in range(240)
    ]


def test_a_count_field_named_by_what_it_counts_is_above_zero(tl: Taskloom) -> None:
    """ "retries" named no field (``retry_count``): no exact count."""
    from tests.test_guard_text_records import ask

    parcels = _parcels()
    gold = sum(1 for p in parcels if (p["retry_count"] or 0) > 0)  # type: ignore[operator]
    (answer,) = ask(tl, json.dumps({"parcels": parcels}), "how many parcels have retries?")
    assert f"Exact count: {gold} " in answer and "retry_count > 0" in answer
