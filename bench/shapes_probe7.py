"""The ``probe7`` set of ``bench/shapes.py``: ten more results a coding, data or ops agent gets
that the other sets lack (``cargo clippy --message-format=json``, ``vmstat -t 1``, ``zpool
status``, ``bq query --format=prettyjson``, ``lsblk -J``, ``nmap -oG``, a Newman JSON report,
``dmesg``, ``netstat -s``, an xUnit.net v2 XML report), with their own field names and
wording. Written before the guard was changed for it, so its first run is a measure of unseen
data."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from _shapes import FIRST, LAST, WORDS, Q, unique

_HEX = "0123456789abcdef"
_NOISE = [
    "EXT4-fs (dm-0): re-mounted",
    "systemd[1]: Started",
    "kvm: already loaded",
    "bpfilter: Loaded",
    "IPv6: ADDRCONF(NETDEV_CHANGE)",
]


def clippy_json(rng: random.Random) -> tuple[str, list[Q]]:
    lints = [
        ("clippy::needless_return", "unneeded `return` statement"),
        ("clippy::redundant_clone", "redundant clone"),
        ("clippy::unwrap_used", "used `unwrap()` on a `Result` value"),
        ("clippy::too_many_arguments", "this function has too many arguments (9/7)"),
        ("clippy::large_enum_variant", "large size difference between variants"),
        ("unused_variables", "unused variable: `{}`"),
        ("dead_code", "function `{}` is never used"),
        ("E0308", "mismatched types"),
        ("E0599", "no method named `{}` found for struct `Config` in the current scope"),
    ]
    crates = ["ledger-core", "ledger-api", "ledger-cli"]
    lines: list[str] = []
    msgs: list[tuple[str, str, str, int, str]] = []
    for k in range(380):
        crate = rng.choice(crates)
        code, text = rng.choices(lints, [6, 5, 5, 2, 1, 4, 3, 1, 1])[0]
        text = text.format(f"{rng.choice(WORDS)}_{rng.choice(WORDS)}")
        level = "error" if code.startswith("E0") else "warning"
        fname = f"{crate}/src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.rs"
        line = rng.randrange(1, 900)
        col = rng.randrange(1, 60)
        msgs.append((code, level, fname, line, text))
        rendered = f"{level}: {text}\n  --> {fname}:{line}:{col}\n   |\n"
        doc = {
            "reason": "compiler-message",
            "package_id": f"path+file:///home/ci/ledger/{crate}#0.{rng.randrange(9)}.0",
            "manifest_path": f"/home/ci/ledger/{crate}/Cargo.toml",
            "target": {
                "kind": ["lib"],
                "crate_types": ["lib"],
                "name": crate.replace("-", "_"),
                "src_path": f"/home/ci/ledger/{crate}/src/lib.rs",
                "edition": "2021",
                "doctest": True,
                "test": True,
            },
            "message": {
                "rendered": rendered,
                "$message_type": "diagnostic",
                "children": [
                    {
                        "children": [],
                        "code": None,
                        "level": "note",
                        "message": f"`#[warn({code.split('::')[-1]})]` on by default",
                        "rendered": None,
                        "spans": [],
                    }
                ],
                "code": {"code": code, "explanation": None},
                "level": level,
                "message": text,
                "spans": [
                    {
                        "byte_end": line * 40 + col + 9,
                        "byte_start": line * 40 + col,
                        "column_end": col + 9,
                        "column_start": col,
                        "expansion": None,
                        "file_name": fname,
                        "is_primary": True,
                        "label": None,
                        "line_end": line,
                        "line_start": line,
                        "suggested_replacement": None,
                        "suggestion_applicability": None,
                        "text": [
                            {
                                "highlight_end": col + 9,
                                "highlight_start": col,
                                "text": "        " + rng.choice(WORDS),
                            }
                        ],
                    }
                ],
            },
        }
        lines.append(json.dumps(doc))
        if k % 60 == 59:
            lines.append(
                json.dumps(
                    {
                        "reason": "compiler-artifact",
                        "package_id": f"registry+https://github.com/rust-lang/crates.io-index#"
                        f"{rng.choice(WORDS)}@1.{rng.randrange(9)}.0",
                        "fresh": True,
                        "filenames": [f"/home/ci/ledger/target/debug/deps/lib{k}.rlib"],
                    }
                )
            )
    lines.append(json.dumps({"reason": "build-finished", "success": False}))
    text = "\n".join(lines) + "\n"
    per = Counter(m[0] for m in msgs)
    a = rng.choice([m for m in msgs if m[0].startswith("E0")])
    return text, [
        Q("count", "how many errors did the build report?", sum(m[1] == "error" for m in msgs)),
        Q("top", "which lint fired most often?", per.most_common(1)[0][0]),
        Q(
            "count",
            "how many clippy::unwrap_used warnings are there?",
            per["clippy::unwrap_used"],
        ),
        Q("lookup", f"which file and line has the {a[0]} error '{a[4]}'?", (a[2], str(a[3]))),
    ]


def vmstat(rng: random.Random) -> tuple[str, list[Q]]:
    groups = (
        "procs -----------------------memory---------------------- ---swap-- -----io---- "
        "-system-- -------cpu------- -----timestamp-----"
    )
    head = (
        " r  b         swpd         free         buff        cache   si   so    bi    bo   in"
        "   cs  us  sy  id  wa  st                 UTC"
    )
    rows: list[tuple[int, ...]] = []
    stamps: list[str] = []
    out: list[str] = []
    for k in range(240):
        if k % 60 == 0:
            out += [groups, head]
        r = rng.choice([0, 1, 1, 2, 3, rng.randrange(4, 20)])
        us, sy, wa = (
            rng.randrange(0, 60),
            rng.randrange(0, 20),
            rng.choice([0, 0, 1, 2, rng.randrange(3, 40)]),
        )
        idle = max(0, 100 - us - sy - wa)
        row = (
            r,
            rng.randrange(0, 4),
            rng.randrange(0, 10**6),
            rng.randrange(10**5, 6 * 10**7),
            rng.randrange(10**4, 10**6),
            rng.randrange(10**6, 3 * 10**7),
            0,
            0,
            rng.randrange(0, 9000),
            rng.randrange(0, 20000),
            rng.randrange(100, 9000),
            rng.randrange(200, 30000),
            us,
            sy,
            idle,
            wa,
            0,
        )
        stamp = f"2024-07-11 14:{k // 60 + 10:02d}:{k % 60:02d}"
        rows.append(row)
        stamps.append(stamp)
        widths = (2, 2, 12, 12, 12, 12, 4, 4, 5, 5, 4, 4, 3, 3, 3, 3, 3)
        out.append(
            " ".join(str(v).rjust(w) for v, w in zip(row, widths, strict=True)) + " " + stamp
        )
    text = "\n".join(out) + "\n"
    pick = rng.randrange(len(rows))
    worst = max(range(len(rows)), key=lambda i: (rows[i][15], -i))
    return text, [
        Q("lookup", f"how much memory was free at {stamps[pick]}?", str(rows[pick][3])),
        Q("top", "at what time was iowait (wa) highest?", stamps[worst]),
        Q(
            "count",
            "how many samples had more than 4 runnable processes?",
            sum(r[0] > 4 for r in rows),
        ),
        Q("last", "what was the idle cpu in the last sample?", (stamps[-1], str(rows[-1][14]))),
    ]


def zpool_status(rng: random.Random) -> tuple[str, list[Q]]:
    out: list[str] = []
    devs: list[tuple[str, str, str, int, int, int]] = []
    pools: list[tuple[str, str, str]] = []
    for p in ["tank", "backup", "scratch", "media", "vmstore"]:
        degraded = rng.random() < 0.4
        scan = (
            f"scrub repaired {rng.randrange(0, 900)}K in {rng.randrange(1, 20):02d}:"
            f"{rng.randrange(60):02d}:{rng.randrange(60):02d} with {rng.randrange(0, 4)} errors "
            f"on Sun Jul  7 0{rng.randrange(1, 9)}:24:11 2024"
        )
        state = "DEGRADED" if degraded else "ONLINE"
        pools.append((p, state, scan))
        out += [f"  pool: {p}", f" state: {state}"]
        if degraded:
            out += [
                "status: One or more devices could not be used because the label is missing or",
                "\tinvalid.  Sufficient replicas exist for the pool to continue",
                "\tfunctioning in a degraded state.",
                "action: Replace the device using 'zpool replace'.",
                "   see: https://openzfs.github.io/openzfs-docs/msg/ZFS-8000-4J",
            ]
        out += [
            f"  scan: {scan}",
            "config:",
            "",
            "\tNAME                        STATE     READ WRITE CKSUM",
            f"\t{p:<27} {state:<9} {0:>4} {0:>5} {0:>5}",
        ]
        for v in range(rng.randrange(2, 5)):
            kind = rng.choice(["mirror", "raidz1", "raidz2"])
            vstate = "ONLINE"
            block = []
            for _ in range({"mirror": 2, "raidz1": 4, "raidz2": 6}[kind]):
                d = "ata-" + rng.choice(["WDC_WD120EFBX", "ST12000VN0008", "TOSHIBA_MG07"]) + "-"
                d += "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(8))
                st = "ONLINE"
                if degraded and rng.random() < 0.15:
                    st = rng.choice(["UNAVAIL", "FAULTED"])
                    vstate = "DEGRADED"
                rd, wr = rng.choice([0, 0, 0, rng.randrange(1, 50)]), rng.choice([0, 0, 0, 0, 3])
                ck = rng.choice([0, 0, 0, 0, rng.randrange(1, 200)])
                devs.append((p, d, st, rd, wr, ck))
                block.append(f"\t    {d:<23} {st:<9} {rd:>4} {wr:>5} {ck:>5}")
            out.append(f"\t  {kind}-{v:<20} {vstate:<9} {0:>4} {0:>5} {0:>5}")
            out += block
        errs = sum(d[5] for d in devs if d[0] == p)
        out += [
            "",
            "errors: No known data errors"
            if not errs
            else f"errors: {errs} data errors, use '-v' for a list",
            "",
        ]
    text = "\n".join(out) + "\n"
    a = rng.choice(devs)
    sc = rng.choice(pools)
    return text, [
        Q("lookup", f"what is the state of {a[1]}?", a[2]),
        Q("count", "how many devices have checksum errors?", sum(d[5] > 0 for d in devs)),
        Q(
            "list",
            "which pools are degraded?",
            tuple(p[0] for p in pools if p[1] == "DEGRADED") or ("ONLINE",),
        ),
        Q("lookup", f"what did the last scrub of {sc[0]} report?", sc[2]),
    ]


def bq_prettyjson(rng: random.Random) -> tuple[str, list[Q]]:
    countries = ["DE", "FR", "US", "BR", "JP", "IN", "NG", "SE", "CA", "MX"]
    ids = unique(rng, 700, lambda: f"cust_{rng.randrange(10**7):07d}")
    rows: list[dict[str, Any]] = []
    for cid in ids:
        rows.append(
            {
                "customer_id": cid,
                "signup_country": rng.choices(countries, [5, 3, 9, 2, 2, 3, 1, 1, 2, 1])[0],
                "plan_tier": rng.choice(["free", "starter", "pro", "enterprise"]),
                "lifetime_revenue_usd": f"{rng.uniform(0, 50_000):.2f}",
                "orders_count": str(rng.randrange(0, 400)),
                "first_order_date": f"20{rng.randrange(18, 25)}-{rng.randrange(1, 13):02d}-"
                f"{rng.randrange(1, 29):02d}",
                "churned": rng.choice([True, False, False]),
            }
        )
    text = json.dumps(rows, indent=2)
    a = rng.choice(rows)
    top = max(rows, key=lambda r: float(r["lifetime_revenue_usd"]))
    return text, [
        Q("lookup", f"what plan is {a['customer_id']} on?", a["plan_tier"]),
        Q(
            "count",
            "how many churned customers signed up in BR?",
            sum(r["churned"] and r["signup_country"] == "BR" for r in rows),
        ),
        Q("top", "which customer has the highest lifetime revenue?", top["customer_id"]),
        Q(
            "count",
            "how many distinct signup countries are there?",
            len({r["signup_country"] for r in rows}),
        ),
    ]


def lsblk_json(rng: random.Random) -> tuple[str, list[Q]]:
    devices: list[dict[str, Any]] = []
    flat: list[dict[str, Any]] = []
    mounts = [
        "/",
        "/boot",
        "/boot/efi",
        "/var/lib/docker",
        "/home",
        "/srv/data",
        "/var/log",
        "/opt",
        "/var/lib/postgresql",
        "/tmp",
        "/mnt/archive",
        "/var/cache",
    ]
    rng.shuffle(mounts)
    free_mounts = iter(mounts)
    for k in range(34):
        if k < 6:
            name = f"nvme{k}n1"
        elif k < 14:
            name = "sd" + "abcdefgh"[k - 6]
        else:
            name = f"loop{k - 14}"
        disk: dict[str, Any] = {
            "name": name,
            "maj:min": f"{259 if k < 6 else 8 if k < 14 else 7}:{k}",
            "rm": False,
            "size": f"{rng.choice([238.5, 476.9, 931.5, 1.8, 3.6, 7.3])}{rng.choice(['G', 'T'])}",
            "ro": name.startswith("loop"),
            "type": "loop" if name.startswith("loop") else "disk",
            "mountpoints": [f"/snap/{rng.choice(WORDS)}/{rng.randrange(100, 999)}"]
            if name.startswith("loop")
            else [None],
        }
        if not name.startswith("loop"):
            kids = []
            for pn in range(1, rng.randrange(2, 5)):
                part = f"{name}p{pn}" if name.startswith("nvme") else f"{name}{pn}"
                mp = next(free_mounts, None) if rng.random() < 0.7 else None
                kids.append(
                    {
                        "name": part,
                        "maj:min": f"{259 if k < 6 else 8}:{k * 8 + pn}",
                        "rm": False,
                        "size": f"{rng.randrange(1, 900)}.{rng.randrange(10)}G",
                        "ro": False,
                        "type": "part",
                        "mountpoints": [mp],
                    }
                )
            disk["children"] = kids
            flat += kids
        devices.append(disk)
        flat.append(disk)
    text = json.dumps({"blockdevices": devices}, indent=3)
    parts = [d for d in flat if d["type"] == "part"]
    a = rng.choice(parts)
    mounted = [d for d in parts if d["mountpoints"][0]]
    m = rng.choice(mounted)
    return text, [
        Q("lookup", f"what is the size of {a['name']}?", a["size"]),
        Q("lookup", f"which device is mounted at {m['mountpoints'][0]}?", m["name"]),
        Q("count", "how many disks are there (type disk)?", sum(d["type"] == "disk" for d in flat)),
        Q("count", "how many partitions are there?", len(parts)),
    ]


def nmap_grepable(rng: random.Random) -> tuple[str, list[Q]]:
    services = [
        (22, "ssh", "OpenSSH 9.2p1 Debian 2+deb12u2"),
        (80, "http", "nginx 1.24.0"),
        (443, "https", "nginx 1.24.0"),
        (3306, "mysql", "MySQL 8.0.36"),
        (5432, "postgresql", "PostgreSQL DB 15.4"),
        (6379, "redis", "Redis key-value store 7.2.4"),
        (8080, "http-proxy", "Jetty 9.4.53"),
        (9100, "jetdirect", ""),
        (25, "smtp", "Postfix smtpd"),
        (53, "domain", "dnsmasq 2.89"),
    ]
    ips = unique(rng, 90, lambda: f"10.20.{rng.randrange(0, 4)}.{rng.randrange(2, 255)}")
    out = ["# Nmap 7.94 scan initiated Thu Jul 11 09:12:03 2024 as: nmap -sV -oG - 10.20.0.0/22"]
    hosts: list[tuple[str, str, list[int]]] = []
    for ip in ips:
        name = (
            f"{rng.choice(WORDS)}-{rng.randrange(1, 30):02d}.lab.internal"
            if rng.random() < 0.8
            else ""
        )
        up = rng.random() < 0.85
        out.append(f"Host: {ip} ({name})\tStatus: {'Up' if up else 'Down'}")
        if not up:
            continue
        opened = sorted(rng.sample(services, rng.randrange(1, 6)))
        ports = ", ".join(f"{p}/open/tcp//{s}//{v}/" for p, s, v in opened)
        out.append(
            f"Host: {ip} ({name})\tPorts: {ports}\tIgnored State: closed ({1000 - len(opened)})"
        )
        hosts.append((ip, name, [p for p, _, _ in opened]))
    out.append(
        f"# Nmap done at Thu Jul 11 09:19:44 2024 -- 1024 IP addresses ({sum(1 for _ in hosts)} "
        "hosts up) scanned in 461.22 seconds"
    )
    text = "\n".join(out) + "\n"
    a = rng.choice(hosts)
    named = rng.choice([h for h in hosts if h[1]])
    return text, [
        Q("list", f"which ports are open on {a[0]}?", tuple(str(p) for p in a[2])),
        Q("count", "how many hosts have port 3306 open?", sum(3306 in h[2] for h in hosts)),
        Q("lookup", f"what is the IP of {named[1]}?", named[0]),
        Q("count", "how many hosts are down?", sum(1 for ln in out if ln.endswith("Status: Down"))),
    ]


def newman_report(rng: random.Random) -> tuple[str, list[Q]]:
    folders = ["Auth", "Catalog", "Cart", "Checkout", "Admin"]
    execs: list[dict[str, Any]] = []
    recs: list[tuple[str, int, int, int]] = []
    names = unique(
        rng,
        160,
        lambda: (
            f"{rng.choice(['GET', 'POST', 'PUT', 'DELETE'])} "
            f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
        ),
    )
    failed_asserts = 0
    for n in names:
        code = rng.choices([200, 201, 204, 400, 401, 404, 500], [40, 8, 4, 3, 2, 3, 2])[0]
        ms = rng.randrange(8, 4000)
        asserts = []
        nfail = 0
        for t in rng.sample(
            [
                "Status code is 2xx",
                "Response time is below 1000ms",
                "Body matches schema",
                "Has request id header",
            ],
            rng.randrange(1, 5),
        ):
            bad = (t == "Status code is 2xx" and code >= 300) or (
                t == "Response time is below 1000ms" and ms >= 1000
            )
            entry: dict[str, Any] = {"assertion": t, "skipped": False}
            if bad:
                nfail += 1
                entry["error"] = {
                    "name": "AssertionError",
                    "index": 0,
                    "test": t,
                    "message": f"expected {code} to be below 300"
                    if "Status" in t
                    else f"expected {ms} to be below 1000",
                    "stack": "AssertionError: ...",
                }
            asserts.append(entry)
        failed_asserts += nfail
        method, path = n.split(" ", 1)
        execs.append(
            {
                "cursor": {"ref": "".join(rng.choice(_HEX) for _ in range(8)), "iteration": 0},
                "item": {"id": "".join(rng.choice(_HEX) for _ in range(12)), "name": n},
                "request": {
                    "url": {
                        "protocol": "https",
                        "host": ["api", "shop", "test"],
                        "path": path.split(" "),
                    },
                    "method": method,
                },
                "response": {
                    "id": "".join(rng.choice(_HEX) for _ in range(12)),
                    "status": {
                        200: "OK",
                        201: "Created",
                        204: "No Content",
                        400: "Bad Request",
                        401: "Unauthorized",
                        404: "Not Found",
                        500: "Internal Server Error",
                    }[code],
                    "code": code,
                    "responseTime": ms,
                    "responseSize": rng.randrange(0, 90000),
                },
                "assertions": asserts,
            }
        )
        recs.append((n, code, ms, nfail))
    doc = {
        "collection": {
            "info": {
                "name": "Shop API smoke",
                "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json",
            },
            "item": [{"name": f} for f in folders],
        },
        "run": {
            "stats": {
                "iterations": {"total": 1, "pending": 0, "failed": 0},
                "requests": {"total": len(execs), "pending": 0, "failed": 0},
                "assertions": {
                    "total": sum(len(e["assertions"]) for e in execs),
                    "pending": 0,
                    "failed": failed_asserts,
                },
            },
            "timings": {
                "responseAverage": round(sum(r[2] for r in recs) / len(recs), 3),
                "started": 1720689123000,
                "completed": 1720689301000,
            },
            "executions": execs,
        },
    }
    text = json.dumps(doc, indent=2)
    a = rng.choice(recs)
    slow = max(recs, key=lambda r: r[2])
    return text, [
        Q("lookup", f"what was the response time of '{a[0]}'?", str(a[2])),
        Q("count", "how many requests returned 500?", sum(r[1] == 500 for r in recs)),
        Q("top", "which request was the slowest?", slow[0]),
        Q("lookup", "how many assertions failed in total?", str(failed_asserts)),
    ]


def dmesg(rng: random.Random) -> tuple[str, list[Q]]:
    t = 0.0
    out: list[str] = []
    io_err: Counter[str] = Counter()
    killed: list[tuple[str, str]] = []
    link: list[tuple[str, str]] = []
    for _ in range(1400):
        t += rng.uniform(0.0001, 30)
        ts = f"[{t:12.6f}]"
        kind = rng.choices(["noise", "io", "oom", "link", "usb", "audit"], [60, 6, 1, 3, 3, 6])[0]
        if kind == "io":
            d = rng.choice(["sdb", "sdc", "sdd", "nvme1n1"])
            io_err[d] += 1
            out.append(
                f"{ts} blk_update_request: I/O error, dev {d}, sector {rng.randrange(10**9)} "
                f"op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0"
            )
        elif kind == "oom":
            pid = rng.randrange(1000, 99999)
            proc = rng.choice(["java", "postgres", "node", "python3", "chrome", "clickhouse"])
            killed.append((ts, proc))
            out.append(
                f"{ts} Out of memory: Killed process {pid} ({proc}) "
                f"total-vm:{rng.randrange(10**6, 10**8)}kB, "
                f"anon-rss:{rng.randrange(10**5, 10**7)}kB, file-rss:0kB, shmem-rss:0kB, "
                f"UID:{rng.randrange(0, 2000)} pgtables:{rng.randrange(1000, 90000)}kB "
                "oom_score_adj:0"
            )
        elif kind == "link":
            nic = rng.choice(["eno1", "eno2", "enp65s0f0", "enp65s0f1"])
            state = rng.choice(["Up 10000 Mbps Full Duplex, Flow Control: Rx/Tx", "Down"])
            if state == "Down":
                link.append((ts, nic))
            out.append(f"{ts} ixgbe 0000:41:00.{rng.randrange(2)} {nic}: NIC Link is {state}")
        elif kind == "usb":
            out.append(
                f"{ts} usb {rng.randrange(1, 4)}-{rng.randrange(1, 9)}: new high-speed "
                f"USB device number {rng.randrange(2, 30)} using xhci_hcd"
            )
        elif kind == "audit":
            out.append(
                f"{ts} audit: type=1400 audit({1720689123 + int(t)}.{rng.randrange(1000):03d}:"
                f"{rng.randrange(10, 999)}): "
                f'apparmor="DENIED" operation="open" profile="snap.{rng.choice(WORDS)}.'
                f'{rng.choice(WORDS)}" '
                f'name="/proc/{rng.randrange(1, 9999)}/mounts" pid={rng.randrange(1000, 99999)} '
                f'comm="{rng.choice(WORDS)}"'
            )
        else:
            out.append(f"{ts} {rng.choice(_NOISE)} {rng.choice(WORDS)}-{rng.randrange(100)}")
    if not killed:
        killed.append((out[-1].split("]")[0] + "]", "none"))
    if not link:
        link.append(("", "none"))
    text = "\n".join(out) + "\n"
    nic_ts, nic = link[-1]
    return text, [
        Q("count", "how many I/O errors were logged for sdc?", io_err["sdc"]),
        Q("last", "which process did the OOM killer kill last?", killed[-1][1]),
        Q("top", "which device logged the most I/O errors?", io_err.most_common(1)[0][0]),
        Q("last", f"when did {nic} last go down?", nic_ts.strip("[] ")),
    ]


def netstat_s(rng: random.Random) -> tuple[str, list[Q]]:
    sections = {
        "Ip": [
            "Forwarding: 2",
            "{} total packets received",
            "{} with invalid addresses",
            "{} forwarded",
            "{} incoming packets discarded",
            "{} incoming packets delivered",
            "{} requests sent out",
            "{} outgoing packets dropped",
            "{} dropped because of missing route",
        ],
        "Icmp": [
            "{} ICMP messages received",
            "{} input ICMP message failed",
            "ICMP input histogram:",
            "    destination unreachable: {}",
            "    echo requests: {}",
            "    echo replies: {}",
            "{} ICMP messages sent",
            "{} ICMP messages failed",
        ],
        "Tcp": [
            "{} active connection openings",
            "{} passive connection openings",
            "{} failed connection attempts",
            "{} connection resets received",
            "{} connections established",
            "{} segments received",
            "{} segments sent out",
            "{} segments retransmitted",
            "{} bad segments received",
            "{} resets sent",
        ],
        "Udp": [
            "{} packets received",
            "{} packets to unknown port received",
            "{} packet receive errors",
            "{} packets sent",
            "{} receive buffer errors",
            "{} send buffer errors",
            "IgnoredMulti: {}",
        ],
        "TcpExt": [
            "{} resets received for embryonic SYN_RECV sockets",
            "{} TCP sockets finished time wait in fast timer",
            "{} delayed acks sent",
            "{} times the listen queue of a socket overflowed",
            "{} SYNs to LISTEN sockets dropped",
            "{} packet headers predicted",
            "{} acknowledgments not containing data payload received",
            "{} predicted acknowledgments",
            "TCPTimeouts: {}",
            "TCPLossProbes: {}",
            "{} connections reset due to unexpected data",
            "{} connections aborted due to timeout",
            "TCPRcvCoalesce: {}",
            "TCPOFOQueue: {}",
            "TCPAutoCorking: {}",
            "TCPSynRetrans: {}",
        ],
        "UdpLite": [],
        "IpExt": [
            "InMcastPkts: {}",
            "OutMcastPkts: {}",
            "InBcastPkts: {}",
            "InOctets: {}",
            "OutOctets: {}",
            "InNoECTPkts: {}",
        ],
        "MPTcpExt": [],
    }
    out: list[str] = []
    vals: dict[tuple[str, str], str] = {}
    for sec, lines in sections.items():
        out.append(f"{sec}:")
        for ln in lines:
            v = str(rng.randrange(0, 10**9)) if "{}" in ln else ""
            shown = ln.format(v)
            indent = "    " if not ln.startswith("    ") else "        "
            out.append(indent + shown.strip())
            if v:
                vals[(sec, ln.replace("{}", "").strip(" :"))] = v
    text = "\n".join(out) + "\n"
    tcp_rtx = vals[("Tcp", "segments retransmitted")]
    udp_err = vals[("Udp", "packet receive errors")]
    ovf = vals[("TcpExt", "times the listen queue of a socket overflowed")]
    tcp = tuple(ln.strip() for ln in out[out.index("Tcp:") + 1 : out.index("Udp:")])
    return text, [
        Q("lookup", "how many TCP segments were retransmitted?", tcp_rtx),
        Q("lookup", "how many UDP packet receive errors were there?", udp_err),
        Q("lookup", "how many times did the listen queue of a socket overflow?", ovf),
        Q("section", "show the Tcp section", tcp),
    ]


def xunit_net(rng: random.Random) -> tuple[str, list[Q]]:
    classes = unique(
        rng,
        40,
        lambda: (
            f"Ledger.Tests.{rng.choice(WORDS).title()}"
            f"{rng.choice(['Service', 'Repository', 'Controller', 'Mapper'])}Tests"
        ),
    )
    tests: list[tuple[str, str, str, str]] = []
    body: list[str] = []
    for c in classes:
        body.append(
            '      <collection total="0" passed="0" failed="0" skipped="0" name="Test '
            f'collection for {c}" time="0.1">'
        )
        for _ in range(rng.randrange(3, 14)):
            m = f"{rng.choice(['Should', 'When', 'Given'])}_{rng.choice(WORDS).title()}_"
            m += f"{rng.choice(WORDS).title()}{rng.randrange(100)}"
            res = rng.choices(["Pass", "Fail", "Skip"], [20, 2, 1])[0]
            tm = f"{rng.uniform(0.0001, 4):.7f}"
            owner = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            tests.append((f"{c}.{m}", res, tm, owner))
            open_ = (
                f'        <test name="{c}.{m}" type="{c}" method="{m}" time="{tm}" result="{res}">'
            )
            if res == "Pass":
                body.append(open_[:-1] + ">")
                body.append(f'          <traits><trait name="Owner" value="{owner}" /></traits>')
                body.append("        </test>")
            elif res == "Skip":
                body += [
                    open_,
                    "          <reason><![CDATA[Flaky on CI, see "
                    f"LEDGER-{rng.randrange(100, 999)}]]></reason>",
                    "        </test>",
                ]
            else:
                body += [
                    open_,
                    '          <failure exception-type="Xunit.Sdk.EqualException">',
                    "            <message><![CDATA[Assert.Equal() Failure\nExpected: "
                    f"{rng.randrange(100)}\nActual:   {rng.randrange(100)}]]></message>",
                    f"            <stack-trace><![CDATA[   at {c}.{m}() in "
                    f"/src/tests/{c.split('.')[-1]}.cs:line "
                    f"{rng.randrange(10, 400)}]]></stack-trace>",
                    "          </failure>",
                    "        </test>",
                ]
        body.append("      </collection>")
    npass = sum(t[1] == "Pass" for t in tests)
    nfail = sum(t[1] == "Fail" for t in tests)
    head = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<assemblies timestamp="07/11/2024 09:30:12">',
        '  <assembly name="/src/tests/bin/Release/net8.0/Ledger.Tests.dll" run-date="2024-07-11" '
        f'run-time="09:30:12" config-file="Ledger.Tests.dll.config" total="{len(tests)}" '
        f'passed="{npass}" failed="{nfail}" skipped="{len(tests) - npass - nfail}" '
        f'time="{sum(float(t[2]) for t in tests):.3f}" errors="0">',
        "    <errors />",
    ]
    text = "\n".join(head + body + ["  </assembly>", "</assemblies>"]) + "\n"
    a = rng.choice(tests)
    slow = max(tests, key=lambda t: float(t[2]))
    failed = [t[0] for t in tests if t[1] == "Fail"]
    return text, [
        Q("count", "how many tests failed?", nfail),
        Q("lookup", f"how long did {a[0]} take?", a[2]),
        Q("top", "which test was the slowest?", slow[0]),
        Q("list", "which tests failed?", tuple(failed)),
    ]


PROBE7 = {
    "clippy-json": clippy_json,
    "vmstat": vmstat,
    "zpool": zpool_status,
    "bq-json": bq_prettyjson,
    "lsblk-j": lsblk_json,
    "nmap-og": nmap_grepable,
    "newman": newman_report,
    "dmesg": dmesg,
    "netstat-s": netstat_s,
    "xunit-net": xunit_net,
}
