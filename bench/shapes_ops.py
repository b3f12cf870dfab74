"""The ``ops`` set of ``bench/shapes.py``: results of operations tools the other sets lack
(a pod list, JUnit XML, a SQL client's bordered table, a plan, an audit report, a commit
log with stats, a unified diff, a CI run log, an HTML table, container inspection)."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from _shapes import FIRST, LAST, WORDS, Q

NAMESPACES = ["default", "payments", "search", "ingest", "monitoring"]
PHASES = ["Running", "Pending", "Failed", "Succeeded"]


def kube_pods(rng: random.Random) -> tuple[str, list[Q]]:
    items: list[dict[str, Any]] = []
    for i in range(900):
        name = f"{rng.choice(WORDS)}-{rng.randrange(16**5):05x}-{i}"
        phase = rng.choices(PHASES, [70, 12, 8, 10])[0]
        containers = [
            {
                "name": f"c{k}-{rng.choice(WORDS)}",
                "image": f"registry.local/{rng.choice(WORDS)}:{rng.randrange(1, 9)}.{k}",
                "ready": phase == "Running",
                "restartCount": rng.choice([0, 0, 0, 1, 2, 5]) + (i == 417) * 90,
                "state": {"running": {"startedAt": f"2024-05-0{rng.randrange(1, 9)}T10:00:00Z"}},
            }
            for k in range(rng.randrange(1, 3))
        ]
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": rng.choice(NAMESPACES),
                    "uid": f"{rng.randrange(16**8):08x}-{rng.randrange(16**4):04x}",
                    "labels": {"app": name.rsplit("-", 2)[0], "tier": rng.choice(["web", "db"])},
                },
                "spec": {
                    "nodeName": f"node-{rng.randrange(1, 30):02d}",
                    "containers": [{"name": c["name"], "image": c["image"]} for c in containers],
                },
                "status": {
                    "phase": phase,
                    "podIP": f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}",
                    "containerStatuses": containers,
                },
            }
        )
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2)
    p = rng.choice(items)
    ns = rng.choice(NAMESPACES)
    worst = max(
        items, key=lambda x: sum(c["restartCount"] for c in x["status"]["containerStatuses"])
    )
    return text, [
        Q(
            "lookup",
            f"which node is pod {p['metadata']['name']} scheduled on?",
            p["spec"]["nodeName"],
        ),
        Q(
            "count",
            f"how many Pending pods are there in the {ns} namespace?",
            sum(
                1
                for x in items
                if x["status"]["phase"] == "Pending" and x["metadata"]["namespace"] == ns
            ),
        ),
        Q(
            "count",
            "How many pods have phase Failed?",
            sum(1 for x in items if x["status"]["phase"] == "Failed"),
        ),
        Q("max", "which pod has the highest restartCount?", worst["metadata"]["name"]),
    ]


def junit_xml(rng: random.Random) -> tuple[str, list[Q]]:
    suites = []
    cases: list[dict[str, Any]] = []
    failing: list[str] = []
    for s in range(40):
        sname = f"tests.{rng.choice(WORDS)}.test_{rng.choice(WORDS)}_{s}"
        body = []
        for t in range(rng.randrange(60, 110)):
            name = f"test_{rng.choice(WORDS)}_{rng.choice(WORDS)}_{s}_{t}"
            secs = f"{rng.random() * 3:.3f}"
            r = rng.random()
            outcome = "failed" if r < 0.004 else "skipped" if r < 0.06 else "passed"
            cases.append({"suite": sname, "name": name, "time": secs, "outcome": outcome})
            inner = ""
            if outcome == "failed":
                failing.append(name)
                inner = (
                    f'<failure message="AssertionError: expected {rng.randrange(100)}" '
                    f'type="AssertionError">Traceback (most recent call last):\n  File '
                    f'"{sname.replace(".", "/")}.py", line {rng.randrange(10, 400)}\n'
                    "AssertionError</failure>"
                )
            elif outcome == "skipped":
                inner = '<skipped message="requires network"/>'
            body.append(
                f'    <testcase classname="{sname}" name="{name}" time="{secs}">{inner}</testcase>'
            )
        n = len(body)
        fails = sum(1 for c in cases if c["suite"] == sname and c["outcome"] == "failed")
        skips = sum(1 for c in cases if c["suite"] == sname and c["outcome"] == "skipped")
        suites.append(
            f'  <testsuite name="{sname}" tests="{n}" failures="{fails}" errors="0" '
            f'skipped="{skips}">\n' + "\n".join(body) + "\n  </testsuite>"
        )
    text = (
        '<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n'
        + "\n".join(suites)
        + "\n</testsuites>\n"
    )
    c = rng.choice(cases)
    return text, [
        Q("list", "which tests failed?", tuple(failing)),
        Q(
            "count",
            "how many testcases were skipped?",
            sum(1 for x in cases if x["outcome"] == "skipped"),
        ),
        Q("lookup", f"how long did {c['name']} take?", c["time"]),
    ]


def sql_client_table(rng: random.Random) -> tuple[str, list[Q]]:
    plans = ["free", "team", "business", "enterprise"]
    regions = ["eu-west", "us-east", "ap-south", "sa-east"]
    rows = []
    for i in range(3500):
        rows.append(
            [
                str(10_000 + i * 3),
                f"{rng.choice(FIRST).lower()}.{rng.choice(LAST).lower()}{i}@example.org",
                rng.choice(plans),
                rng.choice(regions),
                f"2023-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
            ]
        )
    head = ["account_id", "contact_email", "plan", "region", "created_on"]
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(head)]
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells: list[str]) -> str:
        return "|" + "|".join(f" {c:<{w}} " for c, w in zip(cells, widths, strict=True)) + "|"

    text = "\n".join(
        [
            border,
            line(head),
            border,
            *(line(r) for r in rows),
            border,
            f"{len(rows)} rows in set (0.04 sec)",
        ]
    )
    r = rng.choice(rows)
    p, g = rng.choice(plans), rng.choice(regions)
    return text, [
        Q("lookup", f"contact_email for account_id {r[0]}", r[1]),
        Q(
            "count",
            f"how many accounts on the {p} plan in region {g}?",
            sum(1 for x in rows if x[2] == p and x[3] == g),
        ),
        Q("holder", f"which account has email {rows[2000][1]}?", rows[2000][0]),
        Q("last", "the last account row", rows[-1][1]),
    ]


def terraform_plan(rng: random.Random) -> tuple[str, list[Q]]:
    kinds = ["aws_instance", "aws_security_group_rule", "aws_s3_bucket", "aws_iam_role"]
    acts = [("created", "+"), ("updated in-place", "~"), ("destroyed", "-")]
    blocks = []
    tally: Counter[str] = Counter()
    addrs: list[tuple[str, str]] = []
    for i in range(1400):
        addr = f"module.{rng.choice(WORDS)}.{rng.choice(kinds)}.r{i}"
        act, sym = rng.choices(acts, [6, 3, 1])[0]
        tally[act] += 1
        addrs.append((addr, act))
        attrs = "\n".join(
            f'      {sym} {k:<14} = "{rng.choice(WORDS)}-{rng.randrange(999)}"'
            for k in rng.sample(
                ["ami", "instance_type", "tags", "bucket", "cidr", "name", "arn"], 4
            )
        )
        blocks.append(
            f'  # {addr} will be {act}\n  {sym} resource "{addr.split(".")[-2]}" "r{i}" {{\n'
            f"{attrs}\n    }}\n"
        )
    summary = (
        f"Plan: {tally['created']} to add, {tally['updated in-place']} to change, "
        f"{tally['destroyed']} to destroy."
    )
    text = (
        "Terraform used the selected providers to generate the following execution\nplan. "
        "Resource actions are indicated with the following symbols:\n  + create\n"
        "  ~ update in-place\n"
        "  - destroy\n\nTerraform will perform the following actions:\n\n"
        + "\n".join(blocks)
        + "\n"
        + summary
        + "\n"
    )
    a = rng.choice(addrs)
    return text, [
        Q("lookup", f"what will terraform do to {a[0]}?", f"{a[0]} will be {a[1]}"),
        Q("count", "how many resources will be destroyed?", tally["destroyed"]),
        Q("summary", "what is the plan summary line (add/change/destroy)?", summary),
    ]


def npm_audit(rng: random.Random) -> tuple[str, list[Q]]:
    sev = ["low", "moderate", "high", "critical"]
    vulns: dict[str, dict[str, Any]] = {}
    for i in range(1600):
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i}"
        vulns[name] = {
            "name": name,
            "severity": rng.choices(sev, [4, 4, 2, 1])[0],
            "isDirect": rng.random() < 0.25,
            "via": [
                {
                    "source": 1_090_000 + rng.randrange(99_999),
                    "title": f"{rng.choice(['Prototype pollution', 'ReDoS', 'Path traversal'])}"
                    f" in {name}",
                    "url": f"https://github.com/advisories/GHSA-{rng.randrange(16**4):04x}",
                    "range": f"<{rng.randrange(1, 9)}.{rng.randrange(10)}.0",
                }
            ],
            "effects": [],
            "range": f"<{rng.randrange(1, 9)}.0.0",
            "nodes": [f"node_modules/{name}"],
            "fixAvailable": rng.random() < 0.7,
        }
    counts = Counter(v["severity"] for v in vulns.values())
    doc = {
        "auditReportVersion": 2,
        "vulnerabilities": vulns,
        "metadata": {"vulnerabilities": {**{s: counts[s] for s in sev}, "total": len(vulns)}},
    }
    text = json.dumps(doc, indent=2)
    v = rng.choice(list(vulns.values()))
    return text, [
        Q("lookup", f"severity of the {v['name']} advisory", v["severity"]),
        Q(
            "count",
            "how many critical vulnerabilities are in direct dependencies?",
            sum(1 for x in vulns.values() if x["severity"] == "critical" and x["isDirect"]),
        ),
        Q(
            "count",
            "number of high severity vulns with no fix available",
            sum(1 for x in vulns.values() if x["severity"] == "high" and not x["fixAvailable"]),
        ),
    ]


def git_log_stat(rng: random.Random) -> tuple[str, list[Q]]:
    authors = [f"{f} {ln}" for f, ln in zip(FIRST[:9], LAST[:9], strict=False)]
    commits = []
    parts = []
    for _i in range(1500):
        sha = f"{rng.randrange(16**40):040x}"
        who = rng.choice(authors)
        files = [
            f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{rng.randrange(50)}.py"
            for _ in range(rng.randrange(1, 5))
        ]
        subject = (
            f"{rng.choice(['fix', 'feat', 'refactor', 'docs'])}: {' '.join(rng.sample(WORDS, 4))}"
        )
        commits.append((sha, who, subject, files))
        stat = "\n".join(
            f" {f:<40} | {rng.randrange(1, 80):>3} {'+' * rng.randrange(1, 9)}" for f in files
        )
        parts.append(
            f"commit {sha}\nAuthor: {who} <{who.split()[0].lower()}@example.dev>\n"
            f"Date:   Tue Mar {rng.randrange(1, 29)} 1{rng.randrange(10)}:"
            f"0{rng.randrange(10)}:00 2024 +0100\n\n"
            f"    {subject}\n\n{stat}\n {len(files)} files changed\n"
        )
    text = "\n".join(parts)
    c = rng.choice(commits)
    a = rng.choice(authors)
    return text, [
        Q("lookup", f"who authored commit {c[0][:12]}?", c[1]),
        Q("count", f"how many commits did {a} author?", sum(1 for x in commits if x[1] == a)),
        Q("lookup", f"which files did commit {c[0][:10]} touch?", tuple(c[3])),
        Q("first", "subject of the most recent commit (first in the log)", commits[0][2]),
    ]


def unified_diff(rng: random.Random) -> tuple[str, list[Q]]:
    files = []
    out = []
    for i in range(260):
        path = f"lib/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{i}.go"
        hunks = []
        added = removed = 0
        for _h in range(rng.randrange(1, 4)):
            start = rng.randrange(1, 900)
            body = []
            for _ in range(rng.randrange(6, 20)):
                r = rng.random()
                code = f"\t{rng.choice(WORDS)} := {rng.choice(WORDS)}({rng.randrange(100)})"
                if r < 0.3:
                    body.append("+" + code)
                    added += 1
                elif r < 0.45:
                    body.append("-" + code)
                    removed += 1
                else:
                    body.append(" " + code)
            hunks.append(
                f"@@ -{start},{len(body)} +{start},{len(body)} @@ "
                f"func {rng.choice(WORDS).title()}()\n" + "\n".join(body)
            )
        files.append((path, hunks, added, removed))
        out.append(
            f"diff --git a/{path} b/{path}\n"
            f"index {rng.randrange(16**7):07x}..{rng.randrange(16**7):07x} 100644\n"
            f"--- a/{path}\n+++ b/{path}\n" + "\n".join(hunks)
        )
    text = "\n".join(out) + "\n"
    f = rng.choice(files)
    return text, [
        Q("section", f"show the changes to {f[0]}", tuple(h.split("\n")[0] for h in f[1])),
        Q("count", "how many files does this diff change?", len(files)),
        Q("lookup", f"what was added in {files[-1][0]}?", files[-1][1][-1].split("\n")[0]),
    ]


def actions_log(rng: random.Random) -> tuple[str, list[Q]]:
    steps = [
        "Checkout",
        "Setup node",
        "Install deps",
        "Lint",
        "Unit tests",
        "Build image",
        "Publish",
    ]
    lines = []
    errors: list[str] = []
    t = 0
    by_step: Counter[str] = Counter()
    for s in steps:
        lines.append(
            f"2024-06-11T08:{t // 60 % 60:02d}:{t % 60:02d}.{rng.randrange(10**7):07d}Z "
            f"##[group]Run {s}"
        )
        for _ in range(rng.randrange(400, 800)):
            t += rng.randrange(0, 2)
            stamp = f"2024-06-11T08:{t // 60 % 60:02d}:{t % 60:02d}.{rng.randrange(10**7):07d}Z"
            r = rng.random()
            if r < 0.01:
                msg = (
                    f"##[error]{rng.choice(WORDS)}.ts"
                    f"({rng.randrange(1, 500)},{rng.randrange(1, 80)}): "
                    f"TS{rng.randrange(2000, 2999)} {' '.join(rng.sample(WORDS, 3))}"
                )
                errors.append(msg)
                by_step[s] += 1
            elif r < 0.05:
                msg = f"##[warning]deprecated {rng.choice(WORDS)} option"
            else:
                msg = f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.randrange(10**5)} ok"
            lines.append(f"{stamp} {msg}")
        lines.append(f"2024-06-11T08:{t // 60 % 60:02d}:{t % 60:02d}.0000000Z ##[endgroup]")
    lines.append(
        f"2024-06-11T08:{t // 60 % 60:02d}:{t % 60:02d}.9999999Z "
        "##[error]Process completed with exit code 2."
    )
    text = "\n".join(lines) + "\n"
    return text, [
        Q("count", "how many ##[error] annotations are in the run log?", len(errors) + 1),
        Q("last", "the final line of the job log", lines[-1]),
        Q("first", "the first error in the log", errors[0]),
        Q("max", "which step has the most errors?", by_step.most_common(1)[0][0]),
    ]


def html_table(rng: random.Random) -> tuple[str, list[Q]]:
    status = ["Healthy", "Degraded", "Offline"]
    rows = []
    for i in range(2500):
        rows.append(
            (
                f"host-{rng.choice(WORDS)}-{i:04d}",
                f"192.168.{rng.randrange(256)}.{rng.randrange(256)}",
                rng.choices(status, [8, 2, 1])[0],
                rng.choice(["Frankfurt", "Dallas", "Tokyo"]),
                str(rng.randrange(1, 2000)),
            )
        )
    body = "\n".join("    <tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    text = (
        "<!DOCTYPE html>\n<html><head><title>Fleet status</title></head><body>\n"
        '<h1>Fleet status</h1>\n<table class="fleet">\n'
        "  <thead><tr><th>Hostname</th><th>Address</th>"
        "<th>Status</th><th>Datacenter</th><th>Uptime (days)</th></tr></thead>\n  <tbody>\n"
        + body
        + "\n  </tbody>\n</table>\n</body></html>\n"
    )
    r = rng.choice(rows)
    dc = rng.choice(["Frankfurt", "Dallas", "Tokyo"])
    return text, [
        Q("lookup", f"what address does {r[0]} have?", r[1]),
        Q(
            "count",
            f"how many Offline hosts in {dc}?",
            sum(1 for x in rows if x[2] == "Offline" and x[3] == dc),
        ),
        Q("max", "which host has the longest uptime?", max(rows, key=lambda x: int(x[4]))[0]),
    ]


def docker_inspect(rng: random.Random) -> tuple[str, list[Q]]:
    conts: list[dict[str, Any]] = []
    for i in range(500):
        status = rng.choices(["running", "exited", "restarting"], [6, 3, 1])[0]
        code = 0 if status == "running" else rng.choice([0, 1, 137, 143])
        conts.append(
            {
                "Id": f"{rng.randrange(16**64):064x}",
                "Created": f"2024-04-{rng.randrange(1, 29):02d}T0{rng.randrange(10)}:00:00.000Z",
                "Name": f"/{rng.choice(WORDS)}_{rng.choice(WORDS)}_{i}",
                "RestartCount": rng.randrange(5),
                "State": {
                    "Status": status,
                    "Running": status == "running",
                    "ExitCode": code,
                    "OOMKilled": code == 137 and rng.random() < 0.5,
                    "StartedAt": f"2024-04-{rng.randrange(1, 29):02d}T0{rng.randrange(10)}:11:00Z",
                },
                "Config": {
                    "Image": f"{rng.choice(WORDS)}/{rng.choice(WORDS)}:{rng.randrange(1, 5)}",
                    "Env": [
                        f"{w.upper()}_URL=http://{w}:80{k}"
                        for k, w in enumerate(rng.sample(WORDS, 6))
                    ],
                    "Labels": {"com.docker.compose.service": rng.choice(WORDS)},
                },
                "NetworkSettings": {
                    "Networks": {
                        "bridge": {"IPAddress": f"172.17.{rng.randrange(256)}.{rng.randrange(256)}"}
                    }
                },
                "Mounts": [
                    {
                        "Type": "volume",
                        "Source": f"/var/lib/docker/volumes/{w}/_data",
                        "Destination": f"/{w}",
                    }
                    for w in rng.sample(WORDS, 2)
                ],
            }
        )
    text = json.dumps(conts, indent=4)
    c = rng.choice(conts)
    return text, [
        Q("lookup", f"image of container {c['Name'][1:]}", c["Config"]["Image"]),
        Q(
            "count",
            "how many exited containers have ExitCode 137?",
            sum(
                1
                for x in conts
                if x["State"]["Status"] == "exited" and x["State"]["ExitCode"] == 137
            ),
        ),
        Q(
            "count",
            "number of containers that were OOMKilled",
            sum(1 for x in conts if x["State"]["OOMKilled"]),
        ),
    ]


OPS = {
    "kube-pods": kube_pods,
    "junit-xml": junit_xml,
    "sql-table": sql_client_table,
    "tf-plan": terraform_plan,
    "npm-audit": npm_audit,
    "git-log": git_log_stat,
    "diff": unified_diff,
    "gha-log": actions_log,
    "html-table": html_table,
    "dkr-inspect": docker_inspect,
}
