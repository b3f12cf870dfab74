"""General readings found missing on unseen results (the probe6 and probe7 shapes), each
checked here on data written another way than the benchmark's."""

from __future__ import annotations

import json
import random

from taskloom.guard.extract import extract_local
from taskloom.guard.fieldpairs import paired_rows


def _metric_rows(rng: random.Random) -> list[list[dict[str, str]]]:
    rows = []
    for i in range(120):
        rows.append(
            [
                {"Name": "host", "Value": f"node-{i:03d}"},
                {"Name": "region", "Value": rng.choice(["eu-west", "us-east", "ap-south"])},
                {"Name": "latency_ms", "Value": f"{rng.uniform(1, 900):.1f}"},
            ]
        )
    return rows


def test_rows_of_name_value_pairs_are_counted_as_records() -> None:
    rows = _metric_rows(random.Random(5))
    want = sum(r[1]["Value"] == "ap-south" for r in rows)
    out = extract_local(json.dumps({"data": rows}), True, "how many hosts are in region ap-south?")
    assert f"Exact count: {want}" in out.summary
    assert "name/value pairs" in out.summary


def test_a_lone_list_of_pairs_stays_one_records_members() -> None:
    tags = {"Tags": [{"Key": "env", "Value": "prod"}, {"Key": "team", "Value": "core"}]}
    assert paired_rows(json.dumps(tags)) is None
    repeated = [[{"key": "a", "value": 1}, {"key": "a", "value": 2}]] * 3
    assert paired_rows(json.dumps(repeated)) is None


def test_numbers_written_as_strings_rank_a_top_by_question() -> None:
    rows = _metric_rows(random.Random(8))
    slow = max(rows, key=lambda r: float(r[2]["Value"]))
    out = extract_local(json.dumps({"data": rows}), True, "which host has the highest latency_ms?")
    shown = out.summary + "".join(body for _w, body in out.fragments)
    assert slow[0]["Value"] in shown


def test_string_numbers_rank_in_plain_records_too() -> None:
    records = [{"sku": f"S-{i:03d}", "price": f"{(i * 37) % 101}.25"} for i in range(90)]
    top = max(records, key=lambda r: float(r["price"]))
    out = extract_local(json.dumps(records), True, "which sku has the highest price?")
    shown = out.summary + "".join(body for _w, body in out.fragments)
    assert top["sku"] in shown


def _sampled(rng: random.Random) -> tuple[str, list[list[tuple[str, int, float]]]]:
    """A sampler's output: a banner, then per interval a timestamp line and a table whose
    columns are padded to that interval's widths."""
    out = ["sampler v2 -- 3 intervals of 10s", ""]
    intervals = []
    for k in range(3):
        rows = [
            (f"queue-{q}{'x' * (k * q % 3)}", rng.randrange(0, 9000), round(rng.uniform(0, 99), 1))
            for q in range(12)
        ]
        intervals.append(rows)
        w = max(len(r[0]) for r in rows) + 2
        out += [f"interval {k + 1} at 12:00:{k * 10:02d}", "QUEUE".ljust(w) + "DEPTH  BUSY%  STATE"]
        out += [f"{n.ljust(w)}{d:<7d}{b:<7.1f}{'hot' if b > 50 else 'ok'}" for n, d, b in rows]
        out.append("")
    return "\n".join(out), intervals


def test_blocks_under_a_repeated_header_are_one_table() -> None:
    text, intervals = _sampled(random.Random(4))
    want = sum(r[2] > 50 for rows in intervals for r in rows)
    out = extract_local(text, False, "how many queues have BUSY% above 50?")
    assert f"Exact count: {want} " in out.summary


