"""The ``probe4`` set of ``bench/shapes.py``: ten more results a coding, data or ops agent gets
that the other sets lack (``psql`` aligned output with its ``(N rows)`` footer, ``pytest -v``,
``coverage report``, ``cargo metadata``, ``terraform show -json``, an OpenAPI document, a Jira
issue search, a SARIF report, Elasticsearch ``_cat/indices?v``, ``docker stats
--no-stream``), with their own field names and wording. Written before the guard was changed
for it, so its first run is a measure of unseen data."""

from __future__ import annotations

import json
import random
from typing import Any

from _shapes import FIRST, LAST, WORDS, Q, unique


def psql_aligned(rng: random.Random) -> tuple[str, list[Q]]:
    emails = unique(
        rng,
        600,
        lambda: (
            f"{rng.choice(FIRST).lower()}.{rng.choice(LAST).lower()}"
            f"{rng.randrange(100)}@example.org"
        ),
    )
    totals = rng.sample(range(100, 10_000_000), len(emails))
    rows = []
    for i, (mail, cents) in enumerate(zip(emails, totals, strict=True)):
        rows.append(
            (
                str(10_000 + i * 7),
                mail,
                rng.choice(["DE", "FR", "US", "BR", "JP", "NG"]),
                f"{cents / 100:.2f}",
                rng.choice(["t", "f"]),
                f"2024-0{rng.randrange(1, 10)}-{rng.randrange(1, 29):02d} "
                f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}+00",
            )
        )
    head = ("customer_id", "email", "country", "lifetime_value", "is_active", "signed_up_at")
    w = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
    right = {0, 3}

    def line(r: tuple[str, ...], is_head: bool = False) -> str:
        cells = []
        for c, v in enumerate(r):
            cells.append(
                v.center(w[c]) if is_head else v.rjust(w[c]) if c in right else v.ljust(w[c])
            )
        return " " + " | ".join(cells).rstrip() + "\n"

    text = (
        line(head, True)
        + "-"
        + "-+-".join("-" * x for x in w)
        + "-\n"
        + "".join(line(r) for r in rows)
        + f"({len(rows)} rows)\n\n"
    )
    r = rng.choice(rows)
    return text, [
        Q("lookup", f"what is the lifetime_value of {r[1]}?", r[3]),
        Q(
            "count",
            "how many active customers are in BR?",
            sum(x[2] == "BR" and x[4] == "t" for x in rows),
        ),
        Q(
            "top",
            "which customer has the highest lifetime_value?",
            max(rows, key=lambda x: float(x[3]))[1],
        ),
        Q("count", "how many rows did the query return?", len(rows)),
    ]


def pytest_verbose(rng: random.Random) -> tuple[str, list[Q]]:
    mods = [f"tests/test_{w}.py" for w in WORDS[:14]]
    tests: list[tuple[str, str]] = []
    names = unique(
        rng,
        700,
        lambda: (
            f"{rng.choice(mods)}::test_{rng.choice(WORDS)}_"
            f"{rng.choice(['parses', 'rejects', 'rounds', 'retries', 'caches'])}_"
            f"{rng.randrange(60)}"
        ),
    )
    for n in names:
        tests.append(
            (n, rng.choices(["PASSED", "FAILED", "SKIPPED", "XFAIL", "ERROR"], [60, 3, 4, 1, 1])[0])
        )
    out = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.2.1, pluggy-1.5.0 -- /srv/app/.venv/bin/python",
        "cachedir: .pytest_cache",
        "rootdir: /srv/app",
        "configfile: pyproject.toml",
        "plugins: anyio-4.4.0, cov-5.0.0",
        f"collecting ... collected {len(tests)} items",
        "",
    ]
    for i, (n, st) in enumerate(tests):
        pct = (i + 1) * 100 // len(tests)
        out.append(f"{n} {st:<7} [{pct:>3}%]")
    failed = [n for n, s in tests if s == "FAILED"]
    out += ["", "=================================== FAILURES ==================================="]
    for n in failed:
        fn = n.split("::")[1]
        out += [
            f"{'_' * 20} {fn} {'_' * 20}",
            "",
            f"    def {fn}():",
            ">       assert result == expected",
            "E       AssertionError: assert 3 == 4",
            "",
            f"{n.split('::')[0]}:{rng.randrange(10, 400)}: AssertionError",
        ]
    counts = {
        s: sum(x[1] == s for x in tests) for s in ["FAILED", "PASSED", "SKIPPED", "XFAIL", "ERROR"]
    }
    out += ["=========================== short test summary info ============================"]
    out += [f"FAILED {n} - AssertionError: assert 3 == 4" for n in failed]
    out.append(
        f"====== {counts['FAILED']} failed, {counts['PASSED']} passed, "
        f"{counts['SKIPPED']} skipped, "
        f"{counts['XFAIL']} xfailed, {counts['ERROR']} errors in 41.27s ======"
    )
    text = "\n".join(out) + "\n"
    mod = rng.choice(mods)
    t = rng.choice([x for x in tests if x[1] in ("SKIPPED", "ERROR")])
    return text, [
        Q("count", "how many tests failed?", counts["FAILED"]),
        Q("lookup", f"what was the outcome of {t[0]}?", t[1]),
        Q(
            "count",
            f"how many tests in {mod} passed?",
            sum(x[0].startswith(mod + "::") and x[1] == "PASSED" for x in tests),
        ),
        Q("list", "which tests failed?", tuple(failed)),
    ]


