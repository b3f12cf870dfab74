"""The ``tuned`` set of ``bench/shapes.py``: the shapes whose misses the guard's text-record,
section and line-count answers were written against."""

from __future__ import annotations

import csv
import io
import json
import random
from collections import Counter
from typing import Any

from _shapes import FIRST, LAST, WORDS, Q


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
    ev: list[dict[str, Any]] = []
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
    items: list[dict[str, Any]] = []
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
