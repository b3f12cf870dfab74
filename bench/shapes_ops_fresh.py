"""The ``ops-fresh`` set of ``bench/shapes.py``: other variants of operations tools'
results, with other field names and seed, written after the guard's answers to the
``ops`` set and never tuned on."""

from __future__ import annotations

import json
import random
from typing import Any

from _shapes import FIRST, WORDS, Q

ZONES = ["zone-a", "zone-b", "zone-c"]


def psql_table(rng: random.Random) -> tuple[str, list[Q]]:
    rows = []
    for i in range(3000):
        rows.append(
            [
                f"ord_{i:05d}",
                rng.choice(["shipped", "pending", "refunded"]),
                rng.choice(ZONES),
                str(rng.randrange(1, 900)),
            ]
        )
    head = ["order_ref", "fulfilment", "zone", "qty"]
    w = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(head)]
    text = (
        " "
        + " | ".join(f"{h:<{x}}" for h, x in zip(head, w, strict=True))
        + "\n"
        + "-+-".join("-" * x for x in w)
        + "--\n"
        + "".join(
            " " + " | ".join(f"{c:<{x}}" for c, x in zip(r, w, strict=True)) + "\n" for r in rows
        )
        + f"({len(rows)} rows)\n"
    )
    r = rng.choice(rows)
    z = rng.choice(ZONES)
    return text, [
        Q("lookup", f"What is the fulfilment status of {r[0]}?", r[1]),
        Q(
            "count",
            f"count refunded orders in {z}",
            sum(1 for x in rows if x[1] == "refunded" and x[2] == z),
        ),
        Q("max", "which order has the largest qty?", max(rows, key=lambda x: int(x[3]))[0]),
    ]


def checkstyle_xml(rng: random.Random) -> tuple[str, list[Q]]:
    files = []
    errs: list[dict[str, Any]] = []
    for f in range(300):
        path = f"src/main/java/{rng.choice(WORDS)}/{rng.choice(WORDS).title()}{f}.java"
        body = []
        for _ in range(rng.randrange(3, 12)):
            e = {
                "file": path,
                "line": rng.randrange(1, 800),
                "severity": rng.choices(["info", "warning", "error"], [3, 5, 1])[0],
                "source": f"checks.{rng.choice(['LineLength', 'MagicNumber', 'JavadocMethod'])}",
            }
            errs.append(e)
            body.append(
                f'    <error line="{e["line"]}" severity="{e["severity"]}" '
                f'message="{rng.choice(WORDS)} violation" source="{e["source"]}"/>'
            )
        files.append(f'  <file name="{path}">\n' + "\n".join(body) + "\n  </file>")
    text = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<checkstyle version="10.12">\n'
        + "\n".join(files)
        + "\n</checkstyle>\n"
    )
    return text, [
        Q(
            "count",
            "How many error-severity findings are there?",
            sum(1 for e in errs if e["severity"] == "error"),
        ),
        Q(
            "count",
            "number of MagicNumber warnings",
            sum(
                1
                for e in errs
                if e["severity"] == "warning" and e["source"] == "checks.MagicNumber"
            ),
        ),
        Q("last", "the last finding in the report", f'line="{errs[-1]["line"]}"'),
    ]


def k8s_deployments(rng: random.Random) -> tuple[str, list[Q]]:
    items: list[dict[str, Any]] = []
    for i in range(700):
        want = rng.randrange(1, 6)
        items.append(
            {
                "metadata": {
                    "name": f"{rng.choice(WORDS)}-api-{i}",
                    "namespace": rng.choice(ZONES),
                },
                "spec": {"replicas": want, "strategy": {"type": "RollingUpdate"}},
                "status": {
                    "readyReplicas": rng.randrange(0, want + 1),
                    "conditions": [
                        {
                            "type": "Available",
                            "status": rng.choice(["True", "False"]),
                            "reason": rng.choice(["MinimumReplicasAvailable", "Unavailable"]),
                        }
                    ],
                },
            }
        )
    text = json.dumps({"kind": "DeploymentList", "items": items}, indent=2)
    d = rng.choice(items)
    z = rng.choice(ZONES)
    return text, [
        Q(
            "lookup",
            f"replicas wanted by deployment {d['metadata']['name']}",
            str(d["spec"]["replicas"]),
        ),
        Q(
            "count",
            f"how many deployments in namespace {z} have 0 readyReplicas?",
            sum(
                1
                for x in items
                if x["metadata"]["namespace"] == z and x["status"]["readyReplicas"] == 0
            ),
        ),
    ]


def ci_log(rng: random.Random) -> tuple[str, list[Q]]:
    jobs = ["build", "test-unit", "test-e2e", "deploy"]
    lines: list[str] = []
    fails = 0
    for j in jobs:
        lines.append(f"section_start:{1700000000 + len(lines)}:{j}\r\x1b[0K{j}")
        for _ in range(rng.randrange(500, 900)):
            if rng.random() < 0.008:
                fails += 1
                lines.append(f"FAILED {rng.choice(WORDS)}_spec.rb:{rng.randrange(1, 300)}")
            else:
                lines.append(f"{rng.choice(FIRST).lower()} {rng.choice(WORDS)} done")
        lines.append(f"section_end:{1700000000 + len(lines)}:{j}\r\x1b[0K")
    lines.append("ERROR: Job failed: exit code 1")
    text = "\n".join(lines) + "\n"
    return text, [
        Q("count", "how many FAILED lines?", fails),
        Q("last", "how did the job end?", "ERROR: Job failed: exit code 1"),
    ]


def html_report(rng: random.Random) -> tuple[str, list[Q]]:
    rows = []
    for i in range(1800):
        rows.append(
            (
                f"pkg-{rng.choice(WORDS)}-{i}",
                f"{rng.randrange(1, 5)}.{rng.randrange(20)}.{rng.randrange(9)}",
                rng.choice(["MIT", "Apache-2.0", "GPL-3.0", "BSD-3-Clause"]),
                rng.choice(["yes", "no"]),
            )
        )
    trs = "".join(
        f'<tr class="r{i % 2}">\n<td><a href="/p/{r[0]}">{r[0]}</a></td><td>{r[1]}</td>'
        f"<td>{r[2]}</td><td>{r[3]}</td>\n</tr>\n"
        for i, r in enumerate(rows)
    )
    text = (
        "<html>\n<head><style>td{padding:2px}</style></head>\n<body>\n<h2>Licenses</h2>\n"
        "<table>\n<tr><th>Package</th><th>Version</th><th>License</th><th>Approved</th></tr>\n"
        + trs
        + "</table>\n</body>\n</html>\n"
    )
    r = rng.choice(rows)
    return text, [
        Q("lookup", f"license of {r[0]}", r[2]),
        Q(
            "count",
            "how many GPL-3.0 packages are not approved?",
            sum(1 for x in rows if x[2] == "GPL-3.0" and x[3] == "no"),
        ),
    ]


OPS_FRESH = {
    "psql-table": psql_table,
    "checkstyle": checkstyle_xml,
    "k8s-deploys": k8s_deployments,
    "gitlab-log": ci_log,
    "html-report": html_report,
}
