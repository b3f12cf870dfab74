"""The ``probe2`` set of ``bench/shapes.py``: ten more results a coding or ops agent gets that
the other sets lack (``df -h``, ``ss -tlnp``, ``systemctl list-units``, ``mypy`` errors,
``eslint --format json``, ``aws ec2 describe-instances``, ``helm list``, ``git status
--porcelain``, ``du -sh *``, ``git blame``), with their own field names and wording. Written
before the guard was changed for it, so its first run is a measure of unseen data."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from _shapes import FIRST, LAST, WORDS, Q


def _human(n: int) -> str:
    """``n`` bytes the way ``df -h`` and ``du -h`` print them."""
    x = float(n)
    for unit in ("K", "M", "G", "T"):
        if x < 1024 and unit == "K":
            return str(n)
        x /= 1024
        if x < 1024 or unit == "T":
            return f"{x:.1f}{unit}" if x < 10 else f"{x:.0f}{unit}"
    raise AssertionError


def df_h(rng: random.Random) -> tuple[str, list[Q]]:
    rows = []
    used_pcts = rng.sample(range(1, 99), 60)
    for i in range(420):
        kind = rng.choices(["overlay", "tmpfs", "shm", "/dev/nvme"], [5, 4, 1, 2])[0]
        size = rng.randrange(10**6, 2 * 10**12)
        pct = used_pcts[i % 60] if i < 60 else rng.randrange(0, 99)
        if kind == "overlay":
            fs, mount = "overlay", f"/var/lib/docker/overlay2/{rng.randrange(16**12):012x}/merged"
        elif kind == "tmpfs":
            fs, mount = "tmpfs", f"/run/user/{1000 + i}"
        elif kind == "shm":
            fs, mount = "shm", f"/var/lib/docker/containers/{rng.randrange(16**12):012x}/mounts/shm"
        else:
            fs, mount = f"/dev/nvme{i % 4}n1p{i}", f"/data{i}"
        used = size * pct // 100
        rows.append((fs, _human(size), _human(used), _human(size - used), f"{pct}%", mount))
    rows[rng.randrange(len(rows))] = (
        "/dev/nvme0n1p1", "1.8T", "1.8T", "12G", "100%", "/var/lib/kubelet",
    )  # fmt: skip
    head = ("Filesystem", "Size", "Used", "Avail", "Use%", "Mounted on")
    w = max(len(r[0]) for r in rows)
    text = "".join(
        f"{r[0]:<{w}} {r[1]:>5} {r[2]:>5} {r[3]:>5} {r[4]:>4} {r[5]}\n" for r in [head, *rows]
    )
    disk = rng.choice([r for r in rows if r[0].startswith("/dev/") and r[5] != "/var/lib/kubelet"])
    run = rng.choice([r for r in rows if r[0] == "tmpfs"])
    return text, [
        Q("count", "how many tmpfs mounts are there?", sum(r[0] == "tmpfs" for r in rows)),
        Q("lookup", f"which device is mounted at {disk[5]}?", disk[0]),
        Q("max", "which filesystem is the fullest?", "/var/lib/kubelet"),
        Q("lookup", f"how much space is left on {run[5]}?", run[3]),
    ]


_PROCS = ["nginx", "postgres", "redis-server", "java", "node", "sshd", "envoy", "containerd"]


def ss_tlnp(rng: random.Random) -> tuple[str, list[Q]]:
    rows: list[tuple[str, int, int, str, str, int, int]] = []
    ports = rng.sample(range(1024, 65000), 500)
    for port in ports:
        proc = rng.choice(_PROCS)
        addr = rng.choice(["0.0.0.0", "127.0.0.1", "[::]", "10.0.3.17"])
        pid = rng.randrange(300, 60000)
        rows.append(
            (
                "LISTEN",
                0,
                rng.choice([128, 511, 4096]),
                f"{addr}:{port}",
                proc,
                pid,
                rng.randrange(3, 90),
            )
        )
    head = (
        f"{'State':<6} {'Recv-Q':>6} {'Send-Q':>6} {'Local Address:Port':<22} "
        f"{'Peer Address:Port':<18}Process\n"
    )
    text = head + "".join(
        f"{s:<6} {rq:>6} {sq:>6} {la:<22} {'0.0.0.0:*' if not la.startswith('[') else '[::]:*':<18}"
        f'users:(("{p}",pid={pid},fd={fd}))\n'
        for s, rq, sq, la, p, pid, fd in rows
    )
    r, r2 = rng.sample(rows, 2)
    proc = rng.choice(_PROCS)
    return text, [
        Q("lookup", f"which process is listening on port {r[3].rsplit(':', 1)[1]}?", r[4]),
        Q("count", f"how many ports does {proc} listen on?", sum(x[4] == proc for x in rows)),
        Q(
            "count",
            "how many listeners are bound to 127.0.0.1 only?",
            sum(x[3].startswith("127.0.0.1:") for x in rows),
        ),
        Q("lookup", f"what's the pid of the listener on {r2[3]}?", f"pid={r2[5]}"),
    ]


def systemctl_units(rng: random.Random) -> tuple[str, list[Q]]:
    rows: list[tuple[str, str, str, str, str]] = []
    names: set[str] = set()
    while len(rows) < 380:
        name = f"{rng.choice(WORDS)}-{rng.choice(['agent', 'sync', 'worker', 'exporter', 'cron'])}"
        name += f"@{rng.randrange(10)}.service" if rng.random() < 0.3 else ".service"
        if name in names:
            continue
        names.add(name)
        state = rng.choices(
            [
                ("active", "running"),
                ("active", "exited"),
                ("inactive", "dead"),
                ("failed", "failed"),
            ],
            [10, 3, 4, 1],
        )[0]
        load = "not-found" if state[0] == "inactive" and rng.random() < 0.2 else "loaded"
        kind = rng.choice(["Agent", "Sync Daemon", "Worker Pool", "Metrics Exporter"])
        desc = f"{rng.choice(WORDS).title()} {kind}"
        rows.append((name, load, state[0], state[1], desc))
    w = max(len(r[0]) for r in rows) + 2
    head = f"  {'UNIT':<{w}}{'LOAD':<10}{'ACTIVE':<9}{'SUB':<8}DESCRIPTION\n"
    body = "".join(
        f"{'●' if a == 'failed' else ' '} {u:<{w}}{lo:<10}{a:<9}{s:<8}{d}\n"
        for u, lo, a, s, d in rows
    )
    foot = (
        "\nLOAD   = Reflects whether the unit definition was properly loaded.\n"
        "ACTIVE = The high-level unit activation state, i.e. generalization of SUB.\n"
        "SUB    = The low-level unit activation state, values depend on unit type.\n"
        f"{len(rows)} loaded units listed.\n"
    )
    u = rng.choice(rows)
    return head + body + foot, [
        Q("count", "how many units are in the failed state?", sum(r[2] == "failed" for r in rows)),
        Q("lookup", f"what is {u[0]}'s description?", u[4]),
        Q("count", "how many services have exited?", sum(r[3] == "exited" for r in rows)),
        Q("count", "how many units are not-found?", sum(r[1] == "not-found" for r in rows)),
    ]


_MYPY = [
    ("arg-type", 'Argument 1 to "{f}" has incompatible type "str"; expected "int"'),
    (
        "assignment",
        'Incompatible types in assignment (expression has type "None", variable has type "{W}")',
    ),
    ("attr-defined", 'Module "{m}" has no attribute "{f}"'),
    ("return-value", 'Incompatible return value type (got "list[{W}]", expected "{W}")'),
    ("union-attr", 'Item "None" of "{W} | None" has no attribute "{f}"'),
]


def mypy_errors(rng: random.Random) -> tuple[str, list[Q]]:
    files = [f"src/shop/{a}/{b}.py" for a in WORDS[:6] for b in WORDS[6:12]]
    errs = []
    lines = []
    weights = [rng.randrange(1, 6) for _ in files]
    heavy = rng.randrange(len(files))
    weights[heavy] = 30
    for _ in range(900):
        path = rng.choices(files, weights)[0]
        line = rng.randrange(1, 800)
        code, msg = rng.choice(_MYPY)
        w = rng.choice(WORDS)
        text = msg.format(f=f"{w}_total", W=w.title(), m=f"shop.{rng.choice(WORDS)}")
        errs.append((path, line, code, text))
        lines.append(f"{path}:{line}: error: {text}  [{code}]")
        if rng.random() < 0.2:
            lines.append(
                f"{path}:{line}: note: See https://mypy.rtfd.io/en/stable/_refs.html#code-{code}"
            )
    nfiles = len({e[0] for e in errs})
    lines.append(f"Found {len(errs)} errors in {nfiles} files (checked 412 source files)")
    per = Counter(e[0] for e in errs)
    spots = Counter((e[0], e[1]) for e in errs)
    e = rng.choice([x for x in errs if spots[(x[0], x[1])] == 1])
    f = rng.choice(files)
    return "\n".join(lines) + "\n", [
        Q(
            "count",
            "how many arg-type errors did mypy report?",
            sum(x[2] == "arg-type" for x in errs),
        ),
        Q("top", "which file has the most type errors?", per.most_common(1)[0][0]),
        Q("lookup", f"what is the error at {e[0]}:{e[1]}?", e[3]),
        Q("count", f"how many errors are in {f}?", per[f]),
    ]


_RULES = [
    ("no-unused-vars", "'{w}' is defined but never used.", 2),
    ("@typescript-eslint/no-explicit-any", "Unexpected any. Specify a different type.", 1),
    ("eqeqeq", "Expected '===' and instead saw '=='.", 2),
    ("react-hooks/exhaustive-deps", "React Hook useEffect has a missing dependency: '{w}'.", 1),
    ("no-console", "Unexpected console statement.", 1),
]


def eslint_json(rng: random.Random) -> tuple[str, list[Q]]:
    report: list[dict[str, Any]] = []
    for a in WORDS:
        for b in ("index", "hooks", "api", "view"):
            msgs = []
            for _ in range(rng.choice([0, 0, 1, 2, 3, 5, 8])):
                rule, text, sev = rng.choice(_RULES)
                msgs.append(
                    {
                        "ruleId": rule,
                        "severity": sev,
                        "message": text.format(w=rng.choice(WORDS)),
                        "line": rng.randrange(1, 400),
                        "column": rng.randrange(1, 80),
                        "nodeType": rng.choice(["Identifier", "CallExpression", "TSAnyKeyword"]),
                    }
                )
            report.append(
                {
                    "filePath": f"/home/ci/work/web/src/{a}/{b}.tsx",
                    "messages": msgs,
                    "suppressedMessages": [],
                    "errorCount": sum(m["severity"] == 2 for m in msgs),
                    "fatalErrorCount": 0,
                    "warningCount": sum(m["severity"] == 1 for m in msgs),
                    "fixableErrorCount": 0,
                    "fixableWarningCount": 0,
                    "usedDeprecatedRules": [],
                }
            )
    worst = rng.choice(report)
    for k in range(9):
        worst["messages"].append(
            {"ruleId": "eqeqeq", "severity": 2, "message": "Expected '===' and instead saw '=='.",
             "line": 10 + k, "column": 7, "nodeType": "BinaryExpression"}
        )  # fmt: skip
    worst["errorCount"] += 9
    text = json.dumps(report, indent=2)
    msgs = [m for f in report for m in f["messages"]]
    clean = sum(not f["messages"] for f in report)
    return text, [
        Q(
            "count",
            "how many no-unused-vars problems are there?",
            sum(m["ruleId"] == "no-unused-vars" for m in msgs),
        ),
        Q("sum", "what is the total warningCount?", str(sum(f["warningCount"] for f in report))),
        Q("top", "which file has the highest errorCount?", worst["filePath"]),
        Q("count", "how many files have no messages?", clean),
    ]


def ec2_instances(rng: random.Random) -> tuple[str, list[Q]]:
    reservations = []
    insts: list[dict[str, Any]] = []
    k = 0
    for _r in range(120):
        group = []
        for _i in range(rng.randrange(1, 4)):
            k += 1
            state = rng.choices(["running", "stopped", "terminated", "pending"], [12, 4, 2, 1])[0]
            inst = {
                "AmiLaunchIndex": 0,
                "ImageId": f"ami-{rng.randrange(16**17):017x}",
                "InstanceId": f"i-{rng.randrange(16**17):017x}",
                "InstanceType": rng.choice(
                    ["t3.micro", "t3.large", "m5.large", "c6g.xlarge", "r5.2xlarge"]
                ),
                "LaunchTime": f"2024-0{rng.randrange(1, 10)}-1{rng.randrange(10)}"
                f"T0{rng.randrange(10)}:12:44+00:00",
                "Placement": {
                    "AvailabilityZone": rng.choice(["eu-west-1a", "eu-west-1b", "eu-west-1c"]),
                    "Tenancy": "default",
                },
                "PrivateIpAddress": f"10.20.{rng.randrange(256)}.{rng.randrange(1, 255)}",
                "State": {
                    "Code": {"running": 16, "stopped": 80, "terminated": 48, "pending": 0}[state],
                    "Name": state,
                },
                "SubnetId": f"subnet-{rng.randrange(16**8):08x}",
                "VpcId": "vpc-0a1b2c3d",
                "Tags": [
                    {"Key": "Name", "Value": f"{rng.choice(WORDS)}-node-{k}"},
                    {"Key": "team", "Value": rng.choice(["payments", "search", "infra"])},
                ],
            }
            group.append(inst)
            insts.append(inst)
        reservations.append(
            {
                "Groups": [],
                "Instances": group,
                "OwnerId": "123456789012",
                "ReservationId": f"r-{rng.randrange(16**17):017x}",
            }
        )
    text = json.dumps({"Reservations": reservations}, indent=4)
    a, b = rng.sample(insts, 2)
    return text, [
        Q(
            "count",
            "how many instances are running?",
            sum(i["State"]["Name"] == "running" for i in insts),
        ),
        Q("lookup", f"what's the private IP of {a['InstanceId']}?", a["PrivateIpAddress"]),
        Q(
            "count",
            "how many m5.large instances are in eu-west-1b?",
            sum(
                i["InstanceType"] == "m5.large"
                and i["Placement"]["AvailabilityZone"] == "eu-west-1b"
                for i in insts
            ),
        ),
        Q("holder", f"which instance is tagged Name={b['Tags'][0]['Value']}?", b["InstanceId"]),
    ]


def helm_list(rng: random.Random) -> tuple[str, list[Q]]:
    charts = [
        ("redis", "7.2.4"),
        ("postgresql", "16.2.0"),
        ("ingress-nginx", "1.10.0"),
        ("grafana", "10.4.1"),
        ("cert-manager", "v1.14.4"),
    ]
    rows = []
    revs = rng.sample(range(1, 400), 260)
    for i in range(260):
        chart, app = rng.choice(charts)
        ns = rng.choice(["default", "monitoring", "ingress", "data", "platform"])
        status = rng.choices(
            ["deployed", "failed", "pending-upgrade", "superseded"], [20, 2, 1, 1]
        )[0]
        rows.append(
            (
                f"{rng.choice(WORDS)}-{chart}-{i}",
                ns,
                str(revs[i]),
                f"2024-03-{rng.randrange(1, 29):02d} {rng.randrange(24):02d}:"
                f"{rng.randrange(60):02d}:07.{rng.randrange(10**6):06d} +0000 UTC",
                status,
                f"{chart}-{rng.randrange(1, 20)}.{rng.randrange(10)}.{rng.randrange(10)}",
                app,
            )
        )
    head = ("NAME", "NAMESPACE", "REVISION", "UPDATED", "STATUS", "CHART", "APP VERSION")
    widths = [max(len(r[c]) for r in [head, *rows]) for c in range(6)]
    text = "".join(
        "".join(f"{r[c]:<{widths[c]}}\t" for c in range(6)) + r[6] + "\n" for r in [head, *rows]
    )
    r = rng.choice(rows)
    return text, [
        Q("count", "how many releases are in failed status?", sum(x[4] == "failed" for x in rows)),
        Q("lookup", f"which chart version is {r[0]} on?", r[5]),
        Q(
            "count",
            "how many releases live in the monitoring namespace?",
            sum(x[1] == "monitoring" for x in rows),
        ),
        Q("top", "which release has the highest revision?", max(rows, key=lambda x: int(x[2]))[0]),
    ]


def git_porcelain(rng: random.Random) -> tuple[str, list[Q]]:
    rows: list[tuple[str, str]] = []
    seen: set[str] = set()
    while len(rows) < 900:
        top = rng.choice(["src", "tests", "docs", "web/src"])
        ext = rng.choice(["py", "ts", "md"])
        path = f"{top}/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{rng.randrange(60)}.{ext}"
        if path in seen:
            continue
        seen.add(path)
        code = rng.choices(
            [" M", "M ", "MM", "A ", " D", "D ", "??", "R "], [20, 6, 3, 4, 2, 2, 8, 2]
        )[0]
        if code == "R ":
            new = path.rsplit("/", 1)[0] + f"/renamed_{len(rows)}.py"
            rows.append((code, f"{path} -> {new}"))
        else:
            rows.append((code, path))
    text = "".join(f"{c} {p}\n" for c, p in rows)
    ren = rng.choice([r for r in rows if r[0] == "R "])
    return text, [
        Q("count", "how many untracked files are there?", sum(c == "??" for c, _ in rows)),
        Q(
            "count",
            "how many files are deleted in the working tree?",
            sum(c == " D" for c, _ in rows),
        ),
        Q("lookup", f"what was {ren[1].split(' -> ')[0]} renamed to?", ren[1].split(" -> ")[1]),
        Q("count", "how many files are staged as new (A)?", sum(c == "A " for c, _ in rows)),
    ]


def du_sh(rng: random.Random) -> tuple[str, list[Q]]:
    names = sorted(
        {
            f"{rng.choice(WORDS)}-{rng.choice(['cache', 'build', 'venv'])}{rng.randrange(100)}"
            for _ in range(400)
        }
    )
    rows = []
    for n in names:
        size = int(10 ** rng.uniform(3, 10.3))
        rows.append((size, n))
    big, small = rng.sample(range(len(rows)), 2)
    rows[big] = (48 * 1024**3 + 7, rows[big][1])
    rows[small] = (512, rows[small][1])
    text = "".join(f"{_human(s)}\t{n}\n" for s, n in rows)
    r = rng.choice(rows)
    return text, [
        Q("lookup", f"how big is {r[1]}?", _human(r[0])),
        Q("top", "which directory takes the most space?", rows[big][1]),
        Q("count", "how many entries are 1G or bigger?", sum(s >= 1024**3 for s, _ in rows)),
        Q("top", "which is the smallest entry?", rows[small][1]),
    ]


def git_blame(rng: random.Random) -> tuple[str, list[Q]]:
    authors = [f"{f} {ln}" for f, ln in zip(FIRST[:9], LAST, strict=False)]
    commits = {f"{rng.randrange(16**8):08x}": rng.choice(authors) for _ in range(70)}
    shas = list(commits)
    weights = [rng.randrange(1, 10) for _ in shas]
    rows = []
    for i in range(1, 2401):
        sha = rng.choices(shas, weights)[0]
        day = (
            f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d} "
            f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d} +0100"
        )
        code = f"    {rng.choice(['return', 'self.', 'if', 'for x in'])} {rng.choice(WORDS)}_{i}()"
        rows.append((sha, commits[sha], day, i, code))
    aw = max(len(a) for a in authors)
    text = "".join(f"{s} ({a:<{aw}} {d} {i:>4}) {c}\n" for s, a, d, i, c in rows)
    lines_by = Counter(r[1] for r in rows)
    r, r2 = rng.sample(rows, 2)
    a = rng.choice(authors)
    return text, [
        Q("lookup", f"who last changed line {r[3]}?", r[1]),
        Q("count", f"how many lines are attributed to {a}?", lines_by[a]),
        Q("top", "which author owns the most lines?", lines_by.most_common(1)[0][0]),
        Q("lookup", f"which commit touched line {r2[3]} last?", r2[0]),
    ]


PROBE2 = {
    "df-h": df_h,
    "ss-tlnp": ss_tlnp,
    "systemctl": systemctl_units,
    "mypy": mypy_errors,
    "eslint-json": eslint_json,
    "ec2-json": ec2_instances,
    "helm-list": helm_list,
    "git-status": git_porcelain,
    "du-sh": du_sh,
    "git-blame": git_blame,
}
