"""The ``probe6`` set of ``bench/shapes.py``: ten more results a coding, data or ops agent gets
that the other sets lack (``aws s3 ls --recursive --summarize``, ``pip-audit --format json``,
``kafka-consumer-groups --describe --all-groups``, ``iostat -x``, a Redis ``INFO all`` dump, a
``poetry.lock``, an ``strace -c`` summary, a Sentry issues list, a CloudWatch Logs Insights
``get-query-results``, an ``ansible-playbook`` run with its recap), with their own field names
and wording. Written before the guard was changed for it, so its first run is a measure of
unseen data."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from _shapes import WORDS, Q, unique

_HEX = "0123456789abcdef"


def s3_ls(rng: random.Random) -> tuple[str, list[Q]]:
    prefixes = ["logs/2024/06/", "exports/daily/", "backups/pg/", "assets/img/", "tmp/uploads/"]
    keys = unique(
        rng,
        900,
        lambda: (
            rng.choice(prefixes)
            + f"{rng.choice(WORDS)}-{rng.randrange(10**5):05d}"
            + rng.choice([".json.gz", ".parquet", ".png", ".dump", ".csv"])
        ),
    )
    rows = []
    for k in keys:
        day = rng.randrange(1, 29)
        stamp = f"2024-06-{day:02d} {rng.randrange(24):02d}:{rng.randrange(60):02d}:" + (
            f"{rng.randrange(60):02d}"
        )
        rows.append((stamp, rng.randrange(0, 40_000_000), k))
    rows.sort(key=lambda r: r[2])
    big = max(rows, key=lambda r: r[1])
    lines = [f"{s} {n:>10} {k}" for s, n, k in rows]
    total = sum(r[1] for r in rows)
    lines += ["", f"Total Objects: {len(rows)}", f"   Total Size: {total}"]
    text = "\n".join(lines) + "\n"
    a = rng.choice(rows)
    return text, [
        Q("lookup", f"what is the size of {a[2]}?", str(a[1])),
        Q(
            "count",
            "how many objects are under backups/pg/?",
            sum(r[2].startswith("backups/pg/") for r in rows),
        ),
        Q("top", "which object is the largest?", big[2]),
        Q(
            "count",
            "how many .parquet objects were modified on 2024-06-14?",
            sum(r[2].endswith(".parquet") and r[0].startswith("2024-06-14") for r in rows),
        ),
    ]


def pip_audit(rng: random.Random) -> tuple[str, list[Q]]:
    names = unique(
        rng,
        150,
        lambda: f"{rng.choice(WORDS)}-{rng.choice(WORDS)}{rng.choice(['', 'kit', '-sdk'])}",
    )
    ids = unique(rng, 400, lambda: f"PYSEC-20{rng.randrange(19, 25)}-{rng.randrange(1, 999)}")
    it = iter(ids)
    deps: list[dict[str, Any]] = []
    for n in names:
        ver = f"{rng.randrange(4)}.{rng.randrange(30)}.{rng.randrange(10)}"
        vulns = []
        if rng.random() < 0.35:
            for _ in range(rng.randrange(1, 5)):
                vid = next(it)
                major = int(ver.split(".")[0])
                vulns.append(
                    {
                        "id": vid,
                        "fix_versions": [f"{major}.{rng.randrange(30, 40)}.{rng.randrange(5)}"]
                        if rng.random() < 0.85
                        else [],
                        "aliases": [
                            f"CVE-20{rng.randrange(19, 25)}-{rng.randrange(1000, 49999)}",
                            "GHSA-"
                            + "-".join(
                                "".join(rng.choice("23456789cfghjmpqrvwx") for _ in range(4))
                                for _ in range(3)
                            ),
                        ][: rng.randrange(1, 3)],
                        "description": f"{n} before the fix allows "
                        + rng.choice(["denial of service", "header injection", "SSRF", "RCE"])
                        + " via crafted input.",
                    }
                )
        deps.append({"name": n, "version": ver, "vulns": vulns})
    most = max(deps, key=lambda d: len(d["vulns"]))
    most["vulns"].append(dict(most["vulns"][0], id=next(it)))
    doc = {"dependencies": deps, "fixes": []}
    text = json.dumps(doc)
    vuln = [v for d in deps for v in d["vulns"]]
    a = rng.choice([v for v in vuln if v["fix_versions"]])
    return text, [
        Q(
            "count",
            "how many dependencies have at least one vulnerability?",
            sum(bool(d["vulns"]) for d in deps),
        ),
        Q("lookup", f"which version fixes {a['id']}?", a["fix_versions"][0]),
        Q("top", "which package has the most vulnerabilities?", most["name"]),
        Q(
            "count",
            "how many vulnerabilities have no fix version?",
            sum(not v["fix_versions"] for v in vuln),
        ),
    ]


def kafka_groups(rng: random.Random) -> tuple[str, list[Q]]:
    groups = unique(
        rng, 14, lambda: f"{rng.choice(WORDS)}-{rng.choice(['consumer', 'sink', 'etl'])}"
    )
    topics = unique(rng, 20, lambda: f"{rng.choice(['orders', 'clicks', 'audit', 'billing'])}."
                    f"{rng.choice(WORDS)}")  # fmt: skip
    head = (
        "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
        "HOST", "CLIENT-ID",
    )  # fmt: skip
    rows_all: list[tuple[str, ...]] = []
    blocks = []
    for g in groups:
        rows = []
        for t in rng.sample(topics, rng.randrange(1, 4)):
            for p in range(rng.randrange(3, 13)):
                end = rng.randrange(10_000, 90_000_000)
                lag = rng.choice([0, 0, 0, rng.randrange(1, 5000), rng.randrange(1, 900_000)])
                live = rng.random() < 0.8
                cid = (
                    f"{g}-{rng.randrange(1, 6)}-" + "".join(rng.choice(_HEX) for _ in range(8))
                    + "-" + "".join(rng.choice(_HEX) for _ in range(4))
                    if live
                    else "-"
                )  # fmt: skip
                rows.append(
                    (
                        g, t, str(p), str(end - lag), str(end), str(lag), cid,
                        f"/10.4.{rng.randrange(256)}.{rng.randrange(2, 255)}" if live else "-",
                        f"{g}-{rng.randrange(1, 6)}" if live else "-",
                    )
                )  # fmt: skip
        w = [max(len(r[c]) for r in [head, *rows]) for c in range(9)]
        blocks.append(
            "\n".join(
                " ".join(v.ljust(w[c]) for c, v in enumerate(r)).rstrip() for r in [head, *rows]
            )
        )
        rows_all += rows
    text = "\n\n".join(blocks) + "\n"
    worst = max(rows_all, key=lambda r: int(r[5]))
    a = rng.choice(rows_all)
    g = rng.choice(groups)
    return text, [
        Q("lookup", f"what is the lag of {a[0]} on {a[1]} partition {a[2]}?", a[5]),
        Q("top", "which group has the partition with the highest lag?", worst[0]),
        Q(
            "count",
            "how many partitions have no active consumer?",
            sum(r[6] == "-" for r in rows_all),
        ),
        Q(
            "sum",
            f"what is the total lag of {g}?",
            str(sum(int(r[5]) for r in rows_all if r[0] == g)),
        ),
    ]


def iostat_x(rng: random.Random) -> tuple[str, list[Q]]:
    devs = ["nvme0n1", "nvme1n1", "sda", "sdb", "sdc"] + [f"dm-{k}" for k in range(40)]
    devs += [f"loop{k}" for k in range(30)]
    head = (
        "Device", "r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz", "w/s", "wkB/s",
        "wrqm/s", "%wrqm", "w_await", "wareq-sz", "d/s", "dkB/s", "drqm/s", "%drqm", "d_await",
        "dareq-sz", "f/s", "f_await", "aqu-sz", "%util",
    )  # fmt: skip
    reports = []
    out = ["Linux 6.8.0-45-generic (db-primary-03) \t06/03/2024 \t_x86_64_\t(32 CPU)", ""]
    for _ in range(3):
        cpu = [round(rng.uniform(0, 60), 2) for _ in range(6)]
        out += [
            "avg-cpu:  %user   %nice %system %iowait  %steal   %idle",
            "         " + "".join(f"{v:>8.2f}" for v in cpu),
            "",
        ]
        rows = []
        for d in devs:
            idle = d.startswith("loop") and rng.random() < 0.8
            vals = [0.0 if idle else round(rng.uniform(0, 900) ** (0.5 + rng.random() / 2), 2)
                    for _ in range(len(head) - 2)]  # fmt: skip
            util = 0.0 if idle else round(rng.uniform(0, 100), 2)
            rows.append((d, *[f"{v:.2f}" for v in vals], f"{util:.2f}"))
        w = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
        out += [
            r[0].ljust(w[0]) + "".join(" " + v.rjust(w[c + 1]) for c, v in enumerate(r[1:]))
            for r in [head, *rows]
        ]
        out.append("")
        reports.append((cpu, rows))
    text = "\n".join(out) + "\n"
    last = reports[-1][1]
    a = rng.choice([r for r in last if not r[0].startswith("loop")])
    busiest = max(last, key=lambda r: float(r[-1]))
    return text, [
        Q("lookup", f"what is the %util of {a[0]} in the last report?", a[-1]),
        Q("top", "which device has the highest %util in the last report?", busiest[0]),
        Q(
            "count",
            "how many devices are above 80 %util in the last report?",
            sum(float(r[-1]) > 80 for r in last),
        ),
        Q("lookup", "what was %iowait in the first report?", f"{reports[0][0][3]:.2f}"),
    ]


def redis_info(rng: random.Random) -> tuple[str, list[Q]]:
    cmds = unique(
        rng,
        120,
        lambda: rng.choice(
            ["get", "set", "hget", "hset", "zadd", "zrange", "lpush", "rpop", "expire", "del",
             "incr", "sadd", "smembers", "mget", "scan", "ttl", "publish", "xadd", "xread",
             "eval", "evalsha", "client|list", "config|get", "info", "ping", "exists",
             "hgetall", "zrangebyscore", "unlink", "setex", "getdel", "psubscribe",
             "lrange", "llen", "hdel", "zrem", "srem", "type", "multi", "exec"]
        )
        + rng.choice(["", "", "", "ex", "nx", "_ro"]),
    )  # fmt: skip
    used = rng.randrange(10**9, 9 * 10**9)
    lines = [
        "# Server",
        "redis_version:7.2.4",
        "redis_git_sha1:00000000",
        "redis_mode:standalone",
        "os:Linux 6.1.0-18-cloud-amd64 x86_64",
        "arch_bits:64",
        "tcp_port:6379",
        f"uptime_in_seconds:{rng.randrange(10**6, 10**7)}",
        f"uptime_in_days:{rng.randrange(12, 110)}",
        "executable:/usr/local/bin/redis-server",
        "config_file:/etc/redis/redis.conf",
        "",
        "# Clients",
        f"connected_clients:{rng.randrange(20, 4000)}",
        f"blocked_clients:{rng.randrange(0, 30)}",
        "maxclients:10000",
        "",
        "# Memory",
        f"used_memory:{used}",
        f"used_memory_human:{used / 2**30:.2f}G",
        f"used_memory_peak:{used + rng.randrange(10**8)}",
        "maxmemory:10737418240",
        "maxmemory_human:10.00G",
        "maxmemory_policy:allkeys-lru",
        f"mem_fragmentation_ratio:{rng.uniform(1, 2):.2f}",
        "",
        "# Persistence",
        "loading:0",
        f"rdb_changes_since_last_save:{rng.randrange(10**6)}",
        "rdb_last_bgsave_status:ok",
        "aof_enabled:1",
        "aof_last_write_status:ok",
        "",
        "# Stats",
        f"total_connections_received:{rng.randrange(10**6, 10**8)}",
        f"total_commands_processed:{rng.randrange(10**9, 10**10)}",
        f"keyspace_hits:{rng.randrange(10**8, 10**9)}",
        f"keyspace_misses:{rng.randrange(10**6, 10**8)}",
        f"evicted_keys:{rng.randrange(10**5)}",
        f"expired_keys:{rng.randrange(10**7)}",
        "",
        "# Replication",
        "role:master",
        "connected_slaves:2",
        f"slave0:ip=10.2.0.{rng.randrange(2, 250)},port=6379,state=online,offset=88172631,lag=0",
        f"slave1:ip=10.2.1.{rng.randrange(2, 250)},port=6379,state=online,offset=88172631,lag=1",
        f"master_replid:{''.join(rng.choice(_HEX) for _ in range(40))}",
        "master_repl_offset:88172631",
        "",
        "# Commandstats",
    ]
    stats = []
    for c in cmds:
        calls = rng.randrange(1, 10**9)
        usec = calls * rng.randrange(1, 40)
        failed = rng.choice([0, 0, 0, rng.randrange(1, 5000)])
        stats.append((c, calls, failed))
        lines.append(
            f"cmdstat_{c}:calls={calls},usec={usec},usec_per_call={usec / calls:.2f},"
            f"rejected_calls={rng.choice([0, 0, rng.randrange(1, 90)])},failed_calls={failed}"
        )
    lines += ["", "# Keyspace"]
    dbs = []
    for db in range(16):
        if rng.random() < 0.6:
            keys = rng.randrange(1, 5_000_000)
            dbs.append((db, keys))
            lines.append(
                f"db{db}:keys={keys},expires={rng.randrange(keys + 1)},"
                f"avg_ttl={rng.randrange(10**8)},subexpiry=0"
            )
    text = "\r\n".join(lines) + "\r\n"
    a = rng.choice(stats)
    top = max(stats, key=lambda s: s[1])
    picked = rng.choice(dbs)
    return text, [
        Q("lookup", f"how many calls has {a[0]} had?", str(a[1])),
        Q("top", "which command has the most calls?", top[0]),
        Q("lookup", f"how many keys are in db{picked[0]}?", str(picked[1])),
        Q("count", "how many commands have failed calls?", sum(s[2] > 0 for s in stats)),
    ]


def poetry_lock(rng: random.Random) -> tuple[str, list[Q]]:
    names = sorted(
        unique(rng, 140, lambda: f"{rng.choice(WORDS)}-{rng.choice(WORDS)}{rng.choice(['', 'py'])}")
    )
    pkgs = []
    out = [
        "# This file is automatically @generated by Poetry 1.8.3 and should not be changed"
        " by hand.",
        "",
    ]
    for n in names:
        ver = f"{rng.randrange(5)}.{rng.randrange(30)}.{rng.randrange(10)}"
        optional = rng.random() < 0.2
        deps = rng.sample([m for m in names if m != n], rng.choice([0, 0, 1, 2, 3, 4]))
        pkgs.append((n, ver, optional, deps))
        out += [
            "[[package]]",
            f'name = "{n}"',
            f'version = "{ver}"',
            f'description = "{rng.choice(WORDS).title()} '
            f'{rng.choice(["helpers", "bindings", "client", "toolkit"])} for Python"',
            f"optional = {'true' if optional else 'false'}",
            f'python-versions = ">=3.{rng.randrange(7, 11)}"',
            "files = [",
        ]
        for kind in rng.sample(
            ["py3-none-any.whl", "tar.gz", "cp312-cp312-manylinux_2_17_x86_64.whl"],
            rng.randrange(1, 4),
        ):
            fname = (
                f"{n}-{ver}.tar.gz" if kind == "tar.gz" else f"{n.replace('-', '_')}-{ver}-{kind}"
            )
            digest = "".join(rng.choice(_HEX) for _ in range(64))
            out.append(f'    {{file = "{fname}", hash = "sha256:{digest}"}},')
        out.append("]")
        if deps:
            out += ["", "[package.dependencies]"]
            out += [f'{d} = ">={rng.randrange(1, 4)}.{rng.randrange(10)}"' for d in deps]
        if optional and rng.random() < 0.5:
            out += ["", "[package.extras]", f'test = ["pytest (>=7)", "{rng.choice(names)}"]']
        out.append("")
    out += [
        "[extras]",
        'docs = ["' + '", "'.join([p[0] for p in pkgs if p[2]][:5]) + '"]',
        "",
        "[metadata]",
        'lock-version = "2.0"',
        'python-versions = "^3.11"',
        f'content-hash = "{"".join(rng.choice(_HEX) for _ in range(64))}"',
    ]
    text = "\n".join(out) + "\n"
    a = rng.choice(pkgs)
    b = rng.choice([p for p in pkgs if len(p[3]) >= 2])
    return text, [
        Q("lookup", f"which version of {a[0]} is locked?", a[1]),
        Q("count", "how many packages are optional?", sum(p[2] for p in pkgs)),
        Q("list", f"what does {b[0]} depend on?", tuple(b[3])),
        Q("last", "which is the last package in the lock file?", pkgs[-1][0]),
    ]


def strace_c(rng: random.Random) -> tuple[str, list[Q]]:
    calls = [
        "read", "write", "openat", "close", "fstat", "newfstatat", "mmap", "munmap", "mprotect",
        "brk", "rt_sigaction", "rt_sigprocmask", "ioctl", "pread64", "pwrite64", "readv",
        "writev", "access", "pipe2", "select", "sched_yield", "mremap", "madvise", "dup2",
        "nanosleep", "getpid", "socket", "connect", "accept4", "sendto", "recvfrom", "sendmsg",
        "recvmsg", "shutdown", "bind", "listen", "getsockname", "getpeername", "setsockopt",
        "getsockopt", "clone3", "execve", "wait4", "kill", "uname", "fcntl", "flock", "fsync",
        "fdatasync", "getdents64", "getcwd", "chdir", "rename", "mkdir", "unlink", "readlink",
        "statfs", "futex", "epoll_wait", "epoll_ctl", "epoll_create1", "eventfd2", "getrandom",
        "statx", "rseq", "prlimit64", "set_robust_list", "arch_prctl", "lseek", "poll",
    ]  # fmt: skip
    rows: list[tuple[str, int, int, int, float]] = []
    for s in rng.sample(calls, 58):
        n = rng.randrange(1, 200_000)
        errs = rng.choice([0, 0, 0, rng.randrange(1, n + 1)])
        usecs = rng.randrange(0, 3000)
        rows.append((s, n, errs, usecs, n * usecs / 1e6))
    tot = sum(r[4] for r in rows)
    rows.sort(key=lambda r: -r[4])
    lines = [
        "% time     seconds  usecs/call     calls    errors syscall",
        "------ ----------- ----------- --------- --------- ----------------",
    ]
    for s, n, errs, usecs, sec in rows:
        pct = 100 * sec / tot if tot else 0
        lines.append(f"{pct:6.2f} {sec:11.6f} {usecs:11d} {n:9d} {errs if errs else '':>9} {s}")
    ncalls = sum(r[1] for r in rows)
    nerr = sum(r[2] for r in rows)
    lines += [
        "------ ----------- ----------- --------- --------- ----------------",
        f"100.00 {tot:11.6f} {int(tot * 1e6 / ncalls):11d} {ncalls:9d} {nerr:9d} total",
    ]
    text = "\n".join(lines) + "\n"
    a = rng.choice(rows)
    most = max(rows, key=lambda r: r[2])
    return text, [
        Q("lookup", f"how many times was {a[0]} called?", str(a[1])),
        Q("top", "which syscall had the most errors?", most[0]),
        Q("count", "how many syscalls returned errors?", sum(r[2] > 0 for r in rows)),
        Q("lookup", "how many syscalls were made in total?", str(ncalls)),
    ]


def sentry_issues(rng: random.Random) -> tuple[str, list[Q]]:
    projects = ["shop-web", "shop-api", "billing-worker", "mobile-ios", "search"]
    errs = [
        ("TypeError", "Cannot read properties of undefined (reading '{}')"),
        ("KeyError", "'{}'"),
        ("ValueError", "invalid literal for int() with base 10: '{}'"),
        ("OperationalError", "could not connect to server: {}"),
        ("TimeoutError", "request to {} timed out"),
    ]
    issues: list[dict[str, Any]] = []
    ids = unique(rng, 260, lambda: str(rng.randrange(4_000_000_000, 5_000_000_000)))
    for k, iid in enumerate(ids):
        p = rng.choices(projects, [5, 4, 2, 2, 1])[0]
        etype, msg = rng.choice(errs)
        value = msg.format(rng.choice(WORDS))
        count = rng.randrange(1, 90_000)
        issues.append(
            {
                "id": iid,
                "shareId": None,
                "shortId": f"{p.upper()}-{k + 1:X}",
                "title": f"{etype}: {value}",
                "culprit": f"{rng.choice(WORDS)}.{rng.choice(['views', 'tasks', 'handlers'])} in "
                f"{rng.choice(['get', 'post', 'run', 'process'])}_{rng.choice(WORDS)}",
                "permalink": f"https://acme.sentry.io/issues/{iid}/",
                "logger": None,
                "level": rng.choices(["error", "warning", "fatal", "info"], [10, 4, 1, 1])[0],
                "status": rng.choices(["unresolved", "resolved", "ignored"], [6, 3, 1])[0],
                "isPublic": False,
                "platform": "python" if "api" in p or "worker" in p else "javascript",
                "project": {"id": str(projects.index(p) + 11), "name": p, "slug": p},
                "type": "error",
                "metadata": {"type": etype, "value": value, "filename": f"{p}/app.py"},
                "numComments": rng.randrange(4),
                "assignedTo": None,
                "isBookmarked": False,
                "hasSeen": rng.random() < 0.5,
                "count": str(count),
                "userCount": rng.randrange(0, count // 3 + 1),
                "firstSeen": f"2024-0{rng.randrange(1, 6)}-{rng.randrange(1, 29):02d}T"
                f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:11.123000Z",
                "lastSeen": f"2024-06-0{rng.randrange(1, 4)}T{rng.randrange(24):02d}:"
                f"{rng.randrange(60):02d}:42.456000Z",
                "stats": {"24h": [[1717300000 + h * 3600, rng.randrange(50)] for h in range(24)]},
            }
        )
    text = json.dumps(issues, indent=2)
    a = rng.choice(issues)
    top = max(issues, key=lambda i: int(i["count"]))
    return text, [
        Q("lookup", f"how many events does {a['shortId']} have?", a["count"]),
        Q("top", "which issue has the most events?", top["shortId"]),
        Q(
            "count",
            "how many unresolved issues are level fatal?",
            sum(i["status"] == "unresolved" and i["level"] == "fatal" for i in issues),
        ),
        Q(
            "count",
            "how many issues are in the billing-worker project?",
            sum(i["project"]["slug"] == "billing-worker" for i in issues),
        ),
    ]


def cloudwatch_insights(rng: random.Random) -> tuple[str, list[Q]]:
    streams = [f"2024/06/03/[$LATEST]{''.join(rng.choice(_HEX) for _ in range(32))}"
               for _ in range(9)]  # fmt: skip
    paths = [f"/api/{rng.choice(WORDS)}/{rng.choice(WORDS)}" for _ in range(25)]
    results = []
    recs = []
    for k in range(420):
        rid = "-".join(
            (p + "".join(rng.choice(_HEX) for _ in range(n)))
            for p, n in (("", 8), ("", 4), ("4", 3), ("a", 3), ("", 12))
        )
        status = rng.choices(["200", "201", "400", "404", "500", "502"], [60, 5, 4, 6, 3, 1])[0]
        dur = round(rng.uniform(1, 3000), 2)
        path = rng.choice(paths)
        ts = f"2024-06-03 {23 - k // 30:02d}:{59 - (k % 30) * 2:02d}:{rng.randrange(60):02d}."
        ts += f"{rng.randrange(1000):03d}"
        recs.append((ts, rid, status, dur, path))
        results.append(
            [
                {"field": "@timestamp", "value": ts},
                {"field": "requestId", "value": rid},
                {"field": "status", "value": status},
                {"field": "path", "value": path},
                {"field": "duration", "value": str(dur)},
                {"field": "@logStream", "value": rng.choice(streams)},
                {
                    "field": "@ptr",
                    "value": "Cm0KNAogOTk5OTk5OTk5OTk5Oi9hd3MvbGFtYmRhL3Nob3AtYXBpEAMiD"
                    + "".join(rng.choice("ABCDEFGHabcdefgh0123456789") for _ in range(40)),
                },
            ]
        )
    doc: dict[str, Any] = {
        "results": results,
        "statistics": {
            "recordsMatched": float(len(results)),
            "recordsScanned": float(rng.randrange(10**5, 10**7)),
            "bytesScanned": float(rng.randrange(10**8, 10**10)),
        },
        "status": "Complete",
    }
    text = json.dumps(doc, indent=4)
    a = rng.choice(recs)
    slow = max(recs, key=lambda r: r[3])
    return text, [
        Q("count", "how many requests returned status 500?", sum(r[2] == "500" for r in recs)),
        Q("lookup", f"what path did request {a[1]} hit?", a[4]),
        Q("top", "which requestId had the longest duration?", slow[1]),
        Q("lookup", "how many records were scanned?", str(doc["statistics"]["recordsScanned"])),
    ]


def ansible_run(rng: random.Random) -> tuple[str, list[Q]]:
    hosts = unique(
        rng,
        36,
        lambda: f"{rng.choice(['web', 'app', 'db', 'lb'])}{rng.randrange(1, 90):02d}.prod.acme.net",
    )
    tasks = [
        "Gathering Facts", "common : install base packages", "common : configure chrony",
        "users : create deploy user", "nginx : template site config", "nginx : reload nginx",
        "app : pull release tarball", "app : run database migrations", "app : restart app service",
        "monitoring : install node_exporter", "firewall : apply ufw rules",
    ]  # fmt: skip
    tally: dict[str, Counter[str]] = {h: Counter() for h in hosts}
    failed_at: dict[str, str] = {}
    unreach = set(rng.sample(hosts, 2))
    out = ["", "PLAY [Deploy shop release 1.9.2] " + "*" * 40, ""]
    alive = [h for h in hosts]
    for t in tasks:
        out.append(f"TASK [{t}] " + "*" * max(3, 60 - len(t)))
        for h in list(alive):
            if t == "Gathering Facts" and h in unreach:
                out.append(
                    f'fatal: [{h}]: UNREACHABLE! => {{"changed": false, "msg": "Failed to connect '
                    f"to the host via ssh: ssh: connect to host {h} port 22: Connection timed out"
                    '", '
                    f'"unreachable": true}}'
                )
                tally[h]["unreachable"] += 1
                alive.remove(h)
                continue
            r = rng.choices(["ok", "changed", "skipping", "failed"], [50, 30, 10, 1.5])[0]
            if r == "failed":
                out.append(
                    f'fatal: [{h}]: FAILED! => {{"changed": false, "msg": "non-zero return '
                    f'code", "rc": {rng.randrange(1, 130)}, "stderr": "{rng.choice(WORDS)}: '
                    f'command not found"}}'
                )
                tally[h]["failed"] += 1
                failed_at[h] = t
                alive.remove(h)
            elif r == "skipping":
                out.append(f"skipping: [{h}]")
                tally[h]["skipped"] += 1
            else:
                out.append(f"{r}: [{h}]")
                tally[h][r] += 1
        out.append("")
    out.append("PLAY RECAP " + "*" * 60)
    for h in sorted(hosts):
        c = tally[h]
        out.append(
            f"{h:<28}: ok={c['ok'] + c['changed']:<4} changed={c['changed']:<4} "
            f"unreachable={c['unreachable']:<4} failed={c['failed']:<4} skipped={c['skipped']:<4} "
            f"rescued=0    ignored=0"
        )
    text = "\n".join(out) + "\n"
    if not failed_at:
        failed_at[hosts[0]] = tasks[0]
    fh = rng.choice(sorted(failed_at))
    a = rng.choice(hosts)
    recap = {ln.split(" ", 1)[0]: ln for ln in out if ln.startswith(tuple(hosts))}
    return text, [
        Q("count", "how many hosts failed?", sum(tally[h]["failed"] > 0 for h in hosts)),
        Q("lookup", f"which task failed on {fh}?", failed_at[fh]),
        Q("lookup", f"what is the recap of {a}?", recap[a].rstrip()),
        Q("list", "which hosts were unreachable?", tuple(sorted(unreach))),
    ]


PROBE6 = {
    "s3-ls": s3_ls,
    "pip-audit": pip_audit,
    "kafka-cg": kafka_groups,
    "iostat-x": iostat_x,
    "redis-info": redis_info,
    "poetry-lock": poetry_lock,
    "strace-c": strace_c,
    "sentry": sentry_issues,
    "cw-insights": cloudwatch_insights,
    "ansible": ansible_run,
}