def test_the_last_block_is_read_alone_when_the_question_names_it() -> None:
    text, intervals = _sampled(random.Random(6))
    last = intervals[-1]
    want = sum(r[2] > 50 for r in last)
    out = extract_local(text, False, "how many queues have BUSY% above 50 in the last interval?")
    assert f"Exact count: {want} " in out.summary
    out = extract_local(text, False, "which queue has the highest DEPTH in the first interval?")
    first = max(intervals[0], key=lambda r: r[1])
    assert "the first of 3 blocks" in out.summary
    assert first[0] in "".join(b for _w, b in out.fragments)


def _inventory(rng: random.Random) -> tuple[str, list[tuple[str, bool, int]]]:
    """A TOML inventory: ``[[server]]`` tables with a sub-table and a multi-line array."""
    out = ['title = "fleet"', "", "[owner]", 'team = "infra"', ""]
    servers = []
    for i in range(60):
        on, cpus = rng.random() < 0.4, rng.choice([2, 4, 8, 16])
        servers.append((f"srv-{i:02d}-{rng.choice(['fra', 'ams', 'waw'])}", on, cpus))
        out += ["[[server]]", f'hostname = "{servers[-1][0]}"', f"enabled = {str(on).lower()}"]
        out += ["roles = [", '  "web",', '  "cache",', "]", "", "[server.limits]", f"cpus = {cpus}"]
        out.append("")
    out += ["[defaults]", "enabled = false"]
    return "\n".join(out) + "\n", servers


def test_an_array_of_toml_tables_is_counted_as_records() -> None:
    text, servers = _inventory(random.Random(2))
    out = extract_local(text, False, "how many servers are enabled?")
    assert f"Exact count: {sum(s[1] for s in servers)} " in out.summary
    out = extract_local(text, False, "how many servers have more than 4 cpus?")
    assert f"Exact count: {sum(s[2] > 4 for s in servers)} " in out.summary


def test_the_last_record_named_by_the_tables_name() -> None:
    text, servers = _inventory(random.Random(9))
    out = extract_local(text, False, "which is the last server?")
    assert servers[-1][0] in "".join(b for _w, b in out.fragments)


def _relay_log(rng: random.Random) -> tuple[str, list[tuple[str, int, int]]]:
    """A relay's event log, then a closing summary of ``name : key=value`` lines."""
    out = [f"{i:05d} relay event {rng.choice(['ack', 'nack', 'tick'])} on link-{i % 30:02d}"
           for i in range(300)]  # fmt: skip
    out += ["", "== SUMMARY =="]
    links = []
    for k in range(30):
        sent, dropped = rng.randrange(100, 900), rng.choice([0, 0, 0, rng.randrange(1, 9)])
        links.append((f"link-{k:02d}", sent, dropped))
        out.append(f"link-{k:02d}   :  sent={sent}  dropped={dropped}  late={rng.randrange(5)}")
    return "\n".join(out) + "\n", links


def test_closing_pair_lines_are_records_and_a_count_word_means_above_zero() -> None:
    text, links = _relay_log(random.Random(12))
    out = extract_local(text, False, "how many links dropped?")
    assert f"Exact count: {sum(d > 0 for _n, _s, d in links)} " in out.summary
    out = extract_local(text, False, "how many links have sent > 500?")
    assert f"Exact count: {sum(s > 500 for _n, s, _d in links)} " in out.summary


def test_a_count_word_with_a_value_after_it_is_no_above_zero_condition() -> None:
    text, links = _relay_log(random.Random(13))
    out = extract_local(text, False, "how many links have dropped 0?")
    assert f"Exact count: {sum(d == 0 for _n, _s, d in links)} " in out.summary


def test_a_count_field_named_by_a_ranking_question_is_ranked_not_filtered() -> None:
    files = [{"path": f"src/m{i:02d}.ts", "errorCount": (i * 7) % 41} for i in range(40)]
    top = max(files, key=lambda f: f["errorCount"])
    out = extract_local(json.dumps(files), True, "which file has the highest errorCount?")
    assert top["path"] in out.summary + "".join(b for _w, b in out.fragments)


