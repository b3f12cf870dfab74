"""The ``fresh`` set of ``bench/shapes.py``: other field names and seed, written after the
guard's answers were and never tuned on."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from _shapes import WORDS, Q

CITIES = ["Lagos", "Quito", "Oslo", "Hanoi", "Perth", "Leeds", "Cusco"]


def semicolon_invoices(rng: random.Random) -> tuple[str, list[Q]]:
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


def audit_jsonl(rng: random.Random) -> tuple[str, list[Q]]:
    comps = ["scheduler", "ledger", "indexer", "mailer", "vault"]
    sev = ["notice", "warning", "critical", "info"]
    ev: list[dict[str, Any]] = []
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


def nginx_style_log(rng: random.Random) -> tuple[str, list[Q]]:
    lines = []
    c: Counter[tuple[str, str]] = Counter()
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


def docker_ps(rng: random.Random) -> tuple[str, list[Q]]:
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


def md_runbook(rng: random.Random) -> tuple[str, list[Q]]:
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