def coverage_report(rng: random.Random) -> tuple[str, list[Q]]:
    files = unique(
        rng,
        380,
        lambda: (
            f"src/shop/{rng.choice(WORDS)}/"
            f"{rng.choice(['models', 'views', 'api', 'tasks', 'utils', 'forms'])}_"
            f"{rng.randrange(40)}.py"
        ),
    )
    rows = []
    for f in files:
        st = rng.randrange(5, 900)
        miss = rng.randrange(0, st // 2 + 1)
        br = rng.randrange(0, st // 3 + 1)
        brp = rng.randrange(0, br + 1)
        cover = round(100 * (st - miss + br - brp) / (st + br))
        rows.append((f, st, miss, br, brp, cover))
    w = max(len(f) for f in files) + 2
    head = f"{'Name':<{w}}{'Stmts':>6}{'Miss':>7}{'Branch':>7}{'BrPart':>7}{'Cover':>7}\n"
    sep = "-" * (w + 34) + "\n"
    body = "".join(f"{r[0]:<{w}}{r[1]:>6}{r[2]:>7}{r[3]:>7}{r[4]:>7}{r[5]:>6}%\n" for r in rows)
    tst = sum(r[1] for r in rows)
    tmi = sum(r[2] for r in rows)
    tbr = sum(r[3] for r in rows)
    tbp = sum(r[4] for r in rows)
    tot = round(100 * (tst - tmi + tbr - tbp) / (tst + tbr))
    text = head + sep + body + sep + f"{'TOTAL':<{w}}{tst:>6}{tmi:>7}{tbr:>7}{tbp:>7}{tot:>6}%\n"
    r = rng.choice(rows)
    return text, [
        Q("lookup", f"what is the coverage of {r[0]}?", f"{r[5]}%"),
        Q("top", "which file has the most missed statements?", max(rows, key=lambda x: x[2])[0]),
        Q("count", "how many files are below 50% coverage?", sum(x[5] < 50 for x in rows)),
        Q("lookup", "what is the total coverage?", f"{tot}%"),
    ]


_REG = "/home/dev/.cargo/registry/src/index.crates.io-6f17d22bba15001f"


def cargo_metadata(rng: random.Random) -> tuple[str, list[Q]]:
    crates = unique(
        rng,
        240,
        lambda: (
            f"{rng.choice(WORDS)}{rng.choice(['', '-core', '-derive', '-sys', '_util'])}"
            f"{rng.randrange(30)}"
        ),
    )
    pkgs: list[dict[str, Any]] = []
    for c in crates:
        v = f"{rng.randrange(3)}.{rng.randrange(40)}.{rng.randrange(15)}"
        deps: list[dict[str, Any]] = [
            {
                "name": d,
                "source": "registry+https://github.com/rust-lang/crates.io-index",
                "req": f"^{rng.randrange(3)}.{rng.randrange(9)}",
                "kind": rng.choice([None, None, "dev", "build"]),
                "rename": None,
                "optional": rng.random() < 0.2,
                "uses_default_features": True,
                "features": [],
                "target": None,
                "registry": None,
            }
            for d in rng.sample(crates, rng.randrange(0, 7))
            if d != c
        ]
        pkgs.append(
            {
                "name": c,
                "version": v,
                "id": f"registry+https://github.com/rust-lang/crates.io-index#{c}@{v}",
                "license": rng.choice(
                    ["MIT OR Apache-2.0", "MIT", "Apache-2.0", "BSD-3-Clause", "MPL-2.0"]
                ),
                "license_file": None,
                "description": f"{rng.choice(WORDS).title()} "
                f"{rng.choice(['bindings', 'parser', 'runtime', 'macros'])}",
                "source": "registry+https://github.com/rust-lang/crates.io-index",
                "dependencies": deps,
                "targets": [
                    {
                        "kind": ["lib"],
                        "crate_types": ["lib"],
                        "name": c.replace("-", "_"),
                        "src_path": f"{_REG}/{c}-{v}/src/lib.rs",
                        "edition": rng.choice(["2018", "2021"]),
                        "doc": True,
                        "doctest": True,
                        "test": True,
                    }
                ],
                "features": {},
                "manifest_path": f"{_REG}/{c}-{v}/Cargo.toml",
                "edition": rng.choice(["2018", "2021"]),
                "rust_version": None,
            }
        )
    doc = {
        "packages": pkgs,
        "workspace_members": ["path+file:///home/dev/shop#0.1.0"],
        "target_directory": "/home/dev/shop/target",
        "version": 1,
        "workspace_root": "/home/dev/shop",
    }
    text = json.dumps(doc, indent=2)
    a, b = rng.sample(pkgs, 2)
    most = max(pkgs, key=lambda p: (len(p["dependencies"]), p["name"]))
    return text, [
        Q("lookup", f"which version of {a['name']} is in the graph?", a["version"]),
        Q(
            "count",
            "how many packages are licensed MPL-2.0?",
            sum(p["license"] == "MPL-2.0" for p in pkgs),
        ),
        Q("top", "which package has the most dependencies?", most["name"]),
        Q("lookup", f"what license does {b['name']} use?", b["license"]),
    ]


def terraform_show(rng: random.Random) -> tuple[str, list[Q]]:
    res: list[dict[str, Any]] = []
    types = [
        "aws_instance",
        "aws_s3_bucket",
        "aws_security_group",
        "aws_iam_role",
        "aws_db_instance",
    ]
    names = unique(rng, 260, lambda: f"{rng.choice(WORDS)}_{rng.randrange(100)}")
    for n in names:
        t = rng.choice(types)
        if t == "aws_instance":
            vals: dict[str, Any] = {
                "ami": f"ami-{rng.randrange(16**12):012x}",
                "instance_type": rng.choice(["t3.micro", "t3.large", "m6i.xlarge", "c7g.2xlarge"]),
                "id": f"i-{rng.randrange(16**17):017x}",
                "tags": {"Name": n.replace("_", "-"), "env": rng.choice(["prod", "staging"])},
            }
        elif t == "aws_s3_bucket":
            vals = {
                "bucket": f"acme-{n.replace('_', '-')}",
                "id": f"acme-{n.replace('_', '-')}",
                "force_destroy": False,
                "tags": {"env": rng.choice(["prod", "staging"])},
            }
        elif t == "aws_security_group":
            vals = {
                "id": f"sg-{rng.randrange(16**17):017x}",
                "name": n,
                "ingress": [
                    {"from_port": p, "to_port": p, "protocol": "tcp", "cidr_blocks": ["0.0.0.0/0"]}
                    for p in rng.sample([22, 80, 443, 5432, 6379], 2)
                ],
                "tags": {},
            }
        elif t == "aws_iam_role":
            vals = {
                "id": n,
                "name": n,
                "arn": f"arn:aws:iam::123456789012:role/{n}",
                "max_session_duration": rng.choice([3600, 7200, 43200]),
                "tags": {},
            }
        else:
            vals = {
                "id": f"db-{rng.randrange(36**10):010x}",
                "engine": rng.choice(["postgres", "mysql"]),
                "engine_version": rng.choice(["15.4", "16.1", "8.0.35"]),
                "instance_class": rng.choice(["db.t3.micro", "db.r6g.large"]),
                "allocated_storage": rng.randrange(20, 2000),
                "tags": {"env": rng.choice(["prod", "staging"])},
            }
        res.append(
            {
                "address": f"{t}.{n}",
                "mode": "managed",
                "type": t,
                "name": n,
                "provider_name": "registry.terraform.io/hashicorp/aws",
                "schema_version": 1,
                "values": vals,
                "sensitive_values": {"tags": {}},
            }
        )
    doc = {
        "format_version": "1.0",
        "terraform_version": "1.8.5",
        "values": {"root_module": {"resources": res}},
    }
    text = json.dumps(doc, indent=2)
    inst = rng.choice([r for r in res if r["type"] == "aws_instance"])
    dbs = [r for r in res if r["type"] == "aws_db_instance"]
    big = max(dbs, key=lambda r: r["values"]["allocated_storage"])
    return text, [
        Q(
            "count",
            "how many aws_s3_bucket resources are there?",
            sum(r["type"] == "aws_s3_bucket" for r in res),
        ),
        Q("lookup", f"what instance_type is {inst['address']}?", inst["values"]["instance_type"]),
        Q("top", "which database has the most allocated_storage?", big["address"]),
        Q(
            "sum",
            "what is the total allocated_storage of the databases?",
            str(sum(r["values"]["allocated_storage"] for r in dbs)),
        ),
    ]


def openapi_spec(rng: random.Random) -> tuple[str, list[Q]]:
    paths: dict[str, Any] = {}
    ops: list[tuple[str, str, str, str, bool]] = []
    nouns = unique(
        rng, 60, lambda: f"{rng.choice(WORDS)}{rng.choice(['Orders', 'Items', 'Rates', 'Notes'])}"
    )
    for noun in nouns:
        for p, methods in (
            (f"/v2/{noun}", ["get", "post"]),
            (f"/v2/{noun}/{{id}}", ["get", "patch", "delete"]),
        ):
            item: dict[str, Any] = {}
            for m in methods:
                if rng.random() < 0.25:
                    continue
                oid = f"{m}{noun.title()}{'ById' if '{id}' in p else ''}"
                dep = rng.random() < 0.08
                tag = rng.choice(["catalog", "orders", "billing", "admin"])
                op: dict[str, Any] = {
                    "operationId": oid,
                    "summary": f"{m.upper()} {noun}",
                    "tags": [tag],
                    "responses": {
                        "200": {
                            "description": "OK",
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": f"#/components/schemas/{noun.title()}"}
                                }
                            },
                        },
                        "404": {"description": "Not found"},
                    },
                }
                if dep:
                    op["deprecated"] = True
                if "{id}" in p:
                    op["parameters"] = [
                        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                    ]
                item[m] = op
                ops.append((p, m, oid, tag, dep))
            if item:
                paths[p] = item
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Shop API", "version": "2.14.0"},
        "servers": [{"url": "https://api.shop.example.com"}],
        "paths": paths,
        "components": {
            "schemas": {
                n.title(): {"type": "object", "properties": {"id": {"type": "string"}}}
                for n in nouns
            }
        },
    }
    text = json.dumps(doc, indent=2)
    a = rng.choice(ops)
    return text, [
        Q("lookup", f"what is the operationId of {a[1].upper()} {a[0]}?", a[2]),
        Q("count", "how many operations are deprecated?", sum(o[4] for o in ops)),
        Q("count", "how many paths does the API have?", len(paths)),
        Q("count", "how many operations are tagged billing?", sum(o[3] == "billing" for o in ops)),
    ]


