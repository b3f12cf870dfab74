"""Sizes and percentages written for people, a marker gutter and a legend footer around a
fixed-width table, and words of magnitude on a number field of few values."""

from __future__ import annotations

import json

import pytest

from taskloom.client import Taskloom
from taskloom.guard import GuardConfig
from taskloom.guard.quantities import BYTES, column_kind, size
from tests.test_guard_text_records import ask

TIGHT = GuardConfig(threshold_tokens=60, compacted_max_tokens=10, preview_chars=200)
IMAGES = [
    ("registry.local/api", "v3", "940MB"),
    ("registry.local/worker", "v3", "1.7GB"),
    ("registry.local/web", "v9", "88.2MB"),
    ("mirror/postgres", "15", "412MB"),
    ("mirror/busybox", "1.36", "4.26MB"),
    ("registry.local/ml-runtime", "cuda", "6.05GB"),
    ("registry.local/cron", "v1", "501MB"),
] * 1


def _stash(tl: Taskloom, name: str, text: str) -> tuple[object, str]:
    g = tl.guard("t1", config=TIGHT)
    out = g.stash(name, text)
    assert out.result_id
    return g, out.result_id


def _images() -> str:
    head = f"{'REPOSITORY':<28}{'TAG':<8}{'SIZE':>8}  CREATED\n"
    rows = "".join(f"{r:<28}{t:<8}{s:>8}  {3 + i} days ago\n" for i, (r, t, s) in enumerate(IMAGES))
    return head + rows * 6


@pytest.mark.parametrize(
    ("text", "bytes_"),
    [("1.5TiB", 1.5 * 1024**4), ("980Mi", 980 * 1024**2), ("2.3 GB", 2.3e9), ("4.0K", 4096.0),
     ("512", 512.0), ("12kB", 12_000.0)],
)  # fmt: skip
def test_a_size_reads_in_the_convention_its_unit_writes(text: str, bytes_: float) -> None:
    read = size(text)
    assert read is not None and read[0] == pytest.approx(bytes_)


def test_a_column_mixing_bare_letters_with_decimal_units_is_no_sizes() -> None:
    assert column_kind(["1.2G", "300M", "4K"]) == BYTES
    assert column_kind(["1.2G", "300MB", "4K"]) is None
    assert column_kind(["12", "300", "4"]) is None


def test_a_size_comparison_counts_rows_in_decimal_units(tl: Taskloom) -> None:
    g, rid = _stash(tl, "docker images", _images())
    answer = g.extract(rid, "how many images are over 500MB?")  # type: ignore[attr-defined]
    assert "Exact count: 24 " in answer  # 940MB, 1.7GB, 6.05GB, 501MB, six times each
    assert "powers of 1000" in answer


def test_the_biggest_row_is_ranked_by_its_size(tl: Taskloom) -> None:
    g, rid = _stash(tl, "docker images", _images())
    answer = g.extract(rid, "which repository is the smallest?")  # type: ignore[attr-defined]
    assert "lowest SIZE" in answer and "mirror/busybox" in answer.split("\n---")[1]


def test_a_word_no_field_takes_makes_no_size_count(tl: Taskloom) -> None:
    text = "".join(f"{s}\t./vendor/pkg-{i}\n" for i, s in enumerate(["2.0G", "12M", "3.3G"] * 40))
    g, rid = _stash(tl, "du", text)
    assert "Exact count: 80 " in g.extract(rid, "how many are 1G or bigger?")  # type: ignore[attr-defined]
    assert "Exact count" not in g.extract(rid, "how many vendored ones are 1G or bigger?")  # type: ignore[attr-defined]


def test_several_size_columns_and_none_named_give_no_ranking(tl: Taskloom) -> None:
    head = f"{'VOLUME':<12}{'SIZE':>8}{'USED':>8}{'FREE':>8}\n"
    rows = "".join(
        f"{'vol' + str(i):<12}{s:>8}{u:>8}{f:>8}\n"
        for i, (s, u, f) in enumerate([("10G", "2G", "8G"), ("40G", "39G", "1G")] * 30)
    )
    g, rid = _stash(tl, "volumes", head + rows)
    assert "records with the highest" not in g.extract(rid, "which volume is the largest?")  # type: ignore[attr-defined]
    named = g.extract(rid, "which volume has the largest FREE?")  # type: ignore[attr-defined]
    assert "highest FREE" in named and "vol0 " in named.split("\n---")[1]


def test_a_marker_gutter_and_a_legend_footer_leave_the_table(tl: Taskloom) -> None:
    rows = [("edge-proxy", "up", "ok"), ("billing-queue", "down", "crashloop")] * 50
    body = "".join(
        f"{'>' if st == 'down' else ' '} {n + str(i):<18}{st:<7}{h}\n"
        for i, (n, st, h) in enumerate(rows)
    )
    text = (
        f"  {'SERVICE':<18}{'STATE':<7}HEALTH\n"
        + body
        + "\nSTATE  = whether it runs\n100 services.\n"
    )
    g, rid = _stash(tl, "svc", text)
    answer = g.extract(rid, "how many services are down?")  # type: ignore[attr-defined]
    assert "Exact count: 50 " in answer


def test_a_word_of_magnitude_ranks_a_number_field_of_few_values(tl: Taskloom) -> None:
    builds = [{"job": f"job-{i}", "retries": i % 3} for i in range(60)]
    builds[41]["retries"] = 9
    g, rid = _stash(tl, "builds", json.dumps(builds))
    answer = g.extract(rid, "which build has the highest retries?")  # type: ignore[attr-defined]
    assert "job-41" in answer and "Tally" not in answer


def _pools() -> str:
    """Columns named with a lone ``/`` (``USED / SIZE``), cells holding spaces, and a
    percentage column named with a spaced ``%``."""
    rows = [(f"pool-{i:03d}", f"{i % 50 + 1}GiB / 64GiB", f"{(i * 37) % 90}.{i % 10}%", i % 80)
            for i in range(150)]  # fmt: skip
    rows[77] = ("pool-hot", "63GiB / 64GiB", "99.5%", 3)
    head = f"{'POOL':<11}{'USED / SIZE':<16}{'LOAD %':<9}CLIENTS\n"
    return head + "".join(f"{p:<11}{u:<16}{ld:<9}{c}\n" for p, u, ld, c in rows)


def test_a_column_named_with_a_slash_reads_and_a_named_percentage_ranks(tl: Taskloom) -> None:
    """A header word ``/`` made the header no fixed-width table's; and "the highest load"
    over ``LOAD %`` was a tally of the percentages as text, not a ranking by them."""
    top, count = ask(
        tl,
        _pools(),
        "which pool has the highest load?",
        "how many pools have more than 70 CLIENTS?",
    )
    assert "pool-hot" in top and '"99.5%"' in top
    assert "read as a percentage" in top
    assert f"Exact count: {sum(i % 80 > 70 for i in range(150) if i != 77)} " in count
