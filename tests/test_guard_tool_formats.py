"""Questions on the output of common developer tools: a table whose header is underlined,
compiler diagnostics counted by their level, a test stream's events counted by what they
name."""

from __future__ import annotations

import json

from taskloom.client import Taskloom
from tests.test_guard_text_records import ask


def _pip_outdated() -> str:
    rows = [(f"pkg-{i}", f"1.{i}.0", f"2.{i}.0", "sdist" if i % 5 == 0 else "wheel")
            for i in range(200)]  # fmt: skip
    head = f"{'Package':<10} {'Version':<8} {'Latest':<8} Type\n"
    rule = f"{'-' * 10} {'-' * 8} {'-' * 8} -----\n"
    return head + rule + "".join(f"{a:<10} {b:<8} {c:<8} {d}\n" for a, b, c, d in rows)


def test_a_rule_under_the_header_is_no_row(tl: Taskloom) -> None:
    """``pip list --outdated`` underlines its header with dashes: the rule was read as a
    first row (a package named ``----------``)."""
    count, first = ask(tl, _pip_outdated(), "how many rows have Type sdist?", "the first row")
    assert "Exact count: 40 " in count
    assert "pkg-0      1.0.0    2.0.0    sdist" in first
    assert "----------" not in first.split("Header")[0]


def test_a_rule_under_a_columns_header_is_no_row(tl: Taskloom) -> None:
    text = "USER PID %CPU COMMAND\n---- --- ---- -------\n" + "".join(
        f"{('root', 'www')[i % 2]} {100 + i} 0.{i % 10} /bin/job --n {i}\n" for i in range(150)
    )
    (count,) = ask(tl, text, "How many processes does user www own?")
    assert "Exact count: 75 " in count


def _cargo() -> str:
    blocks = []
    for i in range(120):
        code = ("E0308", "E0599", "E0425")[i % 3]
        head = f"error[{code}]: problem {i}" if i % 4 == 0 else f"warning: unused `v{i}`"
        blocks.append(f"{head}\n  --> src/m{i}.rs:{i + 1}:5\n   |\n")
    return "\n".join(blocks) + "\nerror: could not compile `x` due to 30 previous errors\n"


def test_a_plural_severity_counts_lines_holding_it_in_either_number(tl: Taskloom) -> None:
    """ "how many E0308 errors" found no line holding the word ``errors`` with ``E0308``
    (a compiler writes ``error[E0308]``), so no count was stated."""
    gold = sum(1 for i in range(120) if i % 4 == 0 and i % 3 == 0)
    coded, every = ask(tl, _cargo(), "how many E0308 errors are there?", "how many errors?")
    assert f"Exact count: {gold} " in coded
    assert "'error' or 'errors'" in coded
    assert "Exact count: 31 " in every  # 30 diagnostics and the closing error line


def _go_test_events() -> str:
    events: list[dict[str, object]] = []
    for p in ("shop/cart", "shop/pay"):
        for k in range(40):
            name = f"TestCase{k}"
            outcome = "skip" if k % 8 == 0 else "fail" if k % 13 == 0 else "pass"
            events.append({"Action": "run", "Package": p, "Test": name})
            events.append({"Action": outcome, "Package": p, "Test": name, "Elapsed": k / 10})
        events.append({"Action": "pass", "Package": p, "Elapsed": 3.5})
    return "".join(json.dumps(e) + "\n" for e in events)


def test_a_verb_meets_a_value_of_its_stem_and_the_counted_noun_a_field(tl: Taskloom) -> None:
    """ "how many tests were skipped?" over ``go test -json`` events: "skipped" is the
    value ``skip``, and "tests" the records that hold a ``Test`` (a package's own ``pass``
    event holds none): before, "tests" was taken for a field asked for, and no count."""
    skipped, passed = ask(
        tl,
        _go_test_events(),
        "how many tests were skipped?",
        "how many tests passed in shop/pay?",
    )
    assert "Exact count: 10 " in skipped
    assert "Action == 'skip'" in skipped and "Test is present" in skipped
    gold = sum(1 for k in range(40) if k % 8 != 0 and k % 13 != 0)
    assert f"Exact count: {gold} " in passed


def test_a_counted_noun_naming_a_field_every_row_holds_names_the_rows(tl: Taskloom) -> None:
    text = "Package,Version,Type\n" + "".join(
        f"p{i},1.{i},{('wheel', 'sdist')[i % 4 == 0]}\n" for i in range(100)
    )
    (count,) = ask(tl, text, "how many packages are sdists?")
    assert "Exact count: 25 " in count


def test_a_stem_that_two_values_share_sets_no_condition(tl: Taskloom) -> None:
    """ "failed" could be ``fail`` or ``fails``: no condition is guessed, so no count."""
    rows = [{"id": i, "kind": ("fail", "fails", "pass")[i % 3]} for i in range(90)]
    (count,) = ask(tl, json.dumps(rows), "how many records failed?")
    assert "Exact count" not in count


