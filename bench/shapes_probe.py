"""The ``probe`` set of ``bench/shapes.py``: results a coding or ops agent gets that the other
sets lack (a ``kubectl get events`` table, ``pip list --outdated``, ``cargo build``
diagnostics, ``journalctl`` lines, an nginx access log, a GitHub pulls JSON array, an
``ls -l`` listing, a Prometheus text exposition, a ``go test -json`` stream, a cloud
billing CSV), with their own field names and wording. Written before the guard was changed
for it, so its first run is a measure of unseen data."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from _shapes import FIRST, LAST, WORDS, Q

_REASONS = [
    ("Normal", "Scheduled", "Successfully assigned {ns}/{obj} to node-{n}"),
    ("Normal", "Pulled", 'Container image "registry.io/{w}:{n}.0" already present on machine'),
    ("Normal", "Created", "Created container {w}"),
    ("Normal", "Started", "Started container {w}"),
    ("Warning", "BackOff", "Back-off restarting failed container {w} in pod {obj}"),
    ("Warning", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 50{n}"),
    ("Warning", "FailedMount", 'MountVolume.SetUp failed for volume "{w}-vol" : secret not found'),
    ("Normal", "Killing", "Stopping container {w}"),
]


def kube_events(rng: random.Random) -> tuple[str, list[Q]]:
    objects = [f"pod/{rng.choice(WORDS)}-{rng.randrange(16**5):05x}-{k}" for k in range(300)] + [
        f"deployment/{w}" for w in WORDS[:8]
    ]
    rows = []
    for _i in range(1800):
        kind, reason, msg = rng.choices(_REASONS, [5, 5, 5, 5, 2, 2, 1, 2])[0]
        obj = rng.choice(objects)
        text = msg.format(
            ns="default", obj=obj.split("/")[1], n=rng.randrange(1, 9), w=rng.choice(WORDS)
        )
        seen = f"{rng.randrange(1, 59)}{rng.choice('smh')}"
        rows.append((seen, kind, reason, obj, text))
    hot = objects[rng.randrange(len(objects))]
    for _ in range(12):
        rows.insert(
            rng.randrange(len(rows)),
            ("3m", "Warning", "BackOff", hot, f"Back-off restarting failed container app in {hot}"),
        )
    widths = [10, 9, 13, 36]
    head = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    text = "".join(
        "".join(f"{c:<{w}}" for c, w in zip(r[:4], widths, strict=True)) + r[4] + "\n"
        for r in [tuple(head), *rows]
    )
    mounts = Counter(r[3] for r in rows if r[2] == "FailedMount")
    once = sorted(o for o, n in mounts.items() if n == 1)
    pick = next(r for r in rows if r[2] == "FailedMount" and r[3] == once[0])
    warns = Counter(r[3] for r in rows if r[1] == "Warning")
    return text, [
        Q("count", "how many BackOff events are there?", sum(r[2] == "BackOff" for r in rows)),
        Q("lookup", f"what does the FailedMount event on {pick[3]} say?", pick[4]),
        Q("top", "which object has the most Warning events?", warns.most_common(1)[0][0]),
        Q("distinct", "what event reasons show up?", tuple(sorted({r[2] for r in rows}))),
    ]


def pip_outdated(rng: random.Random) -> tuple[str, list[Q]]:
    rows: list[tuple[str, str, str, str]] = []
    names: set[str] = set()
    while len(rows) < 650:
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}{rng.choice(['', 'py', '-client'])}"
        if name in names:
            continue
        names.add(name)
        major = rng.randrange(0, 6)
        have = f"{major}.{rng.randrange(20)}.{rng.randrange(10)}"
        latest = f"{major + rng.randrange(0, 2)}.{rng.randrange(20, 40)}.{rng.randrange(10)}"
        rows.append((name, have, latest, rng.choices(["wheel", "sdist"], [9, 1])[0]))
    w = max(len(r[0]) for r in rows)
    head = f"{'Package':<{w}} {'Version':<9} {'Latest':<9} Type\n"
    rule = f"{'-' * w} {'-' * 9} {'-' * 9} -----\n"
    text = head + rule + "".join(f"{a:<{w}} {b:<9} {c:<9} {d}\n" for a, b, c, d in rows)
    r, r2 = rng.sample(rows, 2)
    return text, [
        Q("lookup", f"what's the newest release of {r[0]}?", r[2]),
        Q("lookup", f"which version of {r2[0]} do we have installed?", r2[1]),
        Q("count", "how many outdated packages are sdists?", sum(x[3] == "sdist" for x in rows)),
        Q(
            "count",
            "how many of the outdated packages ship as wheels?",
            sum(x[3] == "wheel" for x in rows),
        ),
    ]


_RUST_ERRORS = [
    ("E0308", "mismatched types"),
    ("E0599", "no method named `{w}` found for struct `{W}` in the current scope"),
    ("E0425", "cannot find value `{w}` in this scope"),
    ("E0382", "borrow of moved value: `{w}`"),
]


def cargo_build(rng: random.Random) -> tuple[str, list[Q]]:
    blocks = []
    errors: list[tuple[str, str, str]] = []
    warnings = 0
    for _i in range(700):
        path = f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.rs"
        line, col = rng.randrange(1, 900), rng.randrange(1, 60)
        w = rng.choice(WORDS)
        if rng.random() < 0.12:
            code, msg = rng.choice(_RUST_ERRORS)
            head = f"error[{code}]: {msg.format(w=w, W=w.title())}"
            errors.append((code, head, f"{path}:{line}:{col}"))
        else:
            head = f"warning: unused variable: `{w}`"
            warnings += 1
        blocks.append(
            f"{head}\n  --> {path}:{line}:{col}\n   |\n{line:>3}|     let {w} = "
            f"{rng.randrange(100)};\n   |         {'^' * len(w)}\n   |\n"
            + (
                "   = note: `#[warn(unused_variables)]` on by default\n"
                if head.startswith("warning")
                else ""
            )
        )
    text = (
        "   Compiling taskloom-core v0.4.2 (/home/dev/taskloom-core)\n"
        + "\n".join(blocks)
        + f"\nwarning: `taskloom-core` (lib) generated {warnings} warnings\n"
        f"error: could not compile `taskloom-core` (lib) due to {len(errors)} previous errors;"
        f" {warnings} warnings emitted\n"
    )
    e = rng.choice([x for x in errors if sum(y[2] == x[2] for y in errors) == 1])
    return text, [
        Q("count", "how many E0308 errors are there?", sum(x[0] == "E0308" for x in errors)),
        Q("first", "where is the first compile error?", errors[0][2]),
        Q("lookup", f"what error is reported at {e[2]}?", e[1]),
        Q(
            "count",
            "how many E0599 errors did the build hit?",
            sum(x[0] == "E0599" for x in errors),
        ),
    ]


def journal(rng: random.Random) -> tuple[str, list[Q]]:
    ips = [f"203.0.113.{k}" for k in rng.sample(range(2, 250), 12)]
    lines = []
    failed: Counter[str] = Counter()
    oom = rng.randrange(1000, 3000)
    killed = ""
    for i in range(4200):
        stamp = f"Mar 05 {10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}"
        r = rng.random()
        if i == oom:
            pid = rng.randrange(2000, 9000)
            killed = f"Killed process {pid} (java)"
            body = (
                f"kernel: Out of memory: {killed} total-vm:8123456kB, anon-rss:"
                f"{rng.randrange(10**6, 9 * 10**6)}kB, file-rss:0kB"
            )
        elif r < 0.3:
            ip = rng.choice(ips)
            failed[ip] += 1
            user = rng.choice(["admin", "root", "oracle", "test", "ubuntu"])
            body = (
                f"sshd[{rng.randrange(1000, 9999)}]: Failed password for invalid user {user} "
                f"from {ip} port {rng.randrange(30000, 65000)} ssh2"
            )
        elif r < 0.45:
            body = (
                f"sshd[{rng.randrange(1000, 9999)}]: Accepted publickey for deploy from "
                f"{rng.choice(ips)} port {rng.randrange(30000, 65000)} ssh2"
            )
        elif r < 0.6:
            body = (
                f"CRON[{rng.randrange(1000, 9999)}]: (root) CMD (/usr/local/bin/"
                f"{rng.choice(WORDS)}.sh)"
            )
        elif r < 0.8:
            body = f"systemd[1]: Started Session {i} of User deploy."
        else:
            body = (
                f"nginx[{rng.randrange(800, 900)}]: {rng.choice(WORDS)} upstream "
                f"{rng.choice(['timed out', 'reset', 'ok'])}"
            )
        lines.append(f"{stamp} web-01 {body}")
    text = "\n".join(lines) + "\n"
    ip = rng.choice(ips)
    return text, [
        Q("count", f"how many failed password attempts came from {ip}?", failed[ip]),
        Q("lookup", "which process did the OOM killer kill?", killed),
        Q("count", "how many CRON lines are in the journal?", sum("CRON[" in x for x in lines)),
        Q("top", "which IP has the most failed password attempts?", failed.most_common(1)[0][0]),
    ]


def nginx_access(rng: random.Random) -> tuple[str, list[Q]]:
    ips = [f"198.51.100.{k}" for k in rng.sample(range(2, 250), 30)]
    paths = ["/api/v2/cart", "/api/v2/checkout", "/login", "/static/app.js", "/healthz"]
    agents = [
        "curl/8.4.0",
        "Mozilla/5.0 (X11; Linux x86_64)",
        "kube-probe/1.29",
        "Go-http-client/2.0",
    ]
    recs = []
    for i in range(6000):
        ip = rng.choices(ips, [30 if k == 7 else 10 for k in range(len(ips))])[0]
        method = rng.choice(["GET", "GET", "POST"])
        path = rng.choice(paths)
        status = rng.choices([200, 301, 404, 500], [80, 5, 10, 5])[0]
        stamp = f"05/Mar/2024:{10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d} +0000"
        recs.append(
            (ip, stamp, method, path, status, rng.randrange(1000, 90000), rng.choice(agents))
        )
    text = "".join(
        f'{ip} - - [{st}] "{m} {p} HTTP/1.1" {s} {b} "-" "{a}"\n' for ip, st, m, p, s, b, a in recs
    )
    pick = recs[rng.randrange(100, 5900)]
    by_ip = Counter(r[0] for r in recs)
    return text, [
        Q("count", "how many requests returned 404?", sum(r[4] == 404 for r in recs)),
        Q(
            "count",
            "how many POST requests to /api/v2/checkout got a 500?",
            sum(r[2] == "POST" and r[3] == "/api/v2/checkout" and r[4] == 500 for r in recs),
        ),
        Q("lookup", f"what user agent made the request at {pick[1][:20]}?", pick[6]),
        Q("top", "which client IP sent the most requests?", by_ip.most_common(1)[0][0]),
    ]


def gh_pulls(rng: random.Random) -> tuple[str, list[Q]]:
    logins = [f"{f.lower()}{ln[:3].lower()}" for f, ln in zip(FIRST, LAST * 2, strict=False)]
    pulls: list[dict[str, Any]] = []
    for i in range(260):
        n = 4000 + i * 3
        state = rng.choices(["open", "closed"], [4, 6])[0]
        sha = f"{rng.randrange(16**40):040x}"
        pulls.append(
            {
                "url": f"https://api.github.com/repos/acme/widgets/pulls/{n}",
                "id": 1_800_000_000 + n,
                "number": n,
                "state": state,
                "title": f"{rng.choice(['Add', 'Fix', 'Drop', 'Speed up'])} "
                f"{' '.join(rng.sample(WORDS, 3))} #{i}",
                "user": {"login": rng.choice(logins), "type": "User"},
                "draft": state == "open" and rng.random() < 0.3,
                "labels": [{"name": x} for x in rng.sample(["bug", "infra", "docs", "perf"], 2)],
                "requested_reviewers": [{"login": x} for x in rng.sample(logins, 2)],
                "head": {
                    "label": f"acme:feature/{rng.choice(WORDS)}-{i}",
                    "ref": f"feature/{rng.choice(WORDS)}-{i}",
                    "sha": sha,
                },
                "base": {"ref": rng.choice(["main", "release-2.x", "develop"])},
                "created_at": f"2024-0{rng.randrange(1, 10)}-1{rng.randrange(10)}T09:00:00Z",
                "merged_at": None
                if state == "open" or rng.random() < 0.3
                else f"2024-0{rng.randrange(1, 10)}-2{rng.randrange(10)}T12:00:00Z",
                "body": " ".join(rng.choice(WORDS) for _ in range(40)),
            }
        )
    text = json.dumps(pulls, indent=2)
    p, p2 = rng.sample(pulls, 2)
    return text, [
        Q("lookup", f"what branch is PR #{p['number']} from?", p["head"]["ref"]),
        Q(
            "count",
            "how many open pull requests are drafts?",
            sum(x["state"] == "open" and x["draft"] for x in pulls),
        ),
        Q(
            "count",
            "how many PRs target release-2.x?",
            sum(x["base"]["ref"] == "release-2.x" for x in pulls),
        ),
        Q("holder", f"which PR has head sha {p2['head']['sha']}?", p2["title"]),
    ]


def ls_long(rng: random.Random) -> tuple[str, list[Q]]:
    owners = ["deploy", "root", "www-data", "postgres"]
    rows = []
    for i in range(1500):
        kind = rng.choices(["-", "d", "l"], [8, 2, 1])[0]
        perms = {"-": "-rw-r--r--", "d": "drwxr-xr-x", "l": "lrwxrwxrwx"}[kind]
        name = f"{rng.choice(WORDS)}_{i}" + (".log" if kind == "-" else "")
        size = {"-": rng.randrange(10, 9_000_000), "d": 4096, "l": len(name) + 9}[kind]
        if kind == "-" and i == 777:
            size = 48_123_456
        when = (
            f"{rng.choice(['Jan', 'Feb', 'Mar'])} {rng.randrange(1, 29):>2} "
            f"{rng.choice(['10:02', '23:59', ' 2023'])}"
        )
        target = f" -> releases/{rng.randrange(100)}" if kind == "l" else ""
        owner = rng.choice(owners)
        rows.append((perms, owner, size, when, name, target))
    text = f"total {sum(r[2] for r in rows) // 1024}\n" + "".join(
        f"{p} {1 if p[0] != 'd' else 2:>2} {o:<8} {o:<8} {s:>9} {w} {n}{t}\n"
        for p, o, s, w, n, t in rows
    )
    f = rng.choice([r for r in rows if r[0][0] == "-"])
    link = rng.choice([r for r in rows if r[0][0] == "l"])
    o = rng.choice(owners)
    return text, [
        Q("lookup", f"how big is {f[4]}?", str(f[2])),
        Q("top", "which is the largest file here?", max(rows, key=lambda r: r[2])[4]),
        Q("count", f"how many entries does {o} own?", sum(r[1] == o for r in rows)),
        Q("lookup", f"where does the {link[4]} symlink point?", link[5].strip("-> ")),
    ]


def prometheus(rng: random.Random) -> tuple[str, list[Q]]:
    handlers = [f"/api/{w}" for w in WORDS] + [f"/admin/{w}" for w in WORDS[:10]]
    out = [
        "# HELP http_requests_total Total number of HTTP requests.",
        "# TYPE http_requests_total counter",
    ]
    series = []
    for h in handlers:
        for m in ("GET", "POST", "DELETE"):
            for code in ("200", "400", "404", "500"):
                v = rng.randrange(0, 90000)
                series.append((h, m, code, v))
                out.append(f'http_requests_total{{code="{code}",handler="{h}",method="{m}"}} {v}')
    out += [
        "# HELP http_request_duration_seconds Request latency.",
        "# TYPE http_request_duration_seconds histogram",
    ]
    for h in handlers:
        acc = 0
        for le in ("0.05", "0.1", "0.25", "0.5", "1", "2.5", "+Inf"):
            acc += rng.randrange(0, 5000)
            out.append(f'http_request_duration_seconds_bucket{{handler="{h}",le="{le}"}} {acc}')
        out.append(f'http_request_duration_seconds_sum{{handler="{h}"}} {acc * 0.21:.3f}')
        out.append(f'http_request_duration_seconds_count{{handler="{h}"}} {acc}')
    fds = rng.randrange(40, 900)
    out += [
        "# HELP process_open_fds Number of open file descriptors.",
        "# TYPE process_open_fds gauge",
        f"process_open_fds {fds}",
        "# HELP process_resident_memory_bytes Resident memory size in bytes.",
        "# TYPE process_resident_memory_bytes gauge",
        f"process_resident_memory_bytes {rng.randrange(10**8, 9 * 10**8)}",
    ]
    text = "\n".join(out) + "\n"
    s = rng.choice(series)
    return text, [
        Q(
            "lookup",
            f"http_requests_total for {s[1]} {s[0]} with code {s[2]}",
            str(s[3]),
        ),
        Q("lookup", "how many file descriptors are open?", str(fds)),
        Q("count", "how many http_requests_total series are exported?", len(series)),
        Q(
            "top",
            "which handler has the most 500 responses?",
            max(
                {h for h, *_ in series},
                key=lambda h: sum(v for hh, _m, c, v in series if hh == h and c == "500"),
            ),
        ),
    ]


def go_test_json(rng: random.Random) -> tuple[str, list[Q]]:
    pkgs = [f"example.com/shop/{w}" for w in WORDS[:12]]
    events: list[dict[str, Any]] = []
    tests: list[tuple[str, str, str, float]] = []
    t = 0
    for pkg in pkgs:
        for k in range(rng.randrange(40, 70)):
            name = f"Test{rng.choice(WORDS).title()}{rng.choice(WORDS).title()}{k}"
            t += 1
            stamp = f"2024-03-05T10:{t // 60 % 60:02d}:{t % 60:02d}.{rng.randrange(999):03d}Z"
            events.append({"Time": stamp, "Action": "run", "Package": pkg, "Test": name})
            events.append(
                {
                    "Time": stamp,
                    "Action": "output",
                    "Package": pkg,
                    "Test": name,
                    "Output": f"=== RUN   {name}\n",
                }
            )
            outcome = rng.choices(["pass", "fail", "skip"], [90, 3, 7])[0]
            elapsed = round(rng.random() * 4, 2)
            tests.append((pkg, name, outcome, elapsed))
            if outcome == "fail":
                events.append(
                    {
                        "Time": stamp,
                        "Action": "output",
                        "Package": pkg,
                        "Test": name,
                        "Output": f"    {name.lower()}_test.go:{rng.randrange(20, 300)}: "
                        f"got {rng.randrange(9)}, want {rng.randrange(9)}\n",
                    }
                )
            events.append(
                {
                    "Time": stamp,
                    "Action": outcome,
                    "Package": pkg,
                    "Test": name,
                    "Elapsed": elapsed,
                }
            )
        bad = any(x[0] == pkg and x[2] == "fail" for x in tests)
        events.append(
            {
                "Time": stamp,
                "Action": "fail" if bad else "pass",
                "Package": pkg,
                "Elapsed": round(rng.random() * 30, 3),
            }
        )
    text = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
    passed = [x for x in tests if x[2] == "pass"]
    p = rng.choice(passed)
    pkg = rng.choice(pkgs)
    return text, [
        Q("list", "which tests failed?", tuple(x[1] for x in tests if x[2] == "fail")),
        Q("count", "how many tests were skipped?", sum(x[2] == "skip" for x in tests)),
        Q("lookup", f"how long did {p[1]} take?", str(p[3])),
        Q(
            "count",
            f"how many tests passed in {pkg}?",
            sum(x[0] == pkg and x[2] == "pass" for x in tests),
        ),
    ]


def billing_csv(rng: random.Random) -> tuple[str, list[Q]]:
    services = ["AmazonEC2", "AmazonS3", "AmazonRDS", "AWSLambda", "AmazonCloudFront"]
    centers = ["cc-platform", "cc-data", "cc-web", "cc-research"]
    rows = []
    for i in range(3000):
        rows.append(
            (
                f"li-{rng.randrange(16**10):010x}",
                rng.choice(["prod", "staging", "sandbox"]),
                rng.choice(services),
                f"{rng.random() * 500:.4f}",
                f"{rng.random() * 300:.2f}" if i != 1234 else "9876.54",
                f"2024-02-{rng.randrange(1, 29):02d}",
                rng.choice(centers),
            )
        )
    head = (
        "line_item,account_alias,service_code,usage_amount,unblended_cost,usage_date,cost_center\n"
    )
    text = head + "".join(",".join(r) + "\n" for r in rows)
    r = rng.choice(rows)
    svc, cc = rng.choice(services), rng.choice(centers)
    return text, [
        Q("lookup", f"unblended cost of line item {r[0]}?", r[4]),
        Q(
            "count",
            f"how many {svc} line items were charged to {cc}?",
            sum(x[2] == svc and x[6] == cc for x in rows),
        ),
        Q("top", "which line item cost the most?", rows[1234][0]),
        Q("distinct", "what cost centers are there?", tuple(centers)),
    ]


PROBE = {
    "k8s-events": kube_events,
    "pip-outdated": pip_outdated,
    "cargo": cargo_build,
    "journal": journal,
    "nginx-access": nginx_access,
    "gh-pulls": gh_pulls,
    "ls-l": ls_long,
    "prometheus": prometheus,
    "go-test": go_test_json,
    "billing-csv": billing_csv,
}
