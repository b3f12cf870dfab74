"""A unified diff read as one record per file, and a ``git log --stat`` as one record per
commit, so counts, lookups and extremes over them are exact."""

from __future__ import annotations

import hashlib

from taskloom.client import Taskloom
from taskloom.domain.lines import split_lines
from taskloom.guard.diffs import diff_records
from tests.test_guard_text_records import ask

PEOPLE = ("Wren Tallis", "Odo Marsh", "Pia Lund")


def _diff() -> tuple[str, dict[str, tuple[int, int]]]:
    out, sizes = [], {}
    for i in range(40):
        path = f"pkg/mod{i % 5}/unit_{i}.rs"
        added, removed = (i * 7) % 11 + (30 if i == 23 else 0), (i * 3) % 5
        body = [f"+let a{k} = {k};" for k in range(added)]
        body += [f"-let b{k} = {k};" for k in range(removed)]
        body += ["-- a removed line that reads like a header"] if i == 9 else []
        body += [" fn keep() {}"]
        old = removed + (i == 9) + 1
        head = [f"diff --git a/{path} b/{path}"]
        head += ["new file mode 100644"] if i == 30 else []
        head += ["index 1a2b3c4..5d6e7f8 100644", f"--- a/{path}", f"+++ b/{path}"]
        out += [*head, f"@@ -10,{old} +10,{added + 1} @@ fn main()", *body]
        sizes[path] = (added, removed + (i == 9))
    return "\n".join(out) + "\n", sizes


def test_a_unified_diff_is_read_as_one_record_per_file(tl: Taskloom) -> None:
    """A diff was no table: "how many files does this diff change?" got a ranking of
    hunks, and no question could read a file's added lines."""
    text, sizes = _diff()
    count, most, new = ask(
        tl,
        text,
        "how many files does this diff change?",
        "which file has the most added lines?",
        "how many files have status added?",
    )
    assert "Exact count: 40 (40 rows of this diff table)" in count
    assert "pkg/mod3/unit_23.rs" in most.split("---")[1]
    assert "Exact count: 1 " in new
    found = diff_records(split_lines(text))
    assert found is not None and found[0] == "files"
    assert {r["path"]: (r["added"], r["removed"]) for r in found[1]} == sizes


def _log() -> tuple[str, list[tuple[str, str, list[str]]]]:
    commits, parts = [], []
    for i in range(60):
        sha = hashlib.sha1(f"c{i}".encode()).hexdigest()
        who = PEOPLE[i % 3 if i % 7 else 0]
        files = [f"src/area{i % 4}/part_{i}_{k}.py" for k in range(i % 3 + 1)]
        commits.append((sha, who, files))
        stat = "\n".join(f" {f:<32} | {k + 3:>2} +++" for k, f in enumerate(files))
        total = sum(k + 3 for k in range(len(files)))
        parts.append(
            f"commit {sha}\nAuthor: {who} <{who.split()[0].lower()}@example.test>\n"
            f"Date:   Mon Jan {i % 28 + 1} 10:00:00 2024 +0000\n\n    change number {i}\n\n"
            f"{stat}\n {len(files)} files changed, {total} insertions(+)\n"
        )
    return "\n".join(parts), commits


def test_a_git_log_with_stats_is_read_as_one_record_per_commit(tl: Taskloom) -> None:
    """A log was no table: "how many commits did Odo Marsh author?" got a ranking of three
    commits, and "which files did commit 1a2b… touch?" a ranking of stat lines."""
    text, commits = _log()
    sha, _who, files = commits[41]
    by_odo = sum(1 for c in commits if c[1] == "Odo Marsh")
    count, touched, who = ask(
        tl,
        text,
        "how many commits did Odo Marsh author?",
        f"which files did commit {sha[:10]} touch?",
        f"who is the author of commit {sha[:12]}?",
    )
    assert f"Exact count: {by_odo} " in count and "author == 'Odo Marsh'" in count
    assert f"commit == '{sha}'" in touched and all(f in touched for f in files)
    assert commits[41][1] in who
