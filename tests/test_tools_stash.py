"""``read_result`` and ``extract_from_result`` via the tool registry: errors are visible text."""

from __future__ import annotations

import json

from taskloom.client import Taskloom
from taskloom.guard import GuardConfig
from taskloom.tools import ToolContext

T1 = ToolContext(thread_id="t1")


def stash(tl: Taskloom) -> str:
    tl.guard_config = GuardConfig(threshold_tokens=100)
    payload = [{"number": i, "title": f"issue {i}", "state": "open"} for i in range(60)]
    rid = tl.guard("t1").stash("api", json.dumps(payload)).result_id
    assert rid is not None
    return rid


def test_tools_are_registered_with_schemas(tl: Taskloom) -> None:
    names = {s["function"]["name"] for s in tl.tools.schemas("openai")}
    assert {"read_result", "extract_from_result"} <= names
    [spec] = tl.tools.schemas("anthropic", profile="extract_from_result")
    assert spec["input_schema"]["required"] == ["result_id", "query"]


def test_read_and_extract_happy_path(tl: Taskloom) -> None:
    rid = stash(tl)
    read = tl.tools.dispatch("read_result", {"result_id": rid, "path": "$[7]"}, T1)
    assert not read.is_error and '"title": "issue 7"' in read.content
    found = tl.tools.dispatch("extract_from_result", {"result_id": rid, "query": "issue 42"}, T1)
    assert not found.is_error and "--- $[42]" in found.content


def test_error_paths_come_back_as_text(tl: Taskloom) -> None:
    rid = stash(tl)
    cases = [
        ("read_result", {"result_id": "res_nope"}, T1, "no stashed result 'res_nope'"),
        ("read_result", {"result_id": rid}, ToolContext(thread_id="t2"), "no stashed result"),
        ("read_result", {"result_id": rid, "lines": "x"}, T1, "`lines` must look like"),
        ("read_result", {"result_id": rid, "page": 0}, T1, "page: Input should be greater"),
        ("read_result", {"result_id": rid, "path": "$[", "lines": "1"}, T1, "give one of"),
        ("read_result", {"result_id": rid, "path": "$[abc"}, T1, "cannot parse JSONPath"),
        ("extract_from_result", {"result_id": rid}, T1, "query: required"),
        ("extract_from_result", {"result_id": rid, "query": "/[/"}, T1, "bad regex"),
        ("extract_from_result", {"result_id": rid, "query": "x", "thread_id": "t2"}, T1, "bound"),
        ("read_result", {"result_id": rid}, ToolContext(), "needs a thread"),
    ]
    for name, args, ctx, expected in cases:
        result = tl.tools.dispatch(name, args, ctx)
        assert result.is_error, (name, args)
        assert result.content.startswith("error: ") and expected in result.content, result.content


def test_unquoted_filter_value_is_an_invalid_input_not_an_internal_error(tl: Taskloom) -> None:
    rid = stash(tl)
    for name, key in [("extract_from_result", "query"), ("read_result", "path")]:
        result = tl.tools.dispatch(name, {"result_id": rid, key: "$[?(@.number==x)]"}, T1)
        assert result.is_error and "internal error" not in result.content
        assert result.content.startswith("error: cannot parse JSONPath '$[?(@.number==x)]'")
        assert "at position 14" in result.content
        assert "Did you mean $[?(@.number=='x')] (a string value is quoted)" in result.content


def test_read_result_stays_under_its_cap_on_one_long_line(tl: Taskloom) -> None:
    tl.guard_config = GuardConfig(threshold_tokens=100, read_cap_tokens=400)
    g = tl.guard("t1")
    rid = g.stash("logs", "x" * 2000 + " " + " ".join(f"tok{i}" for i in range(4000))).result_id
    for args in ({"page": 1}, {"lines": "1-1"}, {"page": 3}):
        result = tl.tools.dispatch("read_result", {"result_id": rid, **args}, T1)
        assert not result.is_error and g.count(result.content) <= 400, args
        assert "the rest of line 1" in result.content.split("\n", 1)[0]


def test_long_queries_and_paths_are_not_echoed_past_the_cap(tl: Taskloom) -> None:
    """A 120,000-character query came back whole in the answer's header, and a 50 KB path
    as a 50 KB error: the answer's token cap did not hold."""
    rid = stash(tl)
    cases = [
        ("extract_from_result", {"query": "title " * 20_000}),
        ("read_result", {"path": "$." + "a" * 50_000}),
        ("extract_from_result", {"query": "$." + "a" * 50_000}),
    ]
    for name, args in cases:
        result = tl.tools.dispatch(name, {"result_id": rid, **args}, T1)
        assert result.is_error and len(result.content) < 400, result.content[:500]
        assert "at most 2,000 are accepted" in result.content
    for name, args in [
        ("read_result", {"path": "$." + "b" * 1_900}),
        ("extract_from_result", {"query": "$." + "b" * 1_900}),
        ("extract_from_result", {"query": "/" + "b" * 1_900 + "/"}),
        ("read_result", {"path": "$[?(@.x==" + "y" * 1_900 + ")]"}),
    ]:
        result = tl.tools.dispatch(name, {"result_id": rid, **args}, T1)
        assert len(result.content) < 600, result.content


def test_the_whole_extract_answer_including_its_header_respects_the_cap(tl: Taskloom) -> None:
    tl.guard_config = GuardConfig(threshold_tokens=100, extract_cap_tokens=300)
    payload = [{"number": i, "title": f"issue {i} " + "about a word " * 40} for i in range(60)]
    g = tl.guard("t1")
    rid = g.stash("api", json.dumps(payload)).result_id or ""
    for query in ["title " * 300, "$[*].title", "/issue/", "issue 7 about"]:
        result = tl.tools.dispatch("extract_from_result", {"result_id": rid, "query": query}, T1)
        assert not result.is_error and g.count(result.content) <= 300, query
        head = result.content.split("\n", 1)[0]
        assert len(head) < 400 and ("…" in head or len(query) < 200)


def test_a_read_by_a_long_path_fits_the_cap_with_its_header(tl: Taskloom) -> None:
    tl.guard_config = GuardConfig(threshold_tokens=100, read_cap_tokens=200)
    g = tl.guard("t1")
    key = "k" * 20 + "_é日" * 60
    rid = g.stash("api", {key: "a b " * 3000}).result_id or ""
    for page in (1, 2):
        args = {"result_id": rid, "path": f"$['{key}']", "page": page}
        result = tl.tools.dispatch("read_result", args, T1)
        assert not result.is_error and g.count(result.content) <= 200, g.count(result.content)
