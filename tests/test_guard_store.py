"""The guard over a real store: pass-through, compaction, stashing, TTL, quota, isolation."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import timedelta

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput, NotFound
from taskloom.guard import GuardConfig
from tests.conftest import FakeClock

SMALL = GuardConfig(threshold_tokens=200, compacted_max_tokens=100, preview_chars=300)


def issues(n: int, offset: int = 0) -> list[dict[str, object]]:
    return [
        {
            "number": offset + i,
            "id": 9000 + offset + i,
            "title": f"Bug report {offset + i}: crash when saving file-{offset + i}.txt",
            "state": "open" if i % 3 else "closed",
            "user": {"login": f"user{i % 4}", "id": 100 + i % 4},
            "labels": [{"name": "bug"}] if i % 2 else [],
            "body": "Steps to reproduce: open the app, press save, watch it fail. " * 3,
        }
        for i in range(n)
    ]


def test_small_output_passes_through_minified_or_exact(tl: Taskloom) -> None:
    """A small HTML document passes as it is: cleaning it would save less than the header
    that names its stored original costs."""
    g = tl.guard("t1", SMALL)
    page = "<!DOCTYPE html><p>Hello   <b>world</b></p>"
    assert g.wrap("web", page) == page
    assert g.wrap("api", '{"a": 1,  "b": [1, 2]}') == '{"a":1,"b":[1,2]}'
    assert g.results() == []


@pytest.mark.parametrize(
    "source",
    [
        '<template>\n  <ul><li v-for="i in items">{{ i }}</li></ul>\n</template>\n'
        "<script>\nexport default { data() { return { items: [] } } }\n</script>\n",
        'const App = () => (\n  <div className="app">\n    <p>{count}   left</p>\n  </div>\n);\n',
        "# Title\n\nUse <kbd>Ctrl</kbd>+<kbd>C</kbd>, then `<div>`.\n\n\n\nEnd\n",
        "all:\n\tgcc -o app   main.c\t# tabs matter\n",
    ],
)
def test_source_and_markdown_pass_through_exactly(tl: Taskloom, source: str) -> None:
    """Components, JSX and Markdown were stripped as HTML (a whole <script> block went), and
    spaces collapsed: an agent editing the file by the text it read could not match it, and
    what cleaning removed from a large component passed through lost, not stashed."""
    assert tl.guard("t1", SMALL).wrap("read_file", source) == source


def test_large_output_is_stashed_behind_a_stable_placeholder(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    payload = json.dumps(issues(40), indent=2)
    first = g.stash("github_issues", payload)
    assert first.mode == "stashed" and first.result_id
    assert first.text == g.wrap("github_issues", payload)  # same output, same text
    assert first.text == tl.guard("t1", SMALL).wrap("github_issues", payload)
    assert "JSON array of 40 items" in first.text
    assert f"{len(payload.encode()):,} bytes" in first.text
    [row] = g.results()
    assert row["result_id"] == first.result_id and row["tool_name"] == "github_issues"
    assert g.show(first.result_id)["placeholder"] == first.text


def test_compactable_json_is_shown_compacted_with_a_report(tl: Taskloom) -> None:
    cfg = GuardConfig(threshold_tokens=150, compacted_max_tokens=400)
    repo = {"id": 1, "url": "https://api.x/r/1", "hooks_url": "https://api.x/r/1/hooks"}
    payload = json.dumps([{"n": i, "repo": repo, "x": None, "pad": "p" * 40} for i in range(8)])
    out = tl.guard("t1", cfg).stash("api", payload)
    assert out.mode == "compacted"
    assert "derivable *_url fields" in out.text and "nulls" in out.text
    assert out.result_id and tl.guard("t1", cfg).read(out.result_id, path="$[7].x") == (
        "[$[7].x · 1 match]\n$[7].x: null"
    )


def test_other_threads_cannot_see_a_result(tl: Taskloom) -> None:
    rid = tl.guard("t1", SMALL).stash("api", json.dumps(issues(40))).result_id
    assert rid is not None
    with pytest.raises(NotFound, match="no stashed result"):
        tl.guard("t2", SMALL).read(rid)
    assert tl.guard("t2", SMALL).results() == []


def test_ttl_expiry(tl_fixed: Taskloom, clock: FakeClock) -> None:
    cfg = GuardConfig(threshold_tokens=200, ttl=timedelta(hours=1))
    g = tl_fixed.guard("t1", cfg)
    rid = g.stash("api", json.dumps(issues(40))).result_id
    assert rid is not None
    clock.advance(3599)
    assert g.read(rid, lines="1-1")
    clock.advance(2)
    with pytest.raises(NotFound):
        g.read(rid)
    g.stash("api", json.dumps(issues(40, offset=100)))  # the next write purges and logs
    assert any(h["action"] == "expired" and h["result_id"] == rid for h in g.history())


def test_quota_evicts_in_order_and_logs_it(tl_fixed: Taskloom, clock: FakeClock) -> None:
    cfg = GuardConfig(threshold_tokens=200, max_entries=2)
    g = tl_fixed.guard("t1", cfg)
    rids = []
    for i in range(3):
        rids.append(g.stash("api", json.dumps(issues(40, offset=100 * i))).result_id)
        clock.advance(1)
    assert [r["result_id"] for r in g.results()] == rids[1:]
    with pytest.raises(NotFound, match=r"evicted .*least recently stored first"):
        g.read(rids[0] or "")
    assert tl_fixed.guard("t2", cfg).results() == []


def test_byte_quota(tl_fixed: Taskloom, clock: FakeClock) -> None:
    payloads = [json.dumps(issues(40, offset=1000 + i)) for i in range(3)]
    cfg = GuardConfig(threshold_tokens=200, quota_bytes=len(payloads[1] + payloads[2]))
    g = tl_fixed.guard("t1", cfg)
    for payload in payloads:
        g.stash("api", payload)
        clock.advance(1)
    assert len(g.results()) == 2
    assert [h["action"] for h in g.history()].count("evicted") == 1


def test_read_slices(tl: Taskloom) -> None:
    g = tl.guard("t1", GuardConfig(threshold_tokens=200, read_cap_tokens=300))
    rid = g.stash("api", json.dumps(issues(40))).result_id or ""
    assert '"title": "Bug report 3: crash when saving file-3.txt"' in g.read(rid, path="$[3]")
    closed = g.read(rid, path="$[?(@.state=='closed')].number")
    assert "14 matches" in closed and "\n$[3].number: 3\n" in closed
    page1, page2 = g.read(rid, page=1), g.read(rid, page=2)
    assert page1.startswith("[lines 1-") and "more lines: read_result(..., page=2)" in page1
    assert page2.splitlines()[1] not in page1.splitlines()[1:]
    assert g.read(rid, lines="2-3").splitlines()[1:] == ["  {", '    "number": 0,']
    for bad, msg in [
        ({"lines": "9-3"}, "empty"),
        ({"lines": "abc"}, "must look like"),
        ({"path": "$[3]", "lines": "1-2"}, "one of"),
        ({"path": "$.nope"}, "matches nothing"),
        ({"page": 10_000}, "past the end"),
    ]:
        with pytest.raises(InvalidInput, match=msg):
            g.read(rid, **bad)  # type: ignore[arg-type]


def test_extract_local_methods_name_their_source(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    rid = g.stash("api", json.dumps(issues(40))).result_id or ""
    exact = g.extract(rid, "title of the issue with number 17")
    assert "method: exact" in exact and "$[?@.number==17].title" in exact
    assert "Bug report 17: crash when saving file-17.txt" in exact
    ranked = g.extract(rid, "crash saving file-17.txt")
    assert "method: local ranking" in ranked and "--- $[17]" in ranked
    by_path = g.extract(rid, "$[?(@.number==5)].user.login")
    assert '--- $[5].user.login\n"user1"' in by_path
    by_regex = g.extract(rid, "/file-2[0-9]\\.txt/")
    assert "method: regex" in by_regex and "10 of 10 matches" in by_regex
    nothing = g.extract(rid, "zebra")
    assert "no match" in nothing


def test_a_regex_that_backtracks_without_end_is_stopped(tl: Taskloom) -> None:
    """A model's ``(a+)+$`` on a long line held the interpreter, and with it every thread
    of the server, for good; it now stops after a second with an error the model can act on."""
    g = tl.guard("t1", SMALL)
    rid = g.stash("api", json.dumps([{"title": "a" * 30000 + "b"}, *issues(40)])).result_id
    with pytest.raises(InvalidInput, match=r"took over 1 s on this result: simplify it"):
        g.extract(rid or "", "/(a+)+$/")
    assert "method: regex" in g.extract(rid or "", "/Bug report 1[0-2]:/i")


def test_text_results_are_cleaned_stashed_and_searchable(tl: Taskloom) -> None:
    log_lines = [
        f"2026-01-01 12:00:{i % 60:02d} INFO worker-{i % 7} step {i} ok" for i in range(300)
    ]
    log_lines[211] = "2026-01-01 12:03:31 ERROR worker-3 disk full on /var/lib/db (errno 28)"
    g = tl.guard("t1", SMALL)
    out = g.stash("bash", "\n".join(log_lines))
    assert out.mode == "stashed" and "text, 300 lines" in out.text
    found = g.extract(out.result_id or "", "disk full error")
    assert "disk full on /var/lib/db" in found and "lines 2" in found
    assert g.read(out.result_id or "", lines="212-212").endswith("(errno 28)")


def test_empty_arguments_are_rejected(make_tl: Callable[..., Taskloom]) -> None:
    g = make_tl().guard("t1")
    with pytest.raises(InvalidInput):
        g.wrap("", "x")
    with pytest.raises(InvalidInput):
        g.extract("res_x", " ")
    with pytest.raises(InvalidInput):
        g.read("")


def test_async_twin(tl: Taskloom) -> None:
    async def go() -> str:
        return str(await tl.aio.guard("t1", SMALL).wrap("api", json.dumps(issues(40))))

    text = asyncio.run(go())
    assert text == tl.guard("t1", SMALL).wrap("api", json.dumps(issues(40)))


def pages(read: Callable[[int], str]) -> list[str]:
    """Every page of a read, until the guard says it is past the end."""
    out: list[str] = []
    while True:
        try:
            out.append(read(len(out) + 1))
        except InvalidInput as exc:
            assert "past the end" in str(exc)
            return out


def joined(replies: list[str]) -> str:
    """The bodies of consecutive replies, rejoined: a newline unless a line was split between."""
    text = ""
    for i, reply in enumerate(replies):
        if i and "the rest of line" not in replies[i - 1].split("\n", 1)[0]:
            text += "\n"
        text += reply.split("\n", 1)[1]
    return text


def test_a_line_longer_than_the_cap_is_split_without_breaking_characters(tl: Taskloom) -> None:
    cap = 300
    g = tl.guard("t1", GuardConfig(threshold_tokens=200, read_cap_tokens=cap))
    line = " ".join(f"tok{i} 日本語🎉é" for i in range(3000))
    text = "short one\nshort two\n" + line + "\nshort four"
    rid = g.stash("logs", text).result_id or ""
    replies = pages(lambda n: g.read(rid, page=n))
    assert len(replies) > 10 and max(g.count(r) for r in replies) <= cap
    assert joined(replies) == text
    assert replies[0].startswith("[lines 1-2 of 4; 2 more lines: read_result(..., page=2)]")
    assert replies[1].startswith("[lines 3-3 of 4, chars 1-")
    assert "the rest of line 3 (" in replies[1] and "page=3)]" in replies[1]

    head, body = g.read(rid, lines="3-3").split("\n", 1)
    assert g.count(head + "\n" + body) <= cap and body == replies[1].split("\n", 1)[1]
    assert "line 3 is longer than the token cap, so it is split" in head
    assert head.endswith(": read_result(..., page=3)]")


def test_the_smallest_cap_still_fits_its_header(tl: Taskloom) -> None:
    with pytest.raises(InvalidInput, match="read_cap_tokens must be at least 200"):
        GuardConfig(read_cap_tokens=20)
    g = tl.guard("t1", GuardConfig(threshold_tokens=200, read_cap_tokens=200))
    rid = g.stash("api", {"a_rather_long_key_name": "a b " * 3000}).result_id or ""
    for path in ("$.a_rather_long_key_name", "$..a_rather_long_key_name"):
        replies = pages(lambda n, path=path: g.read(rid, path=path, page=n))
        assert max(g.count(r) for r in replies) <= 200
    assert max(g.count(r) for r in pages(lambda n: g.read(rid, page=n))) <= 200
    with pytest.raises(InvalidInput, match="a cap of at least 200 tokens"):
        g.read(rid, max_tokens=50)


def test_a_long_value_read_by_path_is_paged(tl: Taskloom) -> None:
    cap = 300
    g = tl.guard("t1", GuardConfig(threshold_tokens=200, read_cap_tokens=cap))
    blob = "a b " * 6000
    rid = g.stash("api", {"blob": blob, "n": 1}).result_id or ""
    first = g.read(rid, path="$.blob")
    assert g.count(first) <= cap
    assert 'read_result(..., path="$.blob", page=2)' in first.split("\n", 1)[0]
    replies = pages(lambda n: g.read(rid, path="$.blob", page=n))
    assert replies[0] == first and max(g.count(r) for r in replies) <= cap
    assert joined(replies) == "$.blob: " + json.dumps(blob)


def test_unquoted_filter_value_says_how_to_write_it(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    rid = g.stash("api", json.dumps(issues(40))).result_id or ""
    for query, fixed in [
        ("$[?(@.state==open)]", "$[?(@.state=='open')]"),
        ("$.nope[?(@.id==x)]", "$.nope[?(@.id=='x')]"),
    ]:
        for call in (g.read, g.extract):
            with pytest.raises(InvalidInput) as caught:
                call(rid, path=query) if call == g.read else call(rid, query)
            assert f"Did you mean {fixed} (a string value is quoted)" in str(caught.value)
            assert "at position " in str(caught.value)
    assert "14 matches" in g.read(rid, path='$[?(@.state=="closed")].number')
    assert "1 match" in g.read(rid, path="$[?(@.number==5)].title")


def test_quota_evicts_the_least_recently_stored(tl_fixed: Taskloom, clock: FakeClock) -> None:
    g = tl_fixed.guard("t1", GuardConfig(threshold_tokens=200, max_entries=2))
    payloads = [json.dumps(issues(40, offset=100 * i)) for i in range(3)]
    a = g.stash("api", payloads[0]).result_id or ""
    clock.advance(1)
    b = g.stash("api", payloads[1]).result_id or ""
    clock.advance(1)
    assert g.stash("api", payloads[0]).result_id == a  # seen again: its TTL is refreshed
    clock.advance(1)
    c = g.stash("api", payloads[2]).result_id or ""
    assert {r["result_id"] for r in g.results()} == {a, c}
    with pytest.raises(NotFound, match=r"evicted .*least recently stored first"):
        g.read(b)


def test_json_line_count_is_the_one_read_result_numbers(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    for output in (issues(300), json.dumps(issues(300)), json.dumps(issues(300), indent=4)):
        out = g.stash("api", output)
        total = len(json.dumps(issues(300), indent=2, ensure_ascii=False).split("\n"))
        assert f" · {total:,} lines]" in out.text.split("\n", 1)[0]
        assert g.read(out.result_id or "", lines=f"{total}-").startswith(
            f"[lines {total}-{total} of {total} "
        )
        assert g.show(out.result_id or "")["lines"] == total


def test_read_errors_name_the_end_and_the_expiry(tl_fixed: Taskloom, clock: FakeClock) -> None:
    g = tl_fixed.guard("t1", GuardConfig(threshold_tokens=200, ttl=timedelta(hours=1)))
    rid = g.stash("log", "\n".join(f"line {i} of the log, with words" for i in range(200)))
    assert rid.result_id is not None
    with pytest.raises(
        InvalidInput, match=r"line 201 is past the end \(the result has 200 lines\)"
    ):
        g.read(rid.result_id, lines="201-")
    with pytest.raises(InvalidInput, match="pages are numbered from 1"):
        g.read(rid.result_id, page=0)
    clock.advance(3601)
    with pytest.raises(NotFound, match=r"It expired at 2026-01-01T13:00:00\.000Z \(TTL reached\)"):
        g.read(rid.result_id)


@pytest.mark.parametrize(
    "text",
    [
        '{"wei": 123456789012345678901234567890}',
        '{"x": 1e400}',
        '{"y": NaN, "z": -Infinity}',
    ],
)
def test_json_the_encoder_cannot_keep_exactly_passes_as_the_text_it_was(
    tl: Taskloom, text: str
) -> None:
    """An integer past 64 bits failed the encoder (a traceback); NaN, Infinity and 1e400
    became null: the model must see the values the tool returned."""
    assert tl.guard("t1", SMALL).wrap("chain", text) == text
    big = "[" + ",".join([text] * 600) + "]"
    out = tl.guard("t1", SMALL).stash("chain", big)
    assert out.mode == "stashed" and out.result_id
    assert text in tl.guard("t1", SMALL).read(out.result_id, lines="1-1")
    value = {"wei": 2**100}
    assert "1267650600228229401496703205376" in tl.guard("t1", SMALL).wrap("chain", value)


def test_output_that_is_not_utf8_is_stashed_with_replacement_characters(tl: Taskloom) -> None:
    """Undecodable bytes of a subprocess's output (lone surrogates, with surrogateescape)
    crashed the guard; no backend can store them."""
    raw = ("abc\udcff\udcfe def " * 5000, "A\ud800B " * 20000)
    for text in raw:
        out = tl.guard("t1", SMALL).stash("shell", text)
        assert out.mode == "stashed" and out.result_id
        assert "\ufffd" in tl.guard("t1", SMALL).read(out.result_id, lines="1-1")


def test_numbers_too_long_for_a_path_or_a_range_are_argument_errors(tl: Taskloom) -> None:
    out = tl.guard("t1", SMALL).stash("gh", json.dumps({"items": issues(40)}))
    g = tl.guard("t1", SMALL)
    for kwargs in ({"path": "$.items[" + "9" * 4400 + "]"}, {"lines": "9" * 4400 + "-"}):
        with pytest.raises(InvalidInput):
            g.read(out.result_id or "", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("rid", ["res_\x00abc", "res_" + "a" * 100, "résultat"])
def test_a_result_id_no_result_could_have_is_not_found_on_both_backends(
    tl: Taskloom, rid: str
) -> None:
    with pytest.raises(NotFound, match="no stashed result"):
        tl.guard("t1", SMALL).read(rid)


def test_text_is_stashed_exactly_as_the_tool_returned_it(tl: Taskloom) -> None:
    """Source code read back from the stash kept its ``<vector>``, its indentation and its
    blank lines only in the preview's cleaning: the stored text was cleaned too, and an
    agent editing from it edited broken code."""
    code = "".join(
        f"#include <vector>\nstd::vector<int> v{i}; if (a<b && c>d)\n    indented\t \n\n"
        for i in range(600)
    )
    out = tl.guard("t1", SMALL).stash("read_file", code)
    assert out.mode == "stashed" and out.result_id
    assert f"{len(code.encode()):,} bytes" in out.text
    lines = tl.guard("t1", SMALL).read(out.result_id, lines="1-4")
    assert "#include <vector>\nstd::vector<int> v0; if (a<b && c>d)\n    indented\t \n" in lines


def test_whitespace_heavy_text_reports_its_exact_token_count(tl: Taskloom) -> None:
    """Cleaning collapses whitespace runs even when it removes no markup; the placeholder
    gave the cleaned text's count, not the stored output's."""
    table = "\n".join(
        f"        user{i:>12}{i % 97:>10}.0      /usr/bin/proc --n={i}" for i in range(300)
    )
    g = tl.guard("t1", SMALL)
    out = g.stash("ps", table)
    assert f"· {g.count(table):,} tokens" in out.text
    assert g.results()[0]["tokens"] == g.count(table)


def test_each_undecodable_byte_becomes_one_replacement_character(tl: Taskloom) -> None:
    text = (b"ok \xff\xfe end " * 2000).decode("utf-8", "surrogateescape")
    out = tl.guard("t1", SMALL).stash("shell", text)
    line = tl.guard("t1", SMALL).read(out.result_id or "", lines="1-1")
    assert "ok \ufffd\ufffd end" in line and "\ufffd\ufffd\ufffd" not in line
    assert f"{len(text.encode('utf-8', 'surrogateescape')) + 2 * 2000 * 2:,} bytes" in out.text


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_bytes_are_stashed_as_the_text_they_hold(tl: Taskloom, kind: type) -> None:
    """A subprocess's ``stdout`` is bytes: it was stored as their Python repr, one line of
    ``b'…\\n…'``, so no line range could be read back and every line break was lost."""
    raw = b"".join(b"line %d: caf\xc3\xa9 \xff done\n" % i for i in range(2000))
    out = tl.guard("t1", SMALL).stash("shell", kind(raw))
    assert out.mode == "stashed" and out.result_id
    lines = tl.guard("t1", SMALL).read(out.result_id, lines="2-3")
    assert "line 1: caf\u00e9 \ufffd done\nline 2: caf\u00e9 \ufffd done" in lines
    assert tl.guard("t1", SMALL).wrap("shell", kind(b'{"ok": true}')) == '{"ok":true}'


def test_a_nul_in_an_output_is_stashed_the_same_way_on_every_backend(tl: Taskloom) -> None:
    """PostgreSQL cannot store NUL: the stash failed there, and a stash kept on SQLite could
    not be moved with migrate-db. It becomes U+FFFD on both."""
    text = "binary \x00\x00 tail\n" * 3000
    out = tl.guard("t1", SMALL).stash("shell", text)
    assert out.result_id
    line = tl.guard("t1", SMALL).read(out.result_id, lines="1-1")
    assert "binary \ufffd\ufffd tail" in line and "\x00" not in line


def test_a_result_over_the_byte_quota_is_stored_cut_to_the_quota(
    tl_fixed: Taskloom, clock: FakeClock
) -> None:
    """An 85 MB result was stored past the 64 MiB quota: one result over the quota is now
    stored cut to it, as text, and its placeholder says so."""
    small = [json.dumps(issues(40, offset=1000 + i)) for i in range(2)]
    cfg = GuardConfig(threshold_tokens=200, quota_bytes=2 * len(small[0]) + 100)
    g = tl_fixed.guard("t1", cfg)
    for payload in small:
        g.stash("api", payload)
    clock.advance(1)
    whole = json.dumps(issues(200))
    big = g.stash("api", whole)
    assert big.result_id and f"only its first {cfg.quota_bytes:,} bytes are stored" in big.text
    assert f"{len(whole):,} bytes" in big.text  # the placeholder tells the whole size
    row = stored(tl_fixed, big.result_id, "bytes")
    assert int(str(row["bytes"])) <= cfg.quota_bytes and row["is_json"] == 0
    assert whole.startswith(str(row["content"]))
    assert sum(r["bytes"] for r in g.results()) <= cfg.quota_bytes
    assert g.read(big.result_id, lines="1-1")


def stored(tl: Taskloom, rid: str, *more: str) -> dict[str, object]:
    columns = ", ".join(["content", "is_json", *more])
    with tl.store.read() as tx:
        row = tx.query_one(f"SELECT {columns} FROM stash_results WHERE result_id = ?", (rid,))
    assert row is not None
    return dict(row)


@pytest.mark.parametrize("depth", [300, 100_000])
def test_json_nested_past_the_encoders_is_stashed_as_the_text_it_was(
    tl: Taskloom, depth: int
) -> None:
    """Small JSON 300 levels deep parsed, then orjson refused it ("Recursion limit reached")
    and ``wrap`` raised; at 100,000 levels ``json.loads`` itself recursed too far."""
    g = tl.guard("t1", SMALL)
    for text in ('{"a":' * depth + "1" + "}" * depth, "[" * depth + "]" * depth):
        out = g.stash("tool", text)
        assert out.mode == "stashed" and out.result_id
        assert stored(tl, out.result_id) == {"content": text, "is_json": 0}
        first = g.read(out.result_id, page=1)
        assert text.startswith(first.split("\n", 1)[1])
        assert "--- line 1" in g.extract(out.result_id, "/[[{]/")
        assert "local ranking" in g.extract(out.result_id, "deep")
    small = '{"a":' * 300 + "1" + "}" * 300
    assert tl.guard("t1").wrap("tool", small) == small  # passes through, exactly


def test_python_values_too_deep_or_cyclic_are_kept_as_text(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    for depth in (300, 100_000):
        deep: list[object] = []
        inner = deep
        for _ in range(depth):
            inner.append([])
            inner = inner[0]  # type: ignore[assignment]
        out = g.stash("tool", deep)
        assert out.result_id and stored(tl, out.result_id)["content"] == "[" * (depth + 1) + "]" * (
            depth + 1
        )
    cyclic: list[object] = [1]
    cyclic.append(cyclic)
    assert tl.guard("t1").wrap("tool", cyclic) == '[1,"[circular]"]'


def test_json_within_the_depth_limit_stays_json(tl: Taskloom) -> None:
    text = '{"a":' * 120 + '"deep"' + "}" * 120
    out = tl.guard("t1", GuardConfig(threshold_tokens=200)).stash("tool", text)
    assert out.result_id and stored(tl, out.result_id)["is_json"] == 1
    assert '"deep"' in tl.guard("t1").read(out.result_id, path="$" + ".a" * 120)


def test_a_named_field_counts_only_where_it_has_a_value(tl: Taskloom) -> None:
    """Records where the field is null ranked above the one record holding it (they are
    shorter), and the record shown did not include the field."""
    rows: list[dict[str, object]] = [
        {"id": i, "name": f"svc{i}", "license": None, "region": "eu", "owner": f"team{i}"}
        for i in range(40)
    ]
    rows[17]["license"] = "Apache-2.0"
    rows[17].update({f"extra_{k}": k for k in range(20)})  # the field sits past MAX_FIELDS
    rows[17]["license"] = rows[17].pop("license")
    g = tl.guard("t1", SMALL)
    rid = g.stash("api", json.dumps(rows)).result_id or ""
    answer = g.extract(rid, "license")
    assert "1 of 1 match" in answer.split("\n", 1)[0]
    assert answer.split("\n")[1] == "--- $[17]" and '"license":"Apache-2.0"' in answer


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g, rid: g.read(rid, page="2"), "`page` must be a whole number"),
        (lambda g, rid: g.read(rid, page=True), "`page` must be a whole number"),
        (lambda g, rid: g.read(rid, lines=5), "`lines` must be text, not int"),
        (lambda g, rid: g.read(rid, path=5), "`path` must be text, not int"),
        (lambda g, rid: g.read(rid, max_tokens="500"), "`max_tokens` must be a whole number"),
        (lambda g, rid: g.read(5), "result_id must be text, not int"),
        (lambda g, rid: g.show(5), "result_id must be text, not int"),
        (lambda g, rid: g.extract(rid, 5), "query must be text, not int"),
        (lambda g, rid: g.wrap(5, "output"), "tool_name must be text, not int"),
        (lambda g, rid: g.wrap("tool", "output", hint=5), "hint must be text, not int"),
        (lambda g, rid: g.history("5"), "limit must be a whole number from 0"),
        (lambda g, rid: g.history(-1), "limit must be a whole number from 0"),
        (lambda g, rid: g.history(2**64), "limit must be a whole number from 0"),
        (lambda g, rid: g.wrap_turn("abc"), "wrap_turn takes a list of TurnResult"),
        (lambda g, rid: g.wrap_turn([1]), "wrap_turn takes a list of TurnResult"),
        (lambda g, rid: g.wrap_turn([], budget_tokens="9"), "budget_tokens must be a whole"),
    ],
)
def test_arguments_of_the_wrong_kind_are_input_errors_on_both_backends(
    tl: Taskloom, call: Callable[..., object], message: str
) -> None:
    """A number where text goes (or text where a number goes) reached string methods and
    comparisons deep inside: a bare TypeError or AttributeError escaped, and a history limit
    out of range was read differently by each backend (all rows on SQLite, a StoreError on
    PostgreSQL). Each is an input error naming the argument, and nothing is stored."""
    g = tl.guard("t")
    rid = g.stash("tool", "line\n" * 5000).result_id or ""
    with pytest.raises(InvalidInput, match=message):
        call(g, rid)
    assert [r["result_id"] for r in g.results()] == [rid]


def test_a_guard_config_of_the_wrong_kind_is_an_input_error(tl: Taskloom) -> None:
    tl.guard_config = "strict"  # type: ignore[assignment]
    with pytest.raises(InvalidInput, match="a guard's config is a GuardConfig, not str"):
        tl.guard("t")


def test_is_json_is_true_or_false_on_both_backends(tl: Taskloom) -> None:
    """Callers (and ``stash list --json``) read a flag, not the database's 0 or 1."""
    g = tl.guard("t")
    text = g.stash("tool", "line\n" * 5000).result_id or ""
    data = g.stash("tool", [{"id": i, "name": f"n{i}"} for i in range(3000)]).result_id or ""
    assert {r["result_id"]: r["is_json"] for r in g.results()} == {text: False, data: True}
    assert g.show(data)["is_json"] is True and g.show(text)["is_json"] is False