def jira_search(rng: random.Random) -> tuple[str, list[Q]]:
    issues: list[dict[str, Any]] = []
    people = [f"{f} {s}" for f, s in zip(FIRST, LAST * 2, strict=False)]
    nums = rng.sample(range(100, 9999), 200)
    for n in nums:
        key = f"SHOP-{n}"
        issues.append(
            {
                "expand": "operations,versionedRepresentations,editmeta,changelog,renderedFields",
                "id": str(10_000 + n),
                "self": f"https://acme.atlassian.net/rest/api/2/issue/{10_000 + n}",
                "key": key,
                "fields": {
                    "summary": f"{rng.choice(WORDS).title()} "
                    f"{rng.choice(['checkout', 'search', 'login', 'invoice'])} "
                    f"{rng.choice(['fails', 'is slow', 'shows wrong total', 'times out'])}",
                    "status": {
                        "name": rng.choice(["To Do", "In Progress", "In Review", "Done"]),
                        "statusCategory": {"key": "x"},
                    },
                    "priority": {
                        "name": rng.choices(["Highest", "High", "Medium", "Low"], [1, 3, 6, 2])[0],
                        "id": "3",
                    },
                    "assignee": None
                    if rng.random() < 0.15
                    else {"displayName": rng.choice(people), "active": True},
                    "issuetype": {"name": rng.choice(["Bug", "Story", "Task"])},
                    "customfield_10016": rng.choice([1, 2, 3, 5, 8, 13]),
                    "created": f"2024-0{rng.randrange(1, 7)}-{rng.randrange(1, 29):02d}"
                    f"T09:{rng.randrange(60):02d}:00.000+0000",
                    "labels": rng.sample(
                        ["frontend", "backend", "regression", "customer"], rng.randrange(0, 3)
                    ),
                },
            }
        )
    doc = {
        "expand": "schema,names",
        "startAt": 0,
        "maxResults": 200,
        "total": 1873,
        "issues": issues,
    }
    text = json.dumps(doc, indent=2)
    a, b = rng.sample(issues, 2)
    return text, [
        Q("lookup", f"what is the status of {a['key']}?", a["fields"]["status"]["name"]),
        Q(
            "count",
            "how many issues are unassigned?",
            sum(i["fields"]["assignee"] is None for i in issues),
        ),
        Q(
            "count",
            "how many Highest priority bugs are there?",
            sum(
                i["fields"]["priority"]["name"] == "Highest"
                and i["fields"]["issuetype"]["name"] == "Bug"
                for i in issues
            ),
        ),
        Q(
            "lookup",
            f"who is assigned {b['key']}?",
            (b["fields"]["assignee"] or {}).get("displayName", "null"),
        ),
    ]