def _access_log() -> str:
    paths = ("/login", "/api/cart", "/healthz")
    lines = []
    for i in range(300):
        ip = f"10.0.0.{i % 7}"
        method = ("GET", "POST")[i % 2]
        status = (200, 404, 500, 200, 301)[i % 5]
        lines.append(
            f'{ip} - - [05/Mar/2024:10:{i // 60:02d}:{i % 60:02d} +0000] "{method} '
            f'{paths[i % 3]} HTTP/1.1" {status} {1000 + i} "-" "agent/{i % 4}"'
        )
    return "\n".join(lines) + "\n"


def test_an_access_log_is_read_as_requests(tl: Taskloom) -> None:
    """A combined-format access log was no table: a count of its requests by status,
    method and path got line ranking only, no count."""
    text = _access_log()
    lines = text.splitlines()
    gold = sum(1 for i in range(300) if i % 5 == 1)
    both = sum(1 for i in range(300) if i % 2 == 1 and i % 3 == 1 and i % 5 == 2)
    count, post, top = ask(
        tl,
        text,
        "how many requests returned 404?",
        "how many POST requests to /api/cart got a 500?",
        "which ip sent the most requests?",
    )
    assert f"Exact count: {gold} " in count and "status == 404" in count
    assert f"Exact count: {both} " in post
    assert "method == 'POST'" in post and "path == '/api/cart'" in post
    assert '"10.0.0.0": 43' in top
    assert lines[1] in count


def test_a_bare_number_after_a_word_of_size_or_comparison_sets_no_condition(
    tl: Taskloom,
) -> None:
    rows = [{"name": f"n{i}", "replicas": i % 4} for i in range(80)]
    (count,) = ask(tl, json.dumps(rows), "how many records have more than 2 replicas?")
    assert "Exact count: 20 " in count and "replicas > 2" in count
    (top,) = ask(tl, json.dumps(rows), "list the top 3 names")
    assert "replicas == 3" not in top


def test_the_record_with_the_most_of_a_number_a_part_of_its_name_says(tl: Taskloom) -> None:
    """ "which line item cost the most?" tallied ``line_item`` (each value once) instead of
    ranking the rows by ``unblended_cost``."""
    rows = [(f"li-{i:05x}", f"{(i * 37) % 500}.25", f"{i * 7 % 997 + 2}.5") for i in range(400)]
    rows[123] = ("li-top", "9999.99", "1.5")
    text = "line_item,unblended_cost,usage_amount\n" + "".join(",".join(r) + "\n" for r in rows)
    top, low = ask(
        tl, text, "which line item cost the most?", "which line item has the least usage?"
    )
    assert "highest unblended_cost" in top and "li-top,9999.99" in top
    assert "lowest usage_amount" in low


def test_a_count_of_lines_in_the_result_named_by_a_word_it_lacks(tl: Taskloom) -> None:
    """ "how many CRON lines are in the journal?": ``journal`` names the result (no line
    holds it), so it is no word the lines must hold; a word the text holds stays one."""
    lines = [
        f"Mar 05 10:00:{i % 60:02d} web-01 "
        + (f"CRON[{i}]: (root) CMD (job)" if i % 3 == 0 else f"sshd[{i}]: mailer ok")
        for i in range(240)
    ]
    lines[5] = "Mar 05 10:00:05 web-01 CRON[5]: mailer (root) CMD (job)"
    text = "\n".join(lines) + "\n"
    journal, mailer = ask(
        tl, text, "how many CRON lines are in the journal?", "how many CRON lines in the mailer?"
    )
    assert "Exact count: 81 " in journal
    assert "Exact count: 1 " in mailer


def _lint_summary() -> str:
    """A per-package report ruled across under its header and above a TOTAL line, its last
    column right-aligned numbers with a unit."""
    rows = [(f"pkg/{w}{i}", (i * 13) % 97, (i * 7) % 50 + 1) for i, w in enumerate("abcdefgh" * 20)]
    rows[57] = ("pkg/worst", 500, 99)
    head = f"{'Package':<14}{'Warnings':>9}{'Ratio':>7}\n"
    rule = "=" * 30 + "\n"
    body = "".join(f"{p:<14}{n:>9}{r:>6}%\n" for p, n, r in rows)
    total = sum(r[1] for r in rows)
    return head + rule + body + rule + f"{'TOTAL':<14}{total:>9}{50:>6}%\n"


def test_a_rule_across_and_a_total_below_it_make_no_rows(tl: Taskloom) -> None:
    """A rule across the whole table left no gutter, so the table read as no table, and a
    right-aligned last column (``  7%`` under ``100%``) made no column; the TOTAL line below
    the closing rule would rank first."""
    top, count = ask(
        tl, _lint_summary(), "which package has the most warnings?", "how many rows are there?"
    )
    assert "pkg/worst" in top and "TOTAL" not in top
    assert "Exact count: 160 " in count
