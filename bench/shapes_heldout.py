"""The ``heldout`` set of ``bench/shapes.py``: five shapes unlike both other sets (a
``kubectl get pods -o wide`` table, an Apache combined access log, a pytest report, a JSON
API page of orders with nested line items, a ``git log --stat`` text), written before the
guard's tally, id and record answers were and run only to measure them, never to tune."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from _shapes import FIRST, LAST, WORDS, Q

NODES = ["ip-10-0-1-17", "ip-10-0-2-41", "ip-10-0-3-9", "ip-10-0-4-88"]


def kubectl_pods(rng: random.Random) -> tuple[str, list[Q]]:
    states = ["Running", "Running", "Running", "Pending", "CrashLoopBackOff", "Completed"]
    rows = []
    for i in range(600):
        app = rng.choice(WORDS)
        st = rng.choice(states)
        rows.append(
            (
                f"{app}-{rng.randrange(16**8):08x}-{rng.randrange(36**5):05x}"[:40] + f"-{i}",
                "1/1" if st == "Running" else "0/1",
                st,
                str(rng.randrange(0, 40) if st == "CrashLoopBackOff" else rng.randrange(3)),
                f"{rng.randrange(1, 30)}d",
                f"10.42.{rng.randrange(256)}.{rng.randrange(256)}",
                rng.choice(NODES),
            )
        )
    head = ("NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE")
    widths = [max(len(r[k]) for r in rows) + 3 for k in range(7)]
    widths = [max(w, len(h) + 3) for w, h in zip(widths, head, strict=False)]

    def line(cells: tuple[str, ...]) -> str:
        return "".join(c.ljust(w) for c, w in zip(cells, widths, strict=False)) + cells[-1]

    text = line(head) + "\n" + "".join(line((*r, "<none>")) + "\n" for r in rows)
    r = rng.choice(rows)
    node = rng.choice(NODES)
    per_node = Counter(x[6] for x in rows)
    top, topn = per_node.most_common(1)[0]
    return text, [
        Q("lookup", f"What is the IP of pod {r[0]}?", r[5]),
        Q(
            "count",
            f"How many pods are CrashLoopBackOff on node {node}?",
            sum(1 for x in rows if x[2] == "CrashLoopBackOff" and x[6] == node),
        ),
        Q("top", "Which node runs the most pods?", (top, str(topn))),
        Q("distinct", "What are the distinct values of STATUS?", tuple(sorted(set(states)))),
        Q("last", "What is the name of the last pod?", rows[-1][0]),
    ]


def apache_log(rng: random.Random) -> tuple[str, list[Q]]:
    paths = ["/", "/login", "/api/v1/cart", "/static/app.js", "/search", "/api/v1/orders"]
    weights = [5, 2, 4, 7, 3, 2]
    lines = []
    recs = []
    t = 13 * 3600
    for _ in range(9000):
        t += rng.choices([0, 1, 2], [2, 5, 3])[0]
        ts = f"12/Mar/2024:{t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d} +0000"
        method = rng.choices(["GET", "POST"], [8, 2])[0]
        path = rng.choices(paths, weights)[0]
        status = rng.choices([200, 304, 404, 500, 302], [70, 10, 10, 3, 7])[0]
        ip = f"203.0.113.{rng.randrange(1, 255)}"
        size = rng.randrange(200, 90000)
        user = rng.choice(["-", "-", "-", rng.choice(FIRST).lower()])
        recs.append((ts, method, path, status, ip, size))
        lines.append(
            f'{ip} - {user} [{ts}] "{method} {path} HTTP/1.1" {status} {size} '
            f'"https://shop.example/{rng.choice(WORDS)}" "Mozilla/5.0 (X11; Linux x86_64)"'
        )
    text = "\n".join(lines) + "\n"
    once = {ts for ts, k in Counter(x[0] for x in recs).items() if k == 1}
    mid = rng.choice([i for i, x in enumerate(recs) if x[0] in once])
    top, topn = Counter(x[2] for x in recs).most_common(1)[0]
    return text, [
        Q("count", "How many requests returned status 404?", sum(1 for x in recs if x[3] == 404)),
        Q(
            "count",
            "How many POST requests to /api/v1/cart?",
            sum(1 for x in recs if x[1] == "POST" and x[2] == "/api/v1/cart"),
        ),
        Q("top", "Which path was requested the most?", (top, str(topn))),
        Q("around", f"Which request was made at {recs[mid][0]}?", lines[mid]),
        Q("last", "What is the IP of the last request?", recs[-1][4]),
    ]


def pytest_report(rng: random.Random) -> tuple[str, list[Q]]:
    files = [f"tests/test_{w}.py" for w in rng.sample(WORDS, 8)]
    outcomes = rng.choices(["PASSED", "FAILED", "SKIPPED", "ERROR"], [85, 6, 7, 2], k=1200)
    tests = []
    for i, outcome in enumerate(outcomes):
        f = rng.choice(files)
        tests.append((f"{f}::test_{rng.choice(WORDS)}_{i}", outcome, f))
    body = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.2.0, pluggy-1.5.0",
        f"collected {len(tests)} items",
        "",
    ]
    for k, (name, outcome, _f) in enumerate(tests):
        body.append(f"{name} {outcome:<7} [{(k + 1) * 100 // len(tests):3d}%]")
    body += ["", "=================================== FAILURES ==================================="]
    errors = {}
    for name, outcome, _f in tests:
        if outcome != "FAILED":
            continue
        a, b = rng.randrange(100), rng.randrange(100)
        msg = f"AssertionError: assert {a} == {b}"
        errors[name] = msg
        fn = name.split("::")[1]
        body += [
            f"____________________________ {fn} ____________________________",
            "",
            f"    def {fn}():",
            f"        got = compute({rng.choice(WORDS)!r})",
            f">       assert got == {b}",
            f"E       {msg}",
            "",
            f"{name.split('::')[0]}:{rng.randrange(10, 400)}: AssertionError",
        ]
    n = Counter(o for _n, o, _f in tests)
    body.append(
        f"===== {n['FAILED']} failed, {n['PASSED']} passed, {n['SKIPPED']} skipped, "
        f"{n['ERROR']} errors in 41.27s ====="
    )
    text = "\n".join(body) + "\n"
    failed = [x for x in tests if x[1] == "FAILED"]
    fx = rng.choice(failed)
    per_file = Counter(f for _n, o, f in tests if o == "FAILED")
    top, topn = per_file.most_common(1)[0]
    f = rng.choice(files)
    return text, [
        Q("count", "How many tests FAILED?", n["FAILED"]),
        Q(
            "count",
            f"how many tests were skipped in {f}?",
            sum(1 for _n, o, ff in tests if o == "SKIPPED" and ff == f),
        ),
        Q("trace", f"What assertion failed in {fx[0]}?", errors[fx[0]]),
        Q("top", "Which test file has the most failures?", (top, str(topn))),
        Q("last", "Which test ran last?", tests[-1][0]),
    ]


def orders_api(rng: random.Random) -> tuple[str, list[Q]]:
    statuses = ["pending", "paid", "shipped", "refunded", "cancelled"]
    orders: list[dict[str, Any]] = []
    for i in range(700):
        items: list[dict[str, Any]] = [
            {
                "sku": f"SKU-{rng.randrange(1000, 9999)}",
                "qty": rng.randrange(1, 5),
                "unit_price": round(rng.uniform(2, 300), 2),
            }
            for _ in range(rng.randrange(1, 5))
        ]
        orders.append(
            {
                "id": 5000 + i,
                "status": rng.choices(statuses, [2, 4, 6, 1, 1])[0],
                "customer": {
                    "id": rng.randrange(100, 400),
                    "email": f"{rng.choice(FIRST).lower()}@{rng.choice(WORDS)}.test",
                },
                "created_at": f"2024-02-{1 + i // 30:02d}T{i % 24:02d}:{(i * 7) % 60:02d}:00Z",
                "items": items,
                "total": round(sum(x["qty"] * x["unit_price"] for x in items), 2),
            }
        )
    doc = {"data": orders, "meta": {"page": 1, "per_page": 700, "total": 700}}
    text = json.dumps(doc, indent=2)
    o = rng.choice(orders)
    cust = rng.choice(orders)["customer"]["id"]
    top, topn = Counter(x["status"] for x in orders).most_common(1)[0]
    return text, [
        Q("lookup", f"What is the status of order {o['id']}?", (str(o["id"]), o["status"])),
        Q(
            "count",
            f"How many orders did customer {cust} place?",
            sum(1 for x in orders if x["customer"]["id"] == cust),
        ),
        Q("top", "Which status do most orders have?", (top, str(topn))),
        Q("distinct", "What are the distinct values of status?", tuple(statuses)),
        Q("last", "What is the created_at of the last order?", orders[-1]["created_at"]),
    ]


def git_log_stat(rng: random.Random) -> tuple[str, list[Q]]:
    authors = [f"{f} {last}" for f, last in zip(FIRST[:7], LAST[:7], strict=True)]
    commits = []
    parts = []
    for i in range(500):
        a = rng.choices(authors, [6, 3, 2, 5, 1, 1, 2])[0]
        h = f"{rng.randrange(16**40):040x}"
        date = f"Mon Mar {1 + i % 28} {i % 24:02d}:{i % 60:02d}:{(i * 13) % 60:02d} 2024 +0100"
        msg = f"{rng.choice(['fix', 'add', 'refactor', 'drop'])} {rng.choice(WORDS)} handling"
        files = rng.sample(WORDS, rng.randrange(1, 4))
        stat = [f" src/{w}.py | {rng.randrange(1, 80)} {'+' * rng.randrange(1, 9)}" for w in files]
        commits.append((h, a, date, msg))
        email = a.lower().replace(" ", ".")
        parts.append(
            f"commit {h}\nAuthor: {a} <{email}@example.org>\nDate:   {date}\n\n    {msg}\n\n"
            + "\n".join(stat)
            + f"\n {len(files)} files changed, {rng.randrange(1, 200)} insertions(+)\n"
        )
    text = "\n".join(parts)
    c = rng.choice(commits)
    a = rng.choice(authors)
    top, topn = Counter(x[1] for x in commits).most_common(1)[0]
    mid = rng.choice(commits)
    return text, [
        Q("lookup", f"Who authored commit {c[0][:12]}?", c[1]),
        Q("count", f"How many commits did {a} author?", sum(1 for x in commits if x[1] == a)),
        Q("top", "Which author made the most commits?", (top, str(topn))),
        Q("around", f"What commit was made at {mid[2]}?", mid[0]),
        Q("last", "What is the message of the last commit in the log?", commits[-1][3]),
    ]


HELDOUT = {
    "kubectl": kubectl_pods,
    "apache-log": apache_log,
    "pytest": pytest_report,
    "orders-api": orders_api,
    "git-log": git_log_stat,
}
