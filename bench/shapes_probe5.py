"""The ``probe5`` set of ``bench/shapes.py``: ten more results a coding, data or ops agent gets
that the other sets lack (a Stripe-style paginated list of charges, a Slack
``conversations.history`` page, a Trivy image scan JSON, a pandas ``DataFrame.to_string()``,
a PostgreSQL ``EXPLAIN ANALYZE`` over partitions, ``gcloud compute instances list`` with blank
cells, a Datadog metrics query's series, ``mvn dependency:tree``, a GitLab SAST report, a
browser's ``.har`` capture), with their own field names and wording. Written before the guard
was changed for it, so its first run is a measure of unseen data."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from _shapes import WORDS, Q, unique

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def stripe_charges(rng: random.Random) -> tuple[str, list[Q]]:
    ids = unique(rng, 320, lambda: "ch_3P" + "".join(rng.choice(_ALNUM) for _ in range(19)))
    customers = unique(rng, 60, lambda: "cus_" + "".join(rng.choice(_ALNUM) for _ in range(14)))
    data: list[dict[str, Any]] = []
    for i, cid in enumerate(ids):
        status = rng.choices(["succeeded", "failed", "pending"], [80, 12, 4])[0]
        amount = rng.randrange(50, 250_000)
        refunded = status == "succeeded" and rng.random() < 0.07
        data.append(
            {
                "id": cid,
                "object": "charge",
                "amount": amount,
                "amount_captured": amount if status == "succeeded" else 0,
                "amount_refunded": amount if refunded else 0,
                "balance_transaction": None
                if status != "succeeded"
                else "txn_3P" + "".join(rng.choice(_ALNUM) for _ in range(19)),
                "captured": status == "succeeded",
                "created": 1_717_000_000 - i * 613,
                "currency": rng.choice(["usd", "usd", "eur", "gbp"]),
                "customer": rng.choice(customers),
                "description": f"Order {rng.choice(WORDS)}-{rng.randrange(10_000)}",
                "failure_code": rng.choice(["card_declined", "insufficient_funds", "expired_card"])
                if status == "failed"
                else None,
                "failure_message": "Your card was declined." if status == "failed" else None,
                "livemode": False,
                "metadata": {"order_id": f"ord_{rng.randrange(10**6):06d}"},
                "paid": status == "succeeded",
                "payment_method": "pm_1P" + "".join(rng.choice(_ALNUM) for _ in range(20)),
                "payment_method_details": {
                    "card": {
                        "brand": rng.choices(["visa", "mastercard", "amex"], [6, 3, 1])[0],
                        "country": rng.choice(["US", "DE", "GB", "FR"]),
                        "exp_month": rng.randrange(1, 13),
                        "exp_year": rng.randrange(2025, 2031),
                        "funding": rng.choice(["credit", "debit"]),
                        "last4": f"{rng.randrange(10_000):04d}",
                    },
                    "type": "card",
                },
                "receipt_url": f"https://pay.stripe.com/receipts/payment/{cid[3:]}",
                "refunded": refunded,
                "status": status,
            }
        )
    doc = {"object": "list", "data": data, "has_more": True, "url": "/v1/charges"}
    text = json.dumps(doc, indent=2)
    failed = rng.choice([c for c in data if c["status"] == "failed"])
    return text, [
        Q("count", "how many charges failed?", sum(c["status"] == "failed" for c in data)),
        Q(
            "sum",
            "what is the total amount of succeeded charges in eur?",
            str(
                sum(
                    c["amount"]
                    for c in data
                    if c["status"] == "succeeded" and c["currency"] == "eur"
                )
            ),
        ),
        Q("lookup", f"what is the failure_code of {failed['id']}?", failed["failure_code"]),
        Q(
            "count",
            "how many charges were paid with an amex card?",
            sum(c["payment_method_details"]["card"]["brand"] == "amex" for c in data),
        ),
    ]


def slack_history(rng: random.Random) -> tuple[str, list[Q]]:
    users = unique(
        rng, 18, lambda: "U0" + "".join(rng.choice(_ALNUM[:26] + "0123456789") for _ in range(9))
    )
    msgs: list[dict[str, Any]] = []
    ts0 = 1_717_400_000
    for i in range(380):
        u = rng.choices(users, [k + 1 for k in range(len(users))])[0]
        ts = f"{ts0 - i * 97 - rng.randrange(90)}.{rng.randrange(10**6):06d}"
        m: dict[str, Any] = {
            "client_msg_id": f"{rng.randrange(16**8):08x}-{rng.randrange(16**4):04x}-4a1b-"
            f"{rng.randrange(16**4):04x}-{rng.randrange(16**12):012x}",
            "type": "message",
            "text": f"{rng.choice(['deploy of', 'question about', 'heads up on', 'fixed'])} "
            f"{rng.choice(WORDS)} {rng.choice(['service', 'dashboard', 'runbook', 'alert'])}",
            "user": u,
            "ts": ts,
            "team": "T024BE7LD",
            "blocks": [{"type": "rich_text", "block_id": f"b{rng.randrange(10**5)}"}],
        }
        if rng.random() < 0.3:
            m["thread_ts"] = ts
            m["reply_count"] = rng.randrange(1, 40)
            m["reply_users_count"] = rng.randrange(1, 6)
            m["latest_reply"] = f"{ts0 + rng.randrange(10**4)}.000100"
        if rng.random() < 0.4:
            m["reactions"] = [
                {"name": n, "users": rng.sample(users, k), "count": k}
                for n, k in (
                    (n, rng.randrange(1, 5))
                    for n in rng.sample(["eyes", "+1", "white_check_mark", "tada", "fire"], 2)
                )
            ]
        msgs.append(m)
    doc = {
        "ok": True,
        "messages": msgs,
        "has_more": True,
        "pin_count": 2,
        "channel_actions_ts": None,
        "channel_actions_count": 0,
        "response_metadata": {"next_cursor": "bmV4dF90czoxNzE3MzYwMDAwMDAwMDAw"},
    }
    text = json.dumps(doc, indent=2)
    by_user = Counter(m["user"] for m in msgs)
    a = rng.choice(users)
    b = rng.choice(msgs)
    top = max(by_user, key=lambda k: (by_user[k], k))
    return text, [
        Q("count", f"how many messages did {a} post?", by_user[a]),
        Q("top", "which user posted the most messages?", top),
        Q("lookup", f"who posted the message with ts {b['ts']}?", b["user"]),
        Q("count", "how many messages have replies?", sum("reply_count" in m for m in msgs)),
    ]


def trivy_scan(rng: random.Random) -> tuple[str, list[Q]]:
    kinds = [
        ("python-pkg", "pip", "usr/local/lib/python3.12/site-packages/{}-{}.dist-info/METADATA"),
        ("node-pkg", "node-pkg", "app/node_modules/{}/package.json"),
        ("jar", "jar", "opt/app/lib/{}-{}.jar"),
    ]
    pkgs = unique(rng, 60, lambda: f"{rng.choice(WORDS)}{rng.choice(['', '-utils', 'lib', '-io'])}")
    cves = unique(rng, 700, lambda: f"CVE-20{rng.randrange(18, 25)}-{rng.randrange(1000, 49999)}")
    ci = iter(cves)
    results: list[dict[str, Any]] = [
        {
            "Target": "acme/shop:1.9.2 (debian 12.5)",
            "Class": "os-pkgs",
            "Type": "debian",
            "Vulnerabilities": [],
        }
    ]
    weights = [rng.random() ** 2 for _ in pkgs]
    for _ in range(34):
        _cls, typ, path = rng.choice(kinds)
        name = rng.choice(pkgs)
        ver = f"{rng.randrange(5)}.{rng.randrange(20)}.{rng.randrange(10)}"
        results.append(
            {
                "Target": path.format(name, ver),
                "Class": "lang-pkgs",
                "Type": typ,
                "Vulnerabilities": [],
            }
        )
    for r in results:
        for _ in range(rng.randrange(0, 22)):
            p = rng.choices(pkgs, weights)[0]
            sev = rng.choices(["CRITICAL", "HIGH", "MEDIUM", "LOW", "UNKNOWN"], [2, 6, 9, 5, 1])[0]
            inst = f"{rng.randrange(4)}.{rng.randrange(20)}.{rng.randrange(10)}"
            r["Vulnerabilities"].append(
                {
                    "VulnerabilityID": next(ci),
                    "PkgName": p,
                    "PkgIdentifier": {"PURL": f"pkg:{r['Type']}/{p}@{inst}"},
                    "InstalledVersion": inst,
                    "FixedVersion": f"{inst.split('.')[0]}.{rng.randrange(20, 40)}.0",
                    "Status": "fixed",
                    "Layer": {"DiffID": f"sha256:{rng.randrange(16**16):016x}"},
                    "SeveritySource": rng.choice(["nvd", "ghsa", "debian"]),
                    "PrimaryURL": "https://avd.aquasec.com/nvd/",
                    "Title": f"{p}: "
                    + rng.choice(["denial of service", "path traversal", "ReDoS", "XXE"]),
                    "Severity": sev,
                    "CVSS": {"nvd": {"V3Score": round(rng.uniform(2, 9.8), 1)}},
                }
            )
    # one target and one package stand alone at the top
    lens = [len(r["Vulnerabilities"]) for r in results]
    big = results[lens.index(max(lens))]
    big["Vulnerabilities"].append(dict(big["Vulnerabilities"][0], VulnerabilityID=next(ci)))
    by_pkg = Counter(v["PkgName"] for r in results for v in r["Vulnerabilities"])
    lead = max(by_pkg, key=lambda k: (by_pkg[k], k))
    big["Vulnerabilities"].append(
        dict(big["Vulnerabilities"][1], PkgName=lead, VulnerabilityID=next(ci))
    )
    by_pkg = Counter(v["PkgName"] for r in results for v in r["Vulnerabilities"])
    doc = {
        "SchemaVersion": 2,
        "CreatedAt": "2024-06-03T10:11:12.345678Z",
        "ArtifactName": "acme/shop:1.9.2",
        "ArtifactType": "container_image",
        "Metadata": {"OS": {"Family": "debian", "Name": "12.5"}, "ImageID": "sha256:9f1c"},
        "Results": results,
    }
    text = json.dumps(doc, indent=2)
    v = rng.choice([v for r in results for v in r["Vulnerabilities"]])
    return text, [
        Q("top", "which target has the most vulnerabilities?", big["Target"]),
        Q(
            "count",
            "how many CRITICAL vulnerabilities are there?",
            sum(v["Severity"] == "CRITICAL" for r in results for v in r["Vulnerabilities"]),
        ),
        Q("lookup", f"what is the FixedVersion for {v['VulnerabilityID']}?", v["FixedVersion"]),
        Q("top", "which package has the most vulnerabilities?", lead),
    ]


def pandas_frame(rng: random.Random) -> tuple[str, list[Q]]:
    skus = unique(rng, 520, lambda: f"SKU-{rng.randrange(10**5):05d}")
    rows = []
    for s in skus:
        units = rng.randrange(1, 900)
        price = rng.randrange(99, 99_999) / 100
        rows.append(
            (
                s,
                rng.choice(["Lagos", "Quito", "Oslo", "Hanoi", "Perth", "Leeds"]),
                rng.choice(["East", "West", "North", "South"]),
                units,
                price,
                round(units * price, 2),
            )
        )
    head = ("sku", "store", "region", "units", "unit_price", "revenue")
    cells = [
        (str(i), r[0], r[1], r[2], str(r[3]), f"{r[4]:.2f}", f"{r[5]:.2f}")
        for i, r in enumerate(rows)
    ]
    w = [max(len(c[k]) for c in cells) for k in range(7)]
    w = [w[0]] + [max(w[k], len(head[k - 1])) for k in range(1, 7)]
    lines = [" " * w[0] + "".join("  " + head[k - 1].rjust(w[k]) for k in range(1, 7))]
    lines += [
        c[0].ljust(w[0]) + "".join("  " + c[k].rjust(w[k]) for k in range(1, 7)) for c in cells
    ]
    text = "\n".join(lines) + "\n"
    a = rng.choice(rows)
    best = max(rows, key=lambda r: r[4])
    return text, [
        Q("lookup", f"what is the revenue of {a[0]}?", f"{a[5]:.2f}"),
        Q("count", "how many rows are in region West?", sum(r[2] == "West" for r in rows)),
        Q("top", "which sku has the highest unit_price?", best[0]),
        Q(
            "sum",
            "what is the total units sold in Oslo?",
            str(sum(r[3] for r in rows if r[1] == "Oslo")),
        ),
    ]


def explain_analyze(rng: random.Random) -> tuple[str, list[Q]]:
    parts = []
    for m in range(1, 7):
        for d in range(1, 29):
            if rng.random() < 0.9:
                parts.append(f"events_p2024_{m:02d}_{d:02d}")
    nodes = []
    out = []
    total_rows = 0
    for k, p in enumerate(parts, 1):
        idx = rng.random() < 0.3
        est = rng.randrange(500, 90_000)
        act = rng.randrange(0, est)
        removed = 0 if idx else rng.randrange(1000, 400_000)
        t2 = rng.randrange(100, 90_000) / 1000
        total_rows += act * 3
        if idx:
            out.append(
                f"                    ->  Parallel Index Scan using {p}_status_idx on {p} "
                f"events_{k}  (cost=0.42..{rng.randrange(100, 9000)}.{rng.randrange(100):02d} "
                f"rows={est} width=48) (actual time=0.0{rng.randrange(10, 99)}..{t2:.3f} "
                f"rows={act} loops=3)"
            )
            out.append("                          Index Cond: (status = 'failed'::text)")
        else:
            out.append(
                f"                    ->  Parallel Seq Scan on {p} events_{k}  "
                f"(cost=0.00..{rng.randrange(1000, 90000)}.{rng.randrange(100):02d} "
                f"rows={est} width=48) (actual time=0.0{rng.randrange(10, 99)}..{t2:.3f} "
                f"rows={act} loops=3)"
            )
            out.append("                          Filter: (status = 'failed'::text)")
            out.append(f"                          Rows Removed by Filter: {removed}")
        nodes.append((p, idx, act, removed, t2))
    exe = f"{rng.randrange(2000, 9000)}.{rng.randrange(1000):03d} ms"
    head = [
        "                                                            QUERY PLAN",
        "-" * 110,
        f" Finalize GroupAggregate  (cost=412345.10..412398.77 rows=24 width=40) "
        f"(actual time={exe[:-3]}..{exe[:-3]} rows=24 loops=1)",
        "   Group Key: (date_trunc('day'::text, events.created_at))",
        "   ->  Gather Merge  (cost=412345.10..412397.53 rows=48 width=40) "
        "(actual time=4100.112..4190.443 rows=72 loops=1)",
        "         Workers Planned: 2",
        "         Workers Launched: 2",
        "         ->  Sort  (cost=411345.08..411345.14 rows=24 width=40) "
        "(actual time=4088.100..4088.105 rows=24 loops=3)",
        "               Sort Key: (date_trunc('day'::text, events.created_at))",
        "               Sort Method: quicksort  Memory: 27kB",
        "               ->  Partial HashAggregate  (cost=411344.23..411344.53 rows=24 width=40) "
        "(actual time=4087.900..4087.950 rows=24 loops=3)",
        "                     Group Key: date_trunc('day'::text, events.created_at)",
        "                     Batches: 1  Memory Usage: 40kB",
        f"                     ->  Parallel Append  (cost=0.00..401234.00 rows={total_rows} "
        f"width=32) (actual time=0.030..3980.220 rows={total_rows // 3} loops=3)",
    ]
    tail = [
        f" Planning Time: {rng.randrange(1, 90)}.{rng.randrange(1000):03d} ms",
        f" Execution Time: {exe}",
        f"({len(head) + len(out)} rows)",
    ]
    text = "\n".join(head + out + tail) + "\n"
    a = rng.choice(nodes)
    worst = max((n for n in nodes if not n[1]), key=lambda n: n[3])
    return text, [
        Q("lookup", "what is the execution time?", exe),
        Q("count", "how many Index Scan nodes are in the plan?", sum(n[1] for n in nodes)),
        Q("top", "which partition has the most Rows Removed by Filter?", worst[0]),
        Q("lookup", f"how many actual rows did the scan on {a[0]} return?", f"rows={a[2]} loops=3"),
    ]


def gcloud_instances(rng: random.Random) -> tuple[str, list[Q]]:
    zones = ["us-central1-a", "us-central1-b", "europe-west1-b", "europe-west4-c", "asia-east1-a"]
    names = unique(
        rng,
        420,
        lambda: (
            f"{rng.choice(['web', 'batch', 'etl', 'gke-pool', 'bastion'])}-"
            f"{rng.choice(WORDS)}-{rng.randrange(100)}"
        ),
    )
    rows = []
    for n in names:
        status = rng.choices(["RUNNING", "TERMINATED", "STOPPING", "SUSPENDED"], [40, 8, 1, 1])[0]
        rows.append(
            (
                n,
                rng.choice(zones),
                rng.choice(["e2-medium", "e2-standard-4", "n2-highmem-8", "c3-standard-8"]),
                "true" if rng.random() < 0.25 else "",
                f"10.{rng.randrange(128)}.{rng.randrange(256)}.{rng.randrange(2, 255)}",
                f"34.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(2, 255)}"
                if status == "RUNNING" and rng.random() < 0.5
                else "",
                status,
            )
        )
    head = ("NAME", "ZONE", "MACHINE_TYPE", "PREEMPTIBLE", "INTERNAL_IP", "EXTERNAL_IP", "STATUS")
    w = [max(len(r[c]) for r in [head, *rows]) for c in range(7)]
    text = "".join(
        "  ".join(v.ljust(w[c]) for c, v in enumerate(r)).rstrip() + "\n" for r in [head, *rows]
    )
    a = rng.choice(rows)
    zone = rng.choice([z for z in zones if any(r[1] == z and r[6] == "TERMINATED" for r in rows)])
    return text, [
        Q("count", "how many instances are TERMINATED?", sum(r[6] == "TERMINATED" for r in rows)),
        Q("lookup", f"what is the internal IP of {a[0]}?", a[4]),
        Q(
            "count",
            "how many preemptible instances are in us-central1-a?",
            sum(r[3] == "true" and r[1] == "us-central1-a" for r in rows),
        ),
        Q(
            "list",
            f"which instances in {zone} are TERMINATED?",
            tuple(r[0] for r in rows if r[1] == zone and r[6] == "TERMINATED"),
        ),
    ]


def datadog_series(rng: random.Random) -> tuple[str, list[Q]]:
    hosts = unique(
        rng,
        40,
        lambda: f"{rng.choice(['web', 'db', 'cache', 'worker'])}-{rng.randrange(1, 60):02d}",
    )
    metrics = [("system.cpu.user", "percentage", "percent"), ("system.load.1", None, None)]
    series: list[dict[str, Any]] = []
    end = 1_717_430_400_000
    for h in hosts:
        env = rng.choice(["prod", "prod", "staging"])
        for metric, fam, unit in metrics:
            n = rng.randrange(8, 70)
            start = end - n * 20_000
            points = [[float(start + k * 20_000), round(rng.uniform(0, 99), 4)] for k in range(n)]
            series.append(
                {
                    "aggr": "avg",
                    "display_name": metric,
                    "end": end - 1000,
                    "expression": f"avg:{metric}{{host:{h}}}",
                    "interval": 20,
                    "metric": metric,
                    "pointlist": points,
                    "query_index": 0 if metric == "system.cpu.user" else 1,
                    "scope": f"host:{h}",
                    "start": start,
                    "tag_set": [f"host:{h}", f"env:{env}"],
                    "unit": [
                        {"family": fam, "name": unit, "plural": f"{unit}s", "scale_factor": 1.0},
                        None,
                    ]
                    if fam
                    else None,
                }
            )
    lens = [len(s["pointlist"]) for s in series]
    big = series[lens.index(max(lens))]
    big["pointlist"].insert(0, [float(big["start"] - 20_000), 1.5])
    big["start"] -= 20_000
    doc = {
        "status": "ok",
        "res_type": "time_series",
        "resp_version": 1,
        "query": "avg:system.cpu.user{*} by {host}, avg:system.load.1{*} by {host}",
        "from_date": end - 3_600_000,
        "to_date": end,
        "series": series,
        "values": [],
        "times": [],
        "message": "",
        "group_by": ["host"],
    }
    text = json.dumps(doc, indent=2)
    a = rng.choice(series)
    return text, [
        Q("top", "which series has the most points?", big["expression"]),
        Q(
            "count",
            "how many series are tagged env:staging?",
            sum("env:staging" in s["tag_set"] for s in series),
        ),
        Q("lookup", f"what is the start of {a['expression']}?", str(a["start"])),
        Q("count", "how many series are there?", len(series)),
    ]


END, MID, BAR, GAP = "\\- ", "+- ", "|  ", "   "


def mvn_tree(rng: random.Random) -> tuple[str, list[Q]]:
    groups = [
        "org.springframework",
        "com.fasterxml.jackson.core",
        "org.apache.commons",
        "io.netty",
        "org.slf4j",
        "io.micrometer",
        "com.google.guava",
        "org.hibernate.orm",
    ]
    arts = unique(
        rng,
        400,
        lambda: (
            rng.choice(groups),
            f"{rng.choice(WORDS)}-{rng.choice(['core', 'api', 'impl', 'common'])}"
            f"{rng.choice(['', '2', '3', '-jakarta'])}",
        ),
    )
    it = iter(arts)
    lines = [
        "[INFO] Scanning for projects...",
        "[INFO] ",
        "[INFO] ------------------------< com.acme:shop-api >------------------------",
        "[INFO] Building shop-api 1.4.0-SNAPSHOT",
        "[INFO] --------------------------------[ jar ]---------------------------------",
        "[INFO] ",
        "[INFO] --- maven-dependency-plugin:3.6.1:tree (default-cli) @ shop-api ---",
        "[INFO] com.acme:shop-api:jar:1.4.0-SNAPSHOT",
    ]
    deps: list[tuple[str, str, str, int]] = []  # coord, version, scope, depth
    direct: list[tuple[str, int]] = []

    def ver() -> str:
        return f"{rng.randrange(1, 7)}.{rng.randrange(20)}.{rng.randrange(10)}"

    # each direct dependency: its coordinate, scope and children (each with grandchildren)
    plan = []
    for _ in range(38):
        kids = [
            rng.randrange(0, 3) if rng.random() < 0.3 else 0 for _ in range(rng.randrange(0, 9))
        ]
        plan.append(kids)
    sizes = [len(k) + sum(k) for k in plan]
    plan[sizes.index(max(sizes))].append(0)  # one direct dependency stands alone at the top
    for d, kids in enumerate(plan):
        g, a = next(it)
        scope = rng.choices(["compile", "test", "runtime", "provided"], [10, 4, 2, 1])[0]
        v = ver()
        last = d == len(plan) - 1
        lines.append(f"[INFO] {END if last else MID}{g}:{a}:jar:{v}:{scope}")
        deps.append((f"{g}:{a}", v, scope, 0))
        for k, grand in enumerate(kids):
            g2, a2 = next(it)
            v2 = ver()
            lastk = k == len(kids) - 1
            pre = (GAP if last else BAR) + (END if lastk else MID)
            lines.append(f"[INFO] {pre}{g2}:{a2}:jar:{v2}:{scope}")
            deps.append((f"{g2}:{a2}", v2, scope, 1))
            for j in range(grand):
                g3, a3 = next(it)
                v3 = ver()
                pre3 = (GAP if last else BAR) + (GAP if lastk else BAR)
                pre3 += END if j == grand - 1 else MID
                lines.append(f"[INFO] {pre3}{g3}:{a3}:jar:{v3}:{scope}")
                deps.append((f"{g3}:{a3}", v3, scope, 2))
        direct.append((f"{g}:{a}", len(kids) + sum(kids)))
    lines += [
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] BUILD SUCCESS",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] Total time:  2.481 s",
        "[INFO] Finished at: 2024-06-03T10:12:44Z",
        "[INFO] ------------------------------------------------------------------------",
    ]
    text = "\n".join(lines) + "\n"
    a = rng.choice(deps)
    most = max(direct, key=lambda x: x[1])[0]
    return text, [
        Q("lookup", f"which version of {a[0]} is resolved?", a[1]),
        Q(
            "count",
            "how many test-scope dependencies are there?",
            sum(d[2] == "test" for d in deps),
        ),
        Q("top", "which direct dependency has the most transitive dependencies?", most),
        Q("list", "list the runtime dependencies", tuple(d[0] for d in deps if d[2] == "runtime")),
    ]


def gitlab_sast(rng: random.Random) -> tuple[str, list[Q]]:
    files = unique(
        rng,
        70,
        lambda: (
            f"app/{rng.choice(WORDS)}/{rng.choice(['views', 'models', 'serializers', 'tasks'])}.py"
        ),
    )
    fw = [rng.random() ** 3 for _ in files]
    rules = [
        ("bandit.B303", "Use of insecure MD5 hash function", "CWE-327"),
        ("bandit.B608", "Possible SQL injection vector", "CWE-89"),
        ("bandit.B105", "Hardcoded password string", "CWE-259"),
        ("bandit.B602", "subprocess call with shell=True", "CWE-78"),
        ("bandit.B311", "Standard pseudo-random generator", "CWE-330"),
    ]
    vulns: list[dict[str, Any]] = []
    for _ in range(360):
        rid, name, cwe = rng.choice(rules)
        f = rng.choices(files, fw)[0]
        line = rng.randrange(1, 600)
        vulns.append(
            {
                "id": f"{rng.randrange(16**32):032x}",
                "category": "sast",
                "name": name,
                "description": f"{name} detected.",
                "cve": f"semgrep_id:{rid}:{f}:{line}",
                "severity": rng.choices(
                    ["Critical", "High", "Medium", "Low", "Info"], [1, 5, 9, 6, 2]
                )[0],
                "scanner": {"id": "semgrep", "name": "Semgrep"},
                "location": {"file": f, "start_line": line, "end_line": line + rng.randrange(3)},
                "identifiers": [
                    {"type": "semgrep_id", "name": rid, "value": rid},
                    {
                        "type": "cwe",
                        "name": cwe,
                        "value": cwe[4:],
                        "url": f"https://cwe.mitre.org/data/definitions/{cwe[4:]}.html",
                    },
                ],
            }
        )
    by_file = Counter(v["location"]["file"] for v in vulns)
    top = max(by_file, key=lambda k: (by_file[k], k))
    vulns.append(
        dict(
            vulns[0],
            id=f"{rng.randrange(16**32):032x}",
            location={"file": top, "start_line": 1, "end_line": 1},
        )
    )
    by_file = Counter(v["location"]["file"] for v in vulns)
    doc = {
        "version": "15.0.7",
        "vulnerabilities": vulns,
        "scan": {
            "analyzer": {
                "id": "semgrep",
                "name": "Semgrep",
                "version": "4.12.0",
                "vendor": {"name": "GitLab"},
            },
            "scanner": {
                "id": "semgrep",
                "name": "Semgrep",
                "version": "1.74.0",
                "vendor": {"name": "GitLab"},
            },
            "type": "sast",
            "start_time": "2024-06-03T10:00:01",
            "end_time": "2024-06-03T10:02:44",
            "status": "success",
        },
    }
    text = json.dumps(doc, indent=2)
    f = rng.choice(sorted(by_file))
    return text, [
        Q("top", "which file has the most vulnerabilities?", top),
        Q(
            "count",
            "how many High severity vulnerabilities are there?",
            sum(v["severity"] == "High" for v in vulns),
        ),
        Q("count", f"how many vulnerabilities are in {f}?", by_file[f]),
        Q(
            "count",
            "how many vulnerabilities have the identifier CWE-89?",
            sum(any(i["name"] == "CWE-89" for i in v["identifiers"]) for v in vulns),
        ),
    ]


def har_capture(rng: random.Random) -> tuple[str, list[Q]]:
    hosts = [
        "shop.example.com",
        "cdn.example-static.net",
        "api.shop.example.com",
        "fonts.gstatic.com",
    ]
    kinds = [
        ("image/png", "image", ".png"),
        ("application/javascript", "script", ".js"),
        ("application/json", "fetch", ""),
        ("text/css", "stylesheet", ".css"),
        ("font/woff2", "font", ".woff2"),
    ]
    urls = unique(
        rng,
        240,
        lambda: (
            rng.choice(hosts),
            f"/{rng.choice(WORDS)}/{rng.choice(WORDS)}-{rng.randrange(1000)}",
            rng.choice(kinds),
        ),
    )
    entries: list[dict[str, Any]] = []
    times = rng.sample(range(4_000, 2_400_000), len(urls))
    for (host, path, (mime, rtype, ext)), t in zip(urls, times, strict=True):
        url = f"https://{host}{path}{ext}"
        status = rng.choices([200, 304, 404, 500], [30, 5, 2, 1])[0]
        size = rng.randrange(200, 900_000) if status == 200 else 0
        entries.append(
            {
                "_initiator": {
                    "type": "parser",
                    "url": "https://shop.example.com/",
                    "lineNumber": rng.randrange(200),
                },
                "_priority": rng.choice(["High", "Low", "VeryHigh"]),
                "_resourceType": rtype,
                "cache": {},
                "connection": str(rng.randrange(1000, 9999)),
                "pageref": "page_1",
                "request": {
                    "method": "GET" if rtype != "fetch" or rng.random() < 0.6 else "POST",
                    "url": url,
                    "httpVersion": "h2",
                    "headers": [
                        {"name": ":authority", "value": host},
                        {"name": ":method", "value": "GET"},
                        {"name": ":path", "value": path + ext},
                        {"name": "accept", "value": "*/*"},
                        {"name": "user-agent", "value": "Mozilla/5.0 (X11; Linux x86_64)"},
                    ],
                    "queryString": [],
                    "cookies": [],
                    "headersSize": -1,
                    "bodySize": 0,
                },
                "response": {
                    "status": status,
                    "statusText": "",
                    "httpVersion": "h2",
                    "headers": [
                        {"name": "content-type", "value": mime},
                        {"name": "cache-control", "value": "max-age=3600"},
                    ],
                    "cookies": [],
                    "content": {"size": size, "mimeType": mime},
                    "redirectURL": "",
                    "headersSize": -1,
                    "bodySize": size,
                    "_transferSize": size + rng.randrange(80, 400),
                    "_error": None,
                },
                "serverIPAddress": f"151.101.{rng.randrange(256)}.{rng.randrange(1, 255)}",
                "startedDateTime": f"2024-06-03T10:15:{rng.randrange(60):02d}."
                f"{rng.randrange(1000):03d}Z",
                "time": t / 1000,
                "timings": {
                    "blocked": round(rng.uniform(0, 5), 3),
                    "dns": -1,
                    "ssl": -1,
                    "connect": -1,
                    "send": 0.1,
                    "wait": round(t / 1000 * 0.7, 3),
                    "receive": round(t / 1000 * 0.3, 3),
                    "_blocked_queueing": 1.2,
                },
            }
        )
    doc = {
        "log": {
            "version": "1.2",
            "creator": {"name": "WebInspector", "version": "537.36"},
            "pages": [
                {
                    "startedDateTime": "2024-06-03T10:15:00.000Z",
                    "id": "page_1",
                    "title": "https://shop.example.com/",
                    "pageTimings": {"onContentLoad": 812.4, "onLoad": 2290.1},
                }
            ],
            "entries": entries,
        }
    }
    text = json.dumps(doc, indent=2)
    slow = max(entries, key=lambda e: e["time"])
    a = rng.choice(entries)
    return text, [
        Q(
            "count",
            "how many requests returned 404?",
            sum(e["response"]["status"] == 404 for e in entries),
        ),
        Q("top", "which request took the longest?", slow["request"]["url"]),
        Q(
            "sum",
            "what is the total content size of the image/png responses?",
            str(
                sum(
                    e["response"]["content"]["size"]
                    for e in entries
                    if e["response"]["content"]["mimeType"] == "image/png"
                )
            ),
        ),
        Q("lookup", f"what is the serverIPAddress of {a['request']['url']}?", a["serverIPAddress"]),
    ]


PROBE5 = {
    "stripe": stripe_charges,
    "slack-hist": slack_history,
    "trivy": trivy_scan,
    "pandas": pandas_frame,
    "explain": explain_analyze,
    "gcloud-ls": gcloud_instances,
    "datadog": datadog_series,
    "mvn-tree": mvn_tree,
    "gl-sast": gitlab_sast,
    "har": har_capture,
}