def test_a_list_of_the_records_whose_count_word_is_above_zero() -> None:
    text, links = _relay_log(random.Random(14))
    out = extract_local(text, False, "which links were dropped?")
    want = [n for n, _s, d in links if d > 0]
    assert f"Exact list: {len(want)} row" in out.summary


def test_a_closing_summarys_answer_also_shows_the_best_block_of_the_rest() -> None:
    text, _links = _relay_log(random.Random(15))
    text = text.replace("00042 relay event", "00042 relay event quarantine", 1)
    out = extract_local(text, False, "which event quarantine hit link-12?")
    bodies = [b for _w, b in out.fragments]
    assert any(b.startswith("link-12 ") for b in bodies)
    assert any("00042 relay event quarantine" in b for b in bodies)


def test_slowest_and_fastest_rank_by_the_one_duration_field() -> None:
    rng = random.Random(21)
    jobs = [
        {"job": f"build-{i:03d}", "retries": rng.randrange(4), "elapsed_s": rng.randrange(10**5)}
        for i in range(70)
    ]
    slow = max(jobs, key=lambda j: j["elapsed_s"])
    fast = min(jobs, key=lambda j: j["elapsed_s"])
    out = extract_local(json.dumps({"jobs": jobs}), True, "which job was the slowest?")
    assert slow["job"] in "".join(b for _w, b in out.fragments)
    out = extract_local(json.dumps({"jobs": jobs}), True, "which job was fastest?")
    assert fast["job"] in "".join(b for _w, b in out.fragments)


def test_a_verb_of_writing_lines_is_no_word_the_lines_must_hold() -> None:
    rng = random.Random(31)
    lines = []
    for i in range(400):
        disk = rng.choice(["vdb", "vdc"])
        kind = rng.choice(["WARN timeout", "ERROR checksum", "INFO ok"])
        lines.append(f"{i:06d} {kind} on {disk}")
    text = "\n".join(lines) + "\n"
    want = sum(" ERROR " in line and line.endswith("vdc") for line in lines)
    out = extract_local(text, False, "how many ERROR lines were reported for vdc?")
    assert f"Exact count: {want} " in out.summary


def test_a_verb_the_text_holds_stays_a_word_of_the_lines() -> None:
    text = "\n".join(f"{i} ERROR job {'logged' if i % 3 else 'done'}" for i in range(60))
    out = extract_local(text, False, "how many ERROR lines logged?")
    assert f"Exact count: {sum(1 for i in range(60) if i % 3)} " in out.summary


def _bucket(rng: random.Random) -> tuple[str, list[tuple[str, int, str]]]:
    """A dated listing with no header (minutes only), then a two-line footer."""
    rows = []
    for i in range(150):
        day = f"2023-11-{rng.randrange(1, 8):02d}"
        rows.append((day, rng.randrange(0, 10**8), f"reports/{rng.choice(['q3', 'q4'])}-{i}.pdf"))
    lines = [
        f"{d} {rng.randrange(24):02d}:{rng.randrange(60):02d}  {n:>10}  {k}" for d, n, k in rows
    ]
    lines += ["", f"Objects: {len(rows)}", f"Bytes: {sum(r[1] for r in rows)}"]
    return "\n".join(lines) + "\n", rows


def test_a_dated_listing_with_no_header_is_a_table() -> None:
    text, rows = _bucket(random.Random(41))
    out = extract_local(text, False, "how many files have date 2023-11-05?")
    assert f"Exact count: {sum(r[0] == '2023-11-05' for r in rows)} " in out.summary


def test_biggest_and_smallest_rank_by_the_one_size_field() -> None:
    text, rows = _bucket(random.Random(42))
    big = max(rows, key=lambda r: r[1])
    small = min(rows, key=lambda r: r[1])
    out = extract_local(text, False, "which file is the biggest?")
    assert big[2] in "".join(b for _w, b in out.fragments)
    out = extract_local(text, False, "which file is the smallest?")
    assert small[2] in "".join(b for _w, b in out.fragments)
