"""The ``probe3`` set of ``bench/shapes.py``: ten more results a coding or ops agent gets that
the other sets lack (``kubectl top pods -A``, ``top -b -n1``, ``lsof -i -P -n``, ``gh run
list --json``, ``npm ls --all --json``, a GitHub Actions workflow, ``nginx -T``, a CSV whose
header follows comment lines, a GraphQL page of edges, ``docker images``), with their own
field names and wording. Written before the guard was changed for it, so its first run is a
measure of unseen data."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from _shapes import FIRST, LAST, WORDS, Q, unique


def kubectl_top(rng: random.Random) -> tuple[str, list[Q]]:
    names = unique(
        rng,
        450,
        lambda: (
            f"{rng.choice(WORDS)}-{rng.choice(['api', 'worker', 'web', 'db'])}-"
            f"{rng.randrange(16**10):010x}-{rng.randrange(36**5):05x}"
        ),
    )
    rows = []
    cpus = rng.sample(range(1, 3000), len(names))
    mems = rng.sample(range(8, 4000), len(names))
    for name, cpu, mem in zip(names, cpus, mems, strict=True):
        ns = rng.choice(["default", "payments", "monitoring", "kube-system", "search"])
        rows.append((ns, name, f"{cpu}m", f"{mem}Mi"))
    head = ("NAMESPACE", "NAME", "CPU(cores)", "MEMORY(bytes)")
    w = [max(len(r[c]) for r in [head, *rows]) + 3 for c in range(3)]
    text = "".join(f"{r[0]:<{w[0]}}{r[1]:<{w[1]}}{r[2]:<{w[2]}}{r[3]}\n" for r in [head, *rows])
    r = rng.choice(rows)
    top = max(rows, key=lambda x: int(x[2][:-1]))
    return text, [
        Q("lookup", f"how much memory is {r[1]} using?", r[3]),
        Q("top", "which pod uses the most CPU?", top[1]),
        Q(
            "count",
            "how many pods are in the monitoring namespace?",
            sum(x[0] == "monitoring" for x in rows),
        ),
        Q("lookup", f"what is the CPU usage of {rows[-1][1]}?", rows[-1][2]),
    ]


_CMDS = ["postgres", "nginx", "python3", "node", "java", "redis-server", "sshd", "kworker/2:1"]


def top_batch(rng: random.Random) -> tuple[str, list[Q]]:
    pids = rng.sample(range(2, 99999), 520)
    rows: list[list[Any]] = []
    for pid in pids:
        user = rng.choice(["root", "postgres", "www-data", "app", "redis"])
        state = rng.choices(["S", "R", "I", "D", "Z"], [40, 2, 6, 1, 1])[0]
        virt = rng.randrange(10**4, 9 * 10**6)
        res = rng.randrange(10**3, min(virt, 2 * 10**6))
        rows.append(
            [pid, user, 20, 0, virt, res, rng.randrange(100, res), state,
             round(rng.uniform(0, 40), 1), round(res / 65_000_000 * 100, 1),
             f"{rng.randrange(200)}:{rng.randrange(60):02d}.{rng.randrange(100):02d}",
             rng.choice(_CMDS)]
        )  # fmt: skip
    hog = rng.randrange(len(rows))
    rows[hog][8] = 97.3
    rows[hog][11] = "ffmpeg"
    rows.sort(key=lambda x: -x[8])
    states = Counter(r[7] for r in rows)
    head = (
        "top - 10:14:07 up 12 days,  3:04,  2 users,  load average: 1.84, 1.52, 1.31\n"
        f"Tasks: {len(rows)} total, {states['R']:>3} running, {states['S'] + states['I']:>3} "
        f"sleeping,   0 stopped, {states['Z']:>3} zombie\n"
        "%Cpu(s):  6.3 us,  1.9 sy,  0.0 ni, 91.2 id,  0.4 wa,  0.0 hi,  0.2 si,  0.0 st\n"
        "MiB Mem :  63482.2 total,   2210.9 free,  21133.0 used,  40138.3 buff/cache\n"
        "MiB Swap:   2048.0 total,   2048.0 free,      0.0 used.  41567.5 avail Mem\n\n"
        "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
    )
    body = "".join(
        f"{r[0]:>7} {r[1]:<9}{r[2]:>3} {r[3]:>3} {r[4]:>7} {r[5]:>6} {r[6]:>6} {r[7]} "
        f"{r[8]:>5} {r[9]:>5} {r[10]:>9} {r[11]}\n"
        for r in rows
    )
    r = rng.choice(rows)
    return head + body, [
        Q("count", "how many processes does www-data run?", sum(x[1] == "www-data" for x in rows)),
        Q("lookup", f"what command is PID {r[0]}?", r[11]),
        Q("top", "which command is using the most CPU?", "ffmpeg"),
        Q("count", "how many processes are in D state?", states["D"]),
    ]


def lsof_inet(rng: random.Random) -> tuple[str, list[Q]]:
    procs = [(c, rng.randrange(300, 60000), u) for c, u in [
        ("nginx", "www-data"), ("java", "app"), ("postgres", "postgres"), ("node", "app"),
        ("sshd", "root"), ("envoy", "envoy"), ("redis-ser", "redis"),
    ]]  # fmt: skip
    ports = rng.sample(range(1024, 9999), len(procs))
    rows = []
    for (cmd, pid, user), port in zip(procs, ports, strict=True):
        rows.append((cmd, pid, user, f"{rng.randrange(3, 40)}u", "IPv4", "TCP",
                     f"*:{port} (LISTEN)"))  # fmt: skip
    used: set[str] = set()
    while len(rows) < 900:
        cmd, pid, user = rng.choice(procs)
        peer = f"10.0.{rng.randrange(8)}.{rng.randrange(2, 250)}:{rng.randrange(30000, 61000)}"
        if peer in used:
            continue
        used.add(peer)
        state = rng.choices(["ESTABLISHED", "CLOSE_WAIT", "TIME_WAIT", "SYN_SENT"], [12, 2, 3, 1])[
            0
        ]
        port = ports[[p[0] for p in procs].index(cmd)]
        rows.append((cmd, pid, user, f"{rng.randrange(3, 900)}u", rng.choice(["IPv4", "IPv6"]),
                     "TCP", f"10.0.9.4:{port}->{peer} ({state})"))  # fmt: skip
    head = "COMMAND     PID     USER   FD   TYPE  DEVICE SIZE/OFF NODE NAME\n"
    text = head + "".join(
        f"{c:<9} {p:>5} {u:>8} {fd:>5} {t:>6} {rng.randrange(10**5, 10**7):>7}      0t0 "
        f"{n:<4} {name}\n"
        for c, p, u, fd, t, n, name in rows
    )
    lis = rng.choice(rows[: len(procs)])
    conn = rng.choice(rows[len(procs) :])
    peer = conn[6].split("->")[1].split(" ")[0]
    return text, [
        Q("lookup", f"which process is listening on port {lis[6][2:].split(' ')[0]}?", lis[0]),
        Q(
            "count",
            "how many connections are in CLOSE_WAIT?",
            sum("CLOSE_WAIT" in r[6] for r in rows),
        ),
        Q("lookup", f"what's the PID of the process connected to {peer}?", str(conn[1])),
        Q(
            "count",
            "how many ESTABLISHED connections does java have?",
            sum(r[0] == "java" and "(ESTABLISHED)" in r[6] for r in rows),
        ),
    ]


def gh_runs(rng: random.Random) -> tuple[str, list[Q]]:
    flows = ["CI", "Release", "Nightly e2e", "CodeQL", "Docs preview"]
    branches = ["main", "dependabot/npm/vite-5.2.1", *[f"feat/{w}" for w in WORDS[:8]]]
    ids = rng.sample(range(8_100_000_000, 8_999_999_999), 360)
    runs: list[dict[str, Any]] = []
    for i, rid in enumerate(ids):
        status = "completed" if i > 4 else rng.choice(["in_progress", "queued"])
        concl = (
            rng.choices(["success", "failure", "cancelled", "skipped"], [14, 4, 1, 1])[0]
            if status == "completed"
            else ""
        )
        flow = rng.choice(flows)
        runs.append(
            {
                "conclusion": concl,
                "createdAt": f"2024-06-{30 - i // 13:02d}T{23 - (i % 13):02d}:"
                f"{rng.randrange(60):02d}:{rng.randrange(60):02d}Z",
                "databaseId": rid,
                "displayTitle": f"{rng.choice(['fix', 'feat', 'chore'])}: {rng.choice(WORDS)} "
                f"{rng.choice(WORDS)}",
                "event": rng.choice(["push", "pull_request", "schedule", "workflow_dispatch"]),
                "headBranch": rng.choice(branches),
                "name": flow,
                "status": status,
                "url": f"https://github.com/acme/shop/actions/runs/{rid}",
                "workflowName": flow,
            }
        )
    text = json.dumps(runs, indent=2)
    r = rng.choice([x for x in runs if x["conclusion"] in ("cancelled", "skipped")])
    newest = max(runs, key=lambda x: x["createdAt"])
    return text, [
        Q("lookup", f"what was the conclusion of run {r['databaseId']}?", r["conclusion"]),
        Q(
            "count",
            "how many runs failed on main?",
            sum(x["conclusion"] == "failure" and x["headBranch"] == "main" for x in runs),
        ),
        Q("top", "what is the id of the most recent run?", str(newest["databaseId"])),
        Q(
            "distinct",
            "which workflows have runs?",
            tuple(sorted({x["workflowName"] for x in runs})),
        ),
    ]


def npm_ls(rng: random.Random) -> tuple[str, list[Q]]:
    def ver() -> str:
        return f"{rng.randrange(0, 12)}.{rng.randrange(30)}.{rng.randrange(20)}"

    def pkg(depth: int, names: list[str]) -> dict[str, Any]:
        d: dict[str, Any] = {
            "version": ver(),
            "resolved": "",
            "overridden": False,
        }
        if depth < 2 and rng.random() < 0.7:
            kids = {}
            for _ in range(rng.randrange(1, 6)):
                n = f"{rng.choice(WORDS)}-{rng.choice(['utils', 'core', 'parser', 'fs'])}"
                kids[n] = pkg(depth + 1, names)
                names.append(n)
            d["dependencies"] = kids
        return d

    top: dict[str, Any] = {}
    nested: list[str] = []
    while len(top) < 70:
        n = f"@{rng.choice(['acme', 'vue', 'babel'])}/{rng.choice(WORDS)}-{rng.randrange(90)}"
        if n in top:
            continue
        top[n] = pkg(0, nested)
        top[n]["resolved"] = (
            f"https://registry.npmjs.org/{n}/-/{n.split('/')[1]}-{top[n]['version']}.tgz"
        )
    doc = {"version": "3.4.0", "name": "shop-web", "dependencies": top}
    text = json.dumps(doc, indent=2)
    a = rng.choice(list(top))
    parent = rng.choice([k for k, v in top.items() if "dependencies" in v])
    child = rng.choice(list(top[parent]["dependencies"]))
    return text, [
        Q("lookup", f"which version of {a} is installed?", top[a]["version"]),
        Q("count", "how many top-level dependencies does shop-web have?", len(top)),
        Q(
            "lookup",
            f"what version of {child} does {parent} depend on?",
            top[parent]["dependencies"][child]["version"],
        ),
        Q(
            "count",
            "how many top-level packages are in the @vue scope?",
            sum(k.startswith("@vue/") for k in top),
        ),
    ]


def gha_workflow(rng: random.Random) -> tuple[str, list[Q]]:
    runners = ["ubuntu-22.04", "ubuntu-24.04", "macos-14", "windows-2022", "self-hosted-gpu"]
    jobs: list[tuple[str, str, int, str, str | None]] = []
    timeouts = rng.sample(range(5, 200), 90)
    for i in range(90):
        name = f"{rng.choice(['test', 'build', 'lint', 'e2e'])}-{WORDS[i % 20]}-{i}"
        jobs.append(
            (name, rng.choice(runners), timeouts[i], rng.choice(["3.10", "3.11", "3.12"]),
             jobs[rng.randrange(len(jobs))][0] if jobs and rng.random() < 0.6 else None)
        )  # fmt: skip
    out = [
        "name: CI",
        "on:",
        "  push:",
        "    branches: [main]",
        "  pull_request:",
        "    paths-ignore: ['docs/**']",
        "concurrency:",
        "  group: ci-${{ github.ref }}",
        "  cancel-in-progress: true",
        "env:",
        "  FORCE_COLOR: '1'",
        "jobs:",
    ]
    for name, runner, tmo, py, need in jobs:
        out += [f"  {name}:", f"    name: {name.replace('-', ' ')}", f"    runs-on: {runner}"]
        out += [f"    timeout-minutes: {tmo}"]
        if need:
            out.append(f"    needs: [{need}]")
        out += [
            "    steps:",
            "      - uses: actions/checkout@v4",
            "      - uses: actions/setup-python@v5",
            "        with:",
            f"          python-version: '{py}'",
            "      - name: Install",
            "        run: pip install -e '.[dev]'",
            f"      - name: Run {name.split('-')[0]}",
            f"        run: make {name.split('-')[0]} PKG={name.split('-')[1]}",
        ]
    text = "\n".join(out) + "\n"
    j = rng.choice(jobs)
    j2 = rng.choice([x for x in jobs if x[4]])
    return text, [
        Q("lookup", f"which runner does the {j[0]} job run on?", j[1]),
        Q("count", "how many jobs run on macos-14?", sum(x[1] == "macos-14" for x in jobs)),
        Q("top", "which job has the longest timeout?", max(jobs, key=lambda x: x[2])[0]),
        Q("lookup", f"which job does {j2[0]} need?", str(j2[4])),
    ]


def nginx_dump(rng: random.Random) -> tuple[str, list[Q]]:
    out = [
        "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok",
        "nginx: configuration file /etc/nginx/nginx.conf test is successful",
        "# configuration file /etc/nginx/nginx.conf:",
        "user www-data;",
        "worker_processes auto;",
        "events {",
        "\tworker_connections 1024;",
        "}",
        "http {",
        "\tsendfile on;",
        "\tinclude /etc/nginx/conf.d/*.conf;",
        "\tinclude /etc/nginx/sites-enabled/*;",
        "}",
        "",
    ]
    bodies = rng.sample(range(1, 1000), 110)
    hosts = unique(rng, 110, lambda: f"{rng.choice(WORDS)}-{rng.randrange(100)}.shop.example.com")
    sites: list[tuple[str, bool, str, str, str]] = []
    for h in hosts:
        tls = rng.random() < 0.6
        up = f"{rng.choice(WORDS)}_backend"
        body = f"{bodies[len(sites)]}m"
        fname = f"/etc/nginx/sites-enabled/{h.split('.')[0]}.conf"
        sites.append((h, tls, up, body, fname))
        out += [f"# configuration file {fname}:", "server {"]
        out.append("\tlisten 443 ssl http2;" if tls else "\tlisten 80;")
        out += [f"\tserver_name {h};", f"\tclient_max_body_size {body};"]
        if tls:
            out += [
                f"\tssl_certificate /etc/letsencrypt/live/{h}/fullchain.pem;",
                f"\tssl_certificate_key /etc/letsencrypt/live/{h}/privkey.pem;",
            ]
        out += [
            "\tlocation / {",
            f"\t\tproxy_pass http://{up};",
            "\t\tproxy_set_header Host $host;",
            "\t\tproxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
            "\t}",
            "\tlocation /healthz {",
            "\t\treturn 200 'ok';",
            "\t}",
            "}",
            "",
        ]
    a, b = rng.sample(sites, 2)
    return "\n".join(out), [
        Q("lookup", f"where does {a[0]} proxy_pass to?", f"http://{a[2]}"),
        Q("count", "how many server blocks listen on 443?", sum(s[1] for s in sites)),
        Q(
            "lookup",
            f"what is the client_max_body_size for {b[0]}?",
            f"client_max_body_size {b[3]};",
        ),
        Q("lookup", f"which file defines server_name {b[0]}?", b[4]),
    ]


def csv_after_comments(rng: random.Random) -> tuple[str, list[Q]]:
    hosts = unique(rng, 1400, lambda: f"{rng.choice(WORDS)}-{rng.randrange(1000):03d}.prod")
    cpus = rng.sample(range(0, 10000), len(hosts))
    mems = iter(rng.sample(range(256, 65536), len(hosts)))
    rows = []
    for h, c in zip(hosts, cpus, strict=True):
        rows.append(
            (h, rng.choice(["eu-west", "us-east", "ap-south"]), f"{c / 100:.2f}",
             str(next(mems)), rng.choices(["ok", "degraded", "down"], [20, 3, 1])[0])
        )  # fmt: skip
    text = (
        "# host inventory export (fleet-report v2.3)\n"
        "# generated 2024-06-30T08:00:00Z; values are 5-minute averages\n"
        "hostname,region,cpu_pct,mem_mb,health\n" + "".join(",".join(r) + "\n" for r in rows)
    )
    r = rng.choice(rows)
    return text, [
        Q("lookup", f"what is mem_mb for {r[0]}?", r[3]),
        Q(
            "count",
            "how many degraded hosts are in us-east?",
            sum(x[1] == "us-east" and x[4] == "degraded" for x in rows),
        ),
        Q("top", "which host has the highest cpu_pct?", max(rows, key=lambda x: float(x[2]))[0]),
        Q("last", "what is the last host in the export?", rows[-1][0]),
    ]


def graphql_page(rng: random.Random) -> tuple[str, list[Q]]:
    edges: list[dict[str, Any]] = []
    numbers = rng.sample(range(100, 9000), 250)
    comments = rng.sample(range(0, 400), 250)
    for n, c in zip(numbers, comments, strict=True):
        cursor = f"Y3Vyc29yOnYyOpK5MjAyNC0wNi0{rng.randrange(16**8):08x}"
        edges.append(
            {
                "cursor": cursor,
                "node": {
                    "number": n,
                    "title": f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} "
                    f"{rng.choice(['crashes', 'is slow', 'leaks memory', 'times out'])} #{n}",
                    "state": rng.choices(["OPEN", "CLOSED"], [2, 3])[0],
                    "author": {"login": f"{rng.choice(FIRST).lower()}-{rng.choice(LAST).lower()}"},
                    "createdAt": f"2024-0{rng.randrange(1, 7)}-{rng.randrange(1, 29):02d}T10:00Z",
                    "labels": {
                        "nodes": [
                            {"name": x} for x in rng.sample(["bug", "perf", "ui", "infra"], 2)
                        ]
                    },
                    "comments": {"totalCount": c},
                },
            }
        )
    doc = {
        "data": {
            "repository": {
                "issues": {
                    "totalCount": 4821,
                    "pageInfo": {"hasNextPage": True, "endCursor": edges[-1]["cursor"]},
                    "edges": edges,
                }
            }
        }
    }
    text = json.dumps(doc, indent=2)
    nodes = [e["node"] for e in edges]
    a, b = rng.sample(nodes, 2)
    return text, [
        Q("lookup", f"what is the title of issue {a['number']}?", a["title"]),
        Q(
            "count",
            "how many of these issues are closed?",
            sum(x["state"] == "CLOSED" for x in nodes),
        ),
        Q(
            "top",
            "which issue has the most comments?",
            max(nodes, key=lambda x: x["comments"]["totalCount"])["title"],
        ),
        Q("lookup", f"who opened issue {b['number']}?", b["author"]["login"]),
    ]


def docker_images(rng: random.Random) -> tuple[str, list[Q]]:
    rows = []
    sizes = rng.sample(range(5, 3000), 420)
    seen: set[tuple[str, str]] = set()
    for i in range(420):
        if rng.random() < 0.12:
            repo, tag = "<none>", "<none>"
        else:
            repo = f"ghcr.io/acme/{rng.choice(WORDS)}-{rng.choice(['api', 'worker', 'web'])}"
            tag = f"{rng.randrange(4)}.{rng.randrange(20)}.{rng.randrange(10)}"
            if (repo, tag) in seen:
                continue
            seen.add((repo, tag))
        ago = rng.choice(
            [f"{rng.randrange(2, 59)} minutes ago", f"{rng.randrange(2, 23)} hours ago",
             f"{rng.randrange(2, 13)} days ago", f"{rng.randrange(2, 5)} weeks ago",
             f"{rng.randrange(2, 11)} months ago"]
        )  # fmt: skip
        mb = sizes[i]
        size = f"{mb / 1000:.2f}GB" if mb >= 1000 else f"{mb}MB"
        rows.append((repo, tag, f"{rng.randrange(16**12):012x}", ago, size, mb))
    head = f"{'REPOSITORY':<34}{'TAG':<11}{'IMAGE ID':<15}{'CREATED':<16}SIZE\n"
    text = head + "".join(f"{r[0]:<34}{r[1]:<11}{r[2]:<15}{r[3]:<16}{r[4]}\n" for r in rows)
    named = [r for r in rows if r[0] != "<none>"]
    a, b = rng.sample(named, 2)
    big = max(rows, key=lambda x: x[5])
    return text, [
        Q("lookup", f"how big is {a[0]}:{a[1]}?", a[4]),
        Q(
            "count",
            "how many dangling <none> images are there?",
            sum(r[0] == "<none>" for r in rows),
        ),
        Q("top", "which image is the largest?", big[2]),
        Q("lookup", f"what is the image ID of {b[0]}:{b[1]}?", b[2]),
    ]


PROBE3 = {
    "kubectl-top": kubectl_top,
    "top-batch": top_batch,
    "lsof": lsof_inet,
    "gh-runs": gh_runs,
    "npm-ls": npm_ls,
    "gha-yaml": gha_workflow,
    "nginx-T": nginx_dump,
    "csv-comment": csv_after_comments,
    "graphql": graphql_page,
    "docker-img": docker_images,
}