def sarif_report(rng: random.Random) -> tuple[str, list[Q]]:
    rules = [
        ("py/sql-injection", "error"),
        ("py/path-injection", "error"),
        ("py/unused-import", "note"),
        ("py/clear-text-logging-sensitive-data", "error"),
        ("py/empty-except", "warning"),
        ("py/unreachable-statement", "warning"),
        ("py/weak-crypto-key", "warning"),
    ]
    level = dict(rules)
    results: list[dict[str, Any]] = []
    for _ in range(420):
        rid = rng.choice(rules)[0]
        f = f"app/{rng.choice(WORDS)}/{rng.choice(['views', 'db', 'auth', 'jobs'])}.py"
        line = rng.randrange(1, 800)
        results.append(
            {
                "ruleId": rid,
                "level": level[rid],
                "message": {
                    "text": f"This {rid.split('/')[1].replace('-', ' ')} depends on a "
                    "user-provided value."
                },
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": f, "uriBaseId": "%SRCROOT%"},
                            "region": {"startLine": line, "startColumn": rng.randrange(1, 60)},
                        }
                    }
                ],
                "partialFingerprints": {
                    "primaryLocationLineHash": f"{rng.randrange(16**16):016x}:1"
                },
            }
        )
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "CodeQL",
                        "semanticVersion": "2.17.3",
                        "rules": [
                            {"id": r, "defaultConfiguration": {"level": lv}} for r, lv in rules
                        ],
                    }
                },
                "results": results,
            }
        ],
    }
    text = json.dumps(doc, indent=2)
    by_file: dict[str, int] = {}
    for r in results:
        u = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        by_file[u] = by_file.get(u, 0) + 1
    worst = max(by_file, key=lambda k: (by_file[k], k))
    uri = rng.choice(sorted(by_file))
    return text, [
        Q(
            "count",
            "how many py/sql-injection results are there?",
            sum(r["ruleId"] == "py/sql-injection" for r in results),
        ),
        Q(
            "count",
            "how many results have level error?",
            sum(r["level"] == "error" for r in results),
        ),
        Q("top", "which file has the most results?", worst),
        Q("count", f"how many results are in {uri}?", by_file[uri]),
    ]


