"""Benchmark: recall on tool results of shapes the public corpus lacks, by shape.

Each shape is built from seeded random data: a CSV export with quoted commas, a TSV, JSON
Lines of 20,000 events, an application log with tracebacks, a ``ps`` table, a search
result JSON, a Markdown document, a YAML-looking list. Each comes with questions a coding
agent asks (a lookup by id, a count with conditions, the row at a timestamp, the service
with the most errors, a section, a traceback's exception, the last record, distinct values)
and gold answers computed from the data. Two sets: ``tuned`` (the misses the guard's
text-record, section and line-count answers were written against) and ``fresh`` (other
field names and seed, written after them and not tuned on).

Per question the guard stashes the payload and, unless the placeholder already shows the
gold, asks ``extract_from_result`` once, with no LLM. A question is answered when its gold
is visible (every part of it); a count only by ``Exact count: N`` with the right N. The
``preview-only`` column is the first 1,500 characters.

    python bench/shapes.py [--set tuned|fresh|both] [--seed N] [--verbose]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from typing import Any

import taskloom
from taskloom.guard.tokens import counter

_COUNT = re.compile(r"Exact count: ([\d,]+)")


@dataclass(frozen=True)
class Q:
    kind: str
    text: str
    gold: object  # str: shown verbatim; tuple: all shown; int: exact count


FIRST = [
    "Ada",
    "Bram",
    "Chen",
    "Dara",
    "Emil",
    "Fatou",
    "Goran",
    "Hana",
    "Ivo",
    "Jun",
    "Kofi",
    "Lena",
    "Mira",
    "Nils",
    "Oona",
    "Pavel",
    "Quinn",
    "Rosa",
    "Sami",
    "Tove",
]
LAST = [
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Silva",
    "Novak",
    "Haddad",
    "Kowalski",
    "Nguyen",
    "Petrov",
    "Schmidt",
    "Rossi",
]
WORDS = [
    "alpha",
    "bravo",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "granite",
    "harbor",
    "island",
    "juniper",
    "kelp",
    "lantern",
    "meadow",
    "nectar",
    "orbit",
    "prairie",
    "quartz",
    "river",
    "summit",
    "tundra",
]


def csv_users(rng: random.Random) -> tuple[str, list[Q]]:
    countries = ["DE", "FR", "US", "BR", "JP", "NG", "IN", "SE"]
    plans = ["free", "team", "business", "enterprise"]
    rows = []
    for i in range(5000):
        uid = 1000 + i * 3 + rng.randrange(3)
        f, last = rng.choice(FIRST), rng.choice(LAST)
        email = f"{f.lower()}.{last.lower()}{uid % 997}@example.{rng.choice(['com', 'org', 'io'])}"
        note = rng.choice(
            [
                "",
                "",
                "prefers email, not phone",
                "VIP, renewal due",
                f"migrated from {rng.choice(WORDS)}, batch {rng.randrange(40)}",
            ]
        )
        rows.append(
            [
                str(uid),
                f"{f} {last}",
                email,
                rng.choice(countries),
                rng.choice(plans),
                f"2023-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
                note,
            ]
        )
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "name", "email", "country", "plan", "signup_date", "notes"])
    w.writerows(rows)
    r = rng.choice(rows)
    r2 = rng.choice([x for x in rows if "," in x[6]])
    c, p = rng.choice(countries), rng.choice(plans)
    n = sum(1 for x in rows if x[3] == c and x[4] == p)
    qs = [
        Q("lookup", f"What is the email of user {r[0]}?", r[2]),
        Q("lookup", f"notes of the user with id {r2[0]}", r2[6]),
        Q("count", f"How many users have country {c} and plan {p}?", n),
        Q("count", f"How many users are on plan {p}?", sum(1 for x in rows if x[4] == p)),
        Q("holder", f"Which user has email {r[2]}?", r[0]),
        Q("last", "What is the email of the last user in the export?", rows[-1][2]),
        Q("distinct", "What are the distinct values of the plan column?", tuple(plans)),
    ]
    return buf.getvalue(), qs


def tsv_orders(rng: random.Random) -> tuple[str, list[Q]]:
    statuses = ["pending", "shipped", "delivered", "cancelled", "returned"]
    whs = ["AMS-1", "FRA-2", "DUB-1", "WAW-3", "MAD-1"]
    rows = []
    for i in range(3000):
        rows.append(
            [
                f"ORD-{50000 + i}",
                f"SKU-{rng.randrange(100, 999)}-{rng.choice('ABCDEFG')}",
                str(rng.randrange(1, 20)),
                f"{rng.randrange(100, 99999) / 100:.2f}",
                rng.choice(statuses),
                rng.choice(whs),
            ]
        )
    text = "order_id\tsku\tqty\tunit_price\tstatus\twarehouse\n" + "".join(
        "\t".join(r) + "\n" for r in rows
    )
    r = rng.choice(rows)
    s, wh = rng.choice(statuses), rng.choice(whs)
    qs = [
        Q("lookup", f"What is the status of order {r[0]}?", r[4]),
        Q("lookup", f"sku and unit_price of {r[0]}", (r[1], r[3])),
        Q("count", f"How many orders are {s}?", sum(1 for x in rows if x[4] == s)),
        Q(
            "count",
            f"how many orders with status {s} in warehouse {wh}",
            sum(1 for x in rows if x[4] == s and x[5] == wh),
        ),
        Q("distinct", "Which warehouses appear in the file?", tuple(whs)),
        Q("last", "What is the order_id of the last row?", rows[-1][0]),
    ]
    return text, qs


def ndjson_events(rng: random.Random) -> tuple[str, list[Q]]:
    services = ["billing", "auth", "search", "checkout", "notifier", "gateway"]
    weights = [3, 5, 8, 2, 1, 6]
    levels = ["DEBUG", "INFO", "INFO", "INFO", "WARN", "ERROR"]
    msgs = {
        "ERROR": [
            "upstream timeout",
            "db connection refused",
            "payment declined by processor",
            "nil pointer in handler",
        ],
        "WARN": ["slow query", "retrying request", "cache miss storm"],
        "INFO": ["request served", "user logged in", "job enqueued"],
        "DEBUG": ["cache hit", "span started"],
    }
    ev = []
    t = 1_709_280_000
    for i in range(20000):
        t += rng.randrange(0, 3)
        lvl = rng.choice(levels)
        svc = rng.choices(services, weights)[0]
        ev.append(
            {
                "ts": f"2024-03-01T{(t // 3600) % 24:02d}:{(t // 60) % 60:02d}:{t % 60:02d}Z",
                "level": lvl,
                "service": svc,
                "message": rng.choice(msgs[lvl]) + f" (req {rng.randrange(16**6):06x})",
                "latency_ms": rng.randrange(1, 3000),
                "request_id": f"req-{i:05d}-{rng.randrange(16**4):04x}",
            }
        )
    text = "".join(json.dumps(e) + "\n" for e in ev)
    errs = Counter(e["service"] for e in ev if e["level"] == "ERROR")
    top, topn = errs.most_common(1)[0]
    svc = rng.choice(services)
    mid = ev[rng.randrange(100, 19900)]
    r = rng.choice(ev)
    qs = [
        Q("count", f"How many ERROR events from service {svc}?", errs[svc]),
        Q("count", "How many WARN events are there?", sum(1 for e in ev if e["level"] == "WARN")),
        Q("top", "Which service has the most errors?", (top, str(topn))),
        Q("around", f"What happened at {mid['ts']}?", mid["message"]),
        Q("lookup", f"latency_ms of request {r['request_id']}", str(r["latency_ms"])),
        Q("last", "What is the request_id of the last event?", ev[-1]["request_id"]),
        Q("distinct", "Which services appear in the log?", tuple(services)),
    ]
    return text, qs


EXC = [
    ("ValueError", "invalid literal for int() with base 10: '{w}'"),
    ("KeyError", "'{w}'"),
    ("TimeoutError", "operation timed out after 30s on {w}"),
    (
        "sqlalchemy.exc.OperationalError",
        "(psycopg2.OperationalError) could not connect to server {w}",
    ),
]


def text_log(rng: random.Random) -> tuple[str, list[Q]]:
    loggers = ["app.jobs", "app.http", "app.db", "app.mailer"]
    lines: list[str] = []
    traces: list[tuple[str, str]] = []  # (ts, exception line)
    counts: Counter[tuple[str, str]] = Counter()
    t = 0
    for _i in range(6000):
        t += rng.randrange(1, 900)
        ts = (
            f"2024-05-14 "
            f"{(t // 3600000) % 24:02d}:{(t // 60000) % 60:02d}:"
            f"{(t // 1000) % 60:02d},{t % 1000:03d}"
        )
        lvl = rng.choices(["INFO", "DEBUG", "WARNING", "ERROR"], [60, 25, 10, 5])[0]
        lg = rng.choice(loggers)
        counts[(lvl, lg)] += 1
        if lvl == "ERROR" and rng.random() < 0.5:
            name, tmpl = rng.choice(EXC)
            exc = f"{name}: {tmpl.format(w=rng.choice(WORDS) + str(rng.randrange(100)))}"
            lines.append(
                f"{ts} ERROR [worker-{rng.randrange(8)}] {lg}: unhandled exception in "
                f"job {rng.randrange(10000)}"
            )
            lines.append("Traceback (most recent call last):")
            for _d in range(rng.randrange(2, 5)):
                fn = rng.choice(["run", "handle", "process", "_execute", "fetch"])
                lines.append(
                    f'  File "/srv/app/{rng.choice(WORDS)}.py", line '
                    f"{rng.randrange(10, 900)}, in {fn}"
                )
                lines.append(f"    result = {fn}(payload)")
            lines.append(exc)
            traces.append((ts, exc))
        else:
            lines.append(
                f"{ts} {lvl} [worker-{rng.randrange(8)}] {lg}: "
                f"{rng.choice(['processed', 'skipped', 'queued', 'finished'])} "
                f"job {rng.randrange(10000)} in {rng.randrange(1, 500)}ms"
            )
    text = "\n".join(lines) + "\n"
    ts, exc = rng.choice(traces)
    lg = rng.choice(loggers)
    plain = [x for x in lines if x[:4] == "2024"]
    pick = rng.choice(plain)
    qs = [
        Q("trace", f"What exception was raised in the traceback after the error at {ts}?", exc),
        Q("trace", "What was the exception of the last traceback?", traces[-1][1]),
        Q(
            "count",
            "How many ERROR lines are in the log?",
            sum(v for (lv, _), v in counts.items() if lv == "ERROR"),
        ),
        Q("count", f"How many WARNING lines from {lg}?", counts[("WARNING", lg)]),
        Q("around", f"What was logged at {pick[:23]}?", pick[24:]),
        Q("last", "What is the last line of the log?", lines[-1]),
    ]
    return text, qs


def ps_table(rng: random.Random) -> tuple[str, list[Q]]:
    users = ["root", "postgres", "www-data", "redis", "deploy", "systemd+"]
    cmds = [
        "/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main",
        "nginx: worker process",
        "redis-server *:6379",
        "python3 -m gunicorn app:wsgi --workers 4",
        "/usr/sbin/sshd -D",
        "node /srv/web/server.js",
        "[kworker/u8:2-events]",
    ]
    rows = []
    pid = 1
    for _i in range(900):
        pid += rng.randrange(1, 40)
        rows.append(
            (
                rng.choice(users),
                pid,
                rng.randrange(0, 400) / 10,
                rng.randrange(0, 300) / 10,
                rng.randrange(1000, 9_000_000),
                rng.randrange(0, 2_000_000),
                rng.choice(["?", "pts/0", "pts/1"]),
                rng.choice(["Ss", "S", "R", "Sl", "I<"]),
                f"{rng.randrange(0, 24):02d}:{rng.randrange(60):02d}",
                f"{rng.randrange(0, 99)}:{rng.randrange(60):02d}",
                rng.choice(cmds),
            )
        )
    out = [
        f"{'USER':<10}{'PID':>7} {'%CPU':>4} {'%MEM':>4} {'VSZ':>8} {'RSS':>7} "
        f"{'TTY':<8} {'STAT':<4} {'START':>5} {'TIME':>6} COMMAND"
    ]
    for r in rows:
        out.append(
            f"{r[0]:<10}{r[1]:>7} {r[2]:>4.1f} {r[3]:>4.1f} {r[4]:>8} {r[5]:>7} "
            f"{r[6]:<8} {r[7]:<4} {r[8]:>5} {r[9]:>6} {r[10]}"
        )
    text = "\n".join(out) + "\n"
    r = rng.choice(rows)
    u = rng.choice(users)
    top = max(rows, key=lambda x: x[5])
    qs = [
        Q("lookup", f"What command is PID {r[1]} running?", r[10]),
        Q("lookup", f"RSS of pid {r[1]}", str(r[5])),
        Q("count", f"How many processes does user {u} own?", sum(1 for x in rows if x[0] == u)),
        Q("top", "Which process uses the most RSS memory?", str(top[1])),
        Q("distinct", "Which users are running processes?", tuple(users)),
    ]
    return text, qs


def gh_search(rng: random.Random) -> tuple[str, list[Q]]:
    labels = [
        "bug",
        "enhancement",
        "docs",
        "good first issue",
        "needs-triage",
        "regression",
        "performance",
    ]
    items = []
    for i in range(250):
        num = 3000 + i * 7 + rng.randrange(7)
        items.append(
            {
                "url": f"https://api.github.com/repos/acme/widget/issues/{num}",
                "number": num,
                "title": f"{rng.choice(['Crash', 'Slow', 'Wrong', 'Missing'])} {rng.choice(WORDS)}"
                f" when {rng.choice(['saving', 'loading', 'syncing', 'rendering'])}"
                f" {rng.choice(WORDS)} #{i}",
                "user": {
                    "login": f"{rng.choice(FIRST).lower()}{rng.randrange(100)}",
                    "id": rng.randrange(10**6),
                    "type": "User",
                },
                "labels": [
                    {"id": rng.randrange(10**8), "name": n, "color": "ededed"}
                    for n in rng.sample(labels, rng.randrange(0, 4))
                ],
                "state": rng.choice(["open", "open", "closed"]),
                "assignees": [
                    {"login": f"{rng.choice(FIRST).lower()}{rng.randrange(100)}"}
                    for _ in range(rng.randrange(0, 3))
                ],
                "comments": rng.randrange(0, 60),
                "created_at": f"2024-0{rng.randrange(1, 10)}-{rng.randrange(10, 29)}T10:00:00Z",
                "score": 1.0,
                "body": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(20, 120))),
            }
        )
    doc = {"total_count": 250, "incomplete_results": False, "items": items}
    r = rng.choice([x for x in items if len(x["labels"]) >= 2])
    r2 = rng.choice([x for x in items if x["assignees"]])
    lab = rng.choice(labels)
    qs = [
        Q("lookup", f"What is the title of issue #{r['number']}?", r["title"]),
        Q("nested", f"Who opened issue {r['number']}?", r["user"]["login"]),
        Q("nested", f"labels of issue {r['number']}", tuple(x["name"] for x in r["labels"])),
        Q(
            "nested",
            f"assignees of issue #{r2['number']}",
            tuple(x["login"] for x in r2["assignees"]),
        ),
        Q(
            "count",
            f"How many issues have the label {lab}?",
            sum(1 for x in items if any(y["name"] == lab for y in x["labels"])),
        ),
        Q("count", "How many issues are open?", sum(1 for x in items if x["state"] == "open")),
        Q("last", "What is the title of the last item?", items[-1]["title"]),
    ]
    return json.dumps(doc, indent=2), qs


def markdown_doc(rng: random.Random) -> tuple[str, list[Q]]:
    heads = [
        "Installation",
        "Quick start",
        "Configuration",
        "Environment variables",
        "Authentication",
        "Rate limits",
        "Webhooks",
        "Pagination",
        "Error codes",
        "Migrating from v1",
        "Troubleshooting",
        "Contributing",
        "Security",
        "Changelog",
        "FAQ",
        "Deployment",
        "Metrics",
        "Logging",
        "Caching",
        "Testing",
    ]
    parts = ["# Widget Service\n\nThe widget service stores widgets.\n"]
    sections = {}
    for h in heads:
        body = []
        for _p in range(rng.randrange(3, 7)):
            body.append(
                " ".join(rng.choice(WORDS) for _ in range(rng.randrange(30, 70))).capitalize() + "."
            )
        if rng.random() < 0.5:
            body.append(
                f"```bash\nwidgetctl {h.lower().replace(' ', '-')} "
                f"--{rng.choice(WORDS)}={rng.randrange(100)}\n```"
            )
        items = [
            f"- `{rng.choice(WORDS).upper()}_{rng.choice(WORDS).upper()}`: "
            f"{rng.choice(WORDS)} setting"
            for _ in range(rng.randrange(2, 6))
        ]
        body.append("\n".join(items))
        body.append(f"See also the {h.lower()} notes, ref {rng.randrange(10**6)}.")
        sub = (
            f"### {h} details\n\n"
            + " ".join(rng.choice(WORDS) for _ in range(40))
            + f". Detail marker {rng.randrange(10**6)}."
        )
        sections[h] = (body, items, sub)
        parts.append(f"## {h}\n\n" + "\n\n".join(body) + "\n\n" + sub + "\n")
    text = "\n".join(parts)
    h1, h2 = rng.sample(heads, 2)
    b1, items1, sub1 = sections[h1]
    b2, _, _ = sections[h2]
    qs = [
        Q("section", f"Show the {h1} section.", (b1[0][:60], b1[-1])),
        Q("section", f"What does the {h2} section say?", (b2[0][:60], b2[-1])),
        Q("section", f"List the settings under {h1}.", tuple(x[2 : x.index(":")] for x in items1)),
        Q("section", f"{h1} details", sub1.split(". Detail")[1].strip()),
        Q("last", "What is the last heading in the document?", f"## {heads[-1]}"),
    ]
    return text, qs


def yaml_text(rng: random.Random) -> tuple[str, list[Q]]:
    svcs = []
    out = ["apiVersion: v1", "kind: ServiceList", "services:"]
    for i in range(120):
        name = f"{rng.choice(WORDS)}-{rng.choice(['api', 'worker', 'cron', 'proxy'])}-{i}"
        img = (
            f"registry.internal/{name.rsplit('-', 1)[0]}:"
            f"{rng.randrange(1, 9)}.{rng.randrange(20)}.{rng.randrange(50)}"
        )
        rep = rng.randrange(1, 12)
        env = {
            f"{rng.choice(WORDS).upper()}_URL": (
                f"http://{rng.choice(WORDS)}.svc:{rng.randrange(3000, 9000)}"
            )
            for _ in range(rng.randrange(1, 4))
        }
        tier = rng.choice(["frontend", "backend", "batch"])
        svcs.append((name, img, rep, env, tier))
        out += [
            f"  - name: {name}",
            f"    image: {img}",
            f"    replicas: {rep}",
            f"    tier: {tier}",
            "    env:",
        ]
        out += [f"      {k}: {v}" for k, v in env.items()]
        out += [
            "    resources:",
            f"      cpu: {rng.randrange(100, 2000)}m",
            f"      memory: {rng.randrange(128, 4096)}Mi",
        ]
    text = "\n".join(out) + "\n"
    s = rng.choice(svcs)
    s2 = rng.choice(svcs)
    tier = rng.choice(["frontend", "backend", "batch"])
    qs = [
        Q("lookup", f"What image does {s[0]} use?", s[1]),
        Q("lookup", f"replicas of service {s2[0]}", f"replicas: {s2[2]}"),
        Q("nested", f"env of {s[0]}", tuple(s[3])),
        Q("count", f"How many services have tier {tier}?", sum(1 for x in svcs if x[4] == tier)),
        Q("count", "How many services are defined?", len(svcs)),
    ]
    return text, qs


SHAPES = {
    "csv": csv_users,
    "tsv": tsv_orders,
    "ndjson": ndjson_events,
    "textlog": text_log,
    "ps": ps_table,
    "gh-search": gh_search,
    "markdown": markdown_doc,
    "yaml": yaml_text,
}


def shown(q: Q, seen: str) -> bool:
    if isinstance(q.gold, int):
        m = _COUNT.search(seen)
        return m is not None and int(m.group(1).replace(",", "")) == q.gold
    golds = q.gold if isinstance(q.gold, tuple) else (q.gold,)
    return all(str(g) in seen or json.dumps(str(g))[1:-1] in seen for g in golds)


def main(shapes: dict[str, Any], seed: int, verbose: bool) -> None:
    count = counter("o200k_base")
    tot = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        tl = taskloom.connect(f"sqlite:///{tmp}/p.db")
        g = tl.guard("t")
        for name, make in shapes.items():
            text, qs = make(random.Random(f"{seed}-{name}"))
            w = g.stash(name, text)
            pv = text[:1500]
            hits = base = spent = 0
            for q in qs:
                seen = w.text
                ans = ""
                if w.result_id and not shown(q, seen):
                    ans = g.extract(w.result_id, q.text)
                    spent += count(ans)
                    seen += "\n" + ans
                ok = shown(q, seen)
                hits += ok
                base += shown(q, pv)
                if verbose and not ok:
                    print(
                        f"  MISS {name} [{q.kind}] {q.text} -> {str(q.gold)[:100]}\n  "
                        f"  {ans[:1200]!r}"
                    )
            tot["q"] += len(qs)
            tot["hit"] += hits
            tot["base"] += base
            tot["tok"] += spent + w.tokens
            print(
                f"{name:10} {w.mode:8} raw={count(text):>7} placeholder={w.tokens:>5} "
                f"answers={spent:>6}  recall {hits}/{len(qs)}  preview-only {base}/{len(qs)}"
            )
        tl.close()
    print(
        f"TOTAL recall {tot['hit']}/{tot['q']}  preview-only {tot['base']}/{tot['q']} "
        f" tokens {tot['tok']}"
    )


CITIES = ["Lagos", "Quito", "Oslo", "Hanoi", "Perth", "Leeds", "Cusco"]


def semicolon_invoices(rng):
    st = ["paid", "open", "overdue", "void"]
    rows = []
    for i in range(4000):
        rows.append(
            [
                f"INV{700000 + i * 2}",
                rng.choice(CITIES),
                rng.choice(st),
                f"{rng.randrange(1, 50000)}",
                f"Acme {rng.choice(WORDS).title()}; Ltd"
                if rng.random() < 0.2
                else f"{rng.choice(WORDS).title()} GmbH",
            ]
        )
    text = "invoice_no;city;payment_state;amount_cents;customer\n" + "".join(
        ";".join(f'"{c}"' if ";" in c else c for c in r) + "\n" for r in rows
    )
    r = rng.choice(rows)
    c = rng.choice(CITIES)
    s = rng.choice(st)
    return text, [
        Q("lookup", f"customer of invoice {r[0]}", r[4]),
        Q(
            "count",
            f"How many invoices are {s} in {c}?",
            sum(1 for x in rows if x[1] == c and x[2] == s),
        ),
        Q("count", f"number of invoices with payment_state {s}", sum(1 for x in rows if x[2] == s)),
        Q(
            "holder",
            f"which invoice has amount_cents {rows[1234][3]} and city {rows[1234][1]}?",
            rows[1234][0],
        ),
    ]


def audit_jsonl(rng):
    comps = ["scheduler", "ledger", "indexer", "mailer", "vault"]
    sev = ["notice", "warning", "critical", "info"]
    ev = []
    for i in range(12000):
        ev.append(
            {
                "time": 1700000000 + i * 3,
                "severity": rng.choice(sev),
                "component": rng.choice(comps),
                "actor": {"name": f"svc-{rng.randrange(40)}", "kind": rng.choice(["bot", "human"])},
                "action": rng.choice(["read", "write", "delete", "rotate"]),
                "trace": f"t{rng.randrange(16**8):08x}",
            }
        )
    text = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in ev)
    c = rng.choice(comps)
    r = rng.choice(ev)
    return text, [
        Q(
            "count",
            f"How many critical events from component {c}?",
            sum(1 for e in ev if e["severity"] == "critical" and e["component"] == c),
        ),
        Q(
            "count",
            "how many delete actions by a human actor?",
            sum(1 for e in ev if e["action"] == "delete" and e["actor"]["kind"] == "human"),
        ),
        Q("lookup", f"component of trace {r['trace']}", r["component"]),
        Q("last", "time of the last event", str(ev[-1]["time"])),
    ]


def nginx_style_log(rng):
    lines = []
    c = Counter()
    for i in range(8000):
        lvl = rng.choices(["notice", "warn", "error", "crit"], [50, 20, 10, 2])[0]
        up = rng.choice(["backend_a", "backend_b", "static"])
        c[(lvl, up)] += 1
        lines.append(
            f"2023/11/0{rng.randrange(1, 9)} "
            f"1{rng.randrange(10)}:{rng.randrange(60):02d}:{rng.randrange(60):02d} [{lvl}] "
            f"{rng.randrange(1000, 9999)}#0: *{i} upstream {up} "
            f"{rng.choice(['timed out', 'closed connection', 'sent headers'])}"
        )
    text = "\n".join(lines) + "\n"
    up = rng.choice(["backend_a", "backend_b", "static"])
    return text, [
        Q("count", "How many [error] lines?", sum(v for (lv, _), v in c.items() if lv == "error")),
        Q("count", f"How many crit lines for upstream {up}?", c[("crit", up)]),
        Q("last", "last line of the log", lines[-1]),
    ]


def docker_ps(rng):
    rows = []
    for i in range(400):
        rows.append(
            (
                f"{rng.randrange(16**12):012x}",
                rng.choice(["postgres:16", "redis:7", "nginx:1.25", "app/web:3.2"]),
                rng.choice(["Up 3 hours", "Exited (1) 2 days ago", "Up 5 minutes"]),
                f"svc_{rng.choice(WORDS)}_{i}",
            )
        )
    text = f"{'CONTAINER_ID':<14}{'IMAGE':<14}{'STATUS':<24}NAMES\n" + "".join(
        f"{a:<14}{b:<14}{c:<24}{d}\n" for a, b, c, d in rows
    )
    r = rng.choice(rows)
    return text, [
        Q("lookup", f"image of container {r[3]}", r[1]),
        Q("count", "How many containers run redis:7?", sum(1 for x in rows if x[1] == "redis:7")),
        Q("holder", f"name of container {r[0]}", r[3]),
    ]


def md_runbook(rng):
    heads = [
        "Overview",
        "On-call rotation",
        "Paging policy",
        "Database failover",
        "Restoring backups",
        "Escalation contacts",
        "Postmortems",
    ]
    parts = ["# Runbook\n"]
    golds = {}
    for h in heads:
        paras = [
            " ".join(rng.choice(WORDS) for _ in range(50)).capitalize() + "." for _ in range(4)
        ]
        steps = [
            f"{k + 1}. Run `{rng.choice(WORDS)}-{rng.randrange(100)}`"
            for k in range(rng.randrange(3, 6))
        ]
        golds[h] = (paras[0][:50], steps[-1])
        parts.append(f"## {h}\n\n" + "\n\n".join(paras) + "\n\n" + "\n".join(steps) + "\n")
    text = "\n".join(parts) * 1
    a, b = rng.sample(heads, 2)
    return text, [
        Q("section", f"What are the steps for {a.lower()}?", golds[a]),
        Q("section", f"show me the '{b}' part of the runbook", golds[b]),
    ]


FRESH = {
    "semicolon-csv": semicolon_invoices,
    "audit-jsonl": audit_jsonl,
    "bracket-log": nginx_style_log,
    "docker-ps": docker_ps,
    "md-runbook": md_runbook,
}


def cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=("tuned", "fresh", "both"), default="both")
    parser.add_argument("--seed", type=int, default=0, help="0: each set's own seed (7, 99)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    for name, shapes, seed in (("tuned", SHAPES, 7), ("fresh", FRESH, 99)):
        if args.set in (name, "both"):
            print(f"== {name} set")
            main(shapes, args.seed or seed, args.verbose)
    return 0


if __name__ == "__main__":
    raise SystemExit(cli())