def es_cat_indices(rng: random.Random) -> tuple[str, list[Q]]:
    def size(b: int) -> str:
        for unit, f in (("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10)):
            if b >= f:
                return f"{b / f:.1f}{unit}"
        return f"{b}b"

    names = unique(
        rng,
        500,
        lambda: f"logs-{rng.choice(WORDS)}-2024.0{rng.randrange(1, 7)}.{rng.randrange(1, 29):02d}",
    )
    docs = rng.sample(range(0, 90_000_000), len(names))
    rows = []
    for n, d in zip(names, docs, strict=True):
        health = rng.choices(["green", "yellow", "red"], [20, 4, 1])[0]
        b = d * rng.randrange(300, 900)
        rows.append(
            (
                health,
                rng.choice(["open", "open", "open", "close"]),
                n,
                f"{rng.randrange(36**22):022x}"[:22],
                str(rng.choice([1, 1, 3, 5])),
                str(rng.choice([0, 1, 1])),
                str(d),
                str(rng.randrange(0, 5000)),
                size(b * 2),
                size(b),
            )
        )
    head = (
        "health",
        "status",
        "index",
        "uuid",
        "pri",
        "rep",
        "docs.count",
        "docs.deleted",
        "store.size",
        "pri.store.size",
    )
    w = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
    right = {4, 5, 6, 7, 8, 9}
    text = "".join(
        " ".join(v.rjust(w[c]) if c in right else v.ljust(w[c]) for c, v in enumerate(r)).rstrip()
        + "\n"
        for r in [head, *rows]
    )
    a = rng.choice(rows)
    return text, [
        Q("count", "how many indices are red?", sum(r[0] == "red" for r in rows)),
        Q("lookup", f"how many docs does {a[2]} have?", a[6]),
        Q("top", "which index has the most documents?", max(rows, key=lambda r: int(r[6]))[2]),
        Q("count", "how many indices are closed?", sum(r[1] == "close" for r in rows)),
    ]


def docker_stats(rng: random.Random) -> tuple[str, list[Q]]:
    names = unique(
        rng,
        160,
        lambda: (
            f"shop-{rng.choice(WORDS)}-{rng.choice(['api', 'worker', 'cron', 'db'])}-"
            f"{rng.randrange(1, 9)}"
        ),
    )
    cpus = rng.sample(range(0, 40000), len(names))
    rows = []
    for n, c in zip(names, cpus, strict=True):
        mem = rng.randrange(5, 3900)
        lim = rng.choice([512, 1024, 2048, 4096])
        mem = min(mem, lim - 1)
        rows.append(
            (
                f"{rng.randrange(16**12):012x}",
                n,
                f"{c / 100:.2f}%",
                f"{mem}MiB / {lim / 1024:.3g}GiB",
                f"{100 * mem / lim:.2f}%",
                f"{rng.randrange(1, 999)}kB / {rng.randrange(1, 999)}kB",
                f"{rng.randrange(0, 99)}MB / {rng.randrange(0, 99)}kB",
                str(rng.randrange(1, 300)),
                c,
                mem,
            )
        )
    head = (
        "CONTAINER ID",
        "NAME",
        "CPU %",
        "MEM USAGE / LIMIT",
        "MEM %",
        "NET I/O",
        "BLOCK I/O",
        "PIDS",
    )
    w = [max(len(str(r[c])) for r in [head, *rows]) + 3 for c in range(7)]
    text = "".join(
        "".join(f"{r[c]:<{w[c]}}" for c in range(7)) + f"{r[7]}\n" for r in [head, *rows]
    )
    a = rng.choice(rows)
    return text, [
        Q("top", "which container uses the most CPU?", max(rows, key=lambda r: r[8])[1]),
        Q("lookup", f"how much memory is {a[1]} using?", a[3].split(" / ")[0]),
        Q(
            "count",
            "how many containers have more than 100 PIDS?",
            sum(int(r[7]) > 100 for r in rows),
        ),
        Q("lookup", f"what is the container ID of {a[1]}?", a[0]),
    ]


PROBE4 = {
    "psql": psql_aligned,
    "pytest-v": pytest_verbose,
    "coverage": coverage_report,
    "cargo-meta": cargo_metadata,
    "tf-show": terraform_show,
    "openapi": openapi_spec,
    "jira": jira_search,
    "sarif": sarif_report,
    "es-cat": es_cat_indices,
    "dock-stats": docker_stats,
}
