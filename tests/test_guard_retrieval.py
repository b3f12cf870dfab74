"""Key-aware retrieval, exact counts and lists, and JSONPath as the standard writes it,
on every backend."""

from __future__ import annotations

import json
import re

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.guard import GuardConfig
from taskloom.guard.answer import listed_values

SMALL = GuardConfig(threshold_tokens=200, compacted_max_tokens=100, preview_chars=300)


def api_description() -> dict[str, object]:
    """Shapes keyed by name, as an API description holds them; many mention the one named
    InventoryConfiguration, one is named so."""
    shapes: dict[str, object] = {
        f"Thing{i}": {
            "type": "structure",
            "members": {
                "Config": {"shape": "InventoryConfiguration", "documentation": f"uses it {i}"},
                "Name": {"shape": "String"},
            },
        }
        for i in range(30)
    }
    shapes["InventoryConfiguration"] = {
        "type": "structure",
        "members": {
            "Destination": {"shape": "InventoryDestination", "documentation": "x" * 2_000},
            "IsEnabled": {"shape": "Boolean"},
            "Filter": {"shape": "InventoryFilter"},
            "Id": {"shape": "String"},
            "IncludedObjectVersions": {"shape": "Versions"},
            "OptionalFields": {"shape": "OptionalFields"},
            "Schedule": {"shape": "Schedule"},
        },
        "documentation": "The configuration " * 200,
    }
    shapes["inventoryconfiguration"] = {"type": "string"}
    return {"metadata": {"apiVersion": "2006-03-01"}, "shapes": shapes}


def languages() -> dict[str, object]:
    kinds = "LLCLSLLLLC"
    return {
        "639-3": [
            {"alpha_3": f"l{i:02d}", "name": f"Language {i}", "scope": "IM"[i % 2],
             "type": kinds[i % 10], "speakers": i * 1000}
            for i in range(80)
        ]
    }  # fmt: skip


def stashed(tl: Taskloom, value: object) -> str:
    rid = tl.guard("t1", SMALL).stash("api", json.dumps(value)).result_id
    assert rid
    return rid


def test_a_query_naming_a_key_returns_that_record_first_with_every_member_key(
    tl: Taskloom,
) -> None:
    """The record named InventoryConfiguration came after three that mention it, and its
    fields were elided as "(+2 more fields)"."""
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, api_description())
    answer = g.extract(rid, "InventoryConfiguration structure shape")
    first = answer.split("\n--- ")[1]
    assert first.startswith("$.shapes.InventoryConfiguration\n")
    for key in ("Destination", "IsEnabled", "Filter", "Id", "IncludedObjectVersions", "Schedule"):
        assert f'"{key}"' in first  # keys are never elided, long values may be
    assert "x" * 400 not in first


def test_an_exact_key_beats_another_case_which_beats_its_words(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, api_description())

    def order(query: str) -> list[str]:
        return [line[4:] for line in g.extract(rid, query).split("\n") if line.startswith("--- ")]

    exact, other = "$.shapes.InventoryConfiguration", "$.shapes.inventoryconfiguration"
    assert order("InventoryConfiguration")[:2] == [exact, other]
    assert order("inventoryconfiguration")[:2] == [other, exact]
    assert order("inventory configuration")[0] == exact  # the name's words


def test_the_keys_of_a_named_object_are_listed_exactly(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, api_description())
    answer = g.extract(rid, "List the members of the shape InventoryConfiguration")
    assert "method: exact" in answer and "$.shapes.InventoryConfiguration.members" in answer
    for key in ("Destination", "IsEnabled", "Filter", "Id", "IncludedObjectVersions",
                "OptionalFields", "Schedule"):  # fmt: skip
        assert f'"{key}"' in answer
    count = g.extract(rid, "How many members does the shape InventoryConfiguration have?")
    assert "Exact count: 7 " in count


def test_a_count_is_exact_and_names_the_jsonpath_that_gives_it(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, languages())
    answer = g.extract(rid, "How many languages have type C?")
    assert "Exact count: 16 " in answer
    path = re.search(r"JSONPath (\S+),", answer)
    assert path and path.group(1) == "$['639-3'][?@.type=='C']"
    assert "16 matches" in g.read(rid, path=path.group(1)).split("\n")[0]
    both = g.extract(rid, "How many languages have type C and scope I?")
    assert "Exact count: 8 " in both
    more = g.extract(rid, "how many languages have more than 70000 speakers")
    assert "Exact count: 9 " in more and "@.speakers>70000" in more


def test_a_list_gives_every_value_and_the_path_that_pages_the_rest(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, languages())
    answer = g.extract(rid, "List every name whose type is L")
    assert "Exact list: 56 matches of JSONPath $['639-3'][?@.type=='L'].name" in answer
    assert '"Language 1"' in answer
    if "Language 78" not in answer:
        assert f"result_id=\"{rid}\", path=\"$['639-3'][?@.type=='L'].name\"" in answer
        page = g.read(rid, path="$['639-3'][?@.type=='L'].name")
        assert '"Language 78"' in page or "page=2" in page.split("\n")[0]


def test_a_count_it_cannot_read_says_so_and_suggests_the_query(tl: Taskloom) -> None:
    """A top-k under "3 of 7,910 matches" read like a count and was not one."""
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, languages())
    answer = g.extract(rid, "How many languages have type Q?")
    assert "Exact count" not in answer and "Not an exact count" in answer
    assert "$['639-3'][?@.type==" in answer and "'C'" in answer


@pytest.mark.parametrize(
    ("path", "fixed"),
    [
        ("$.639-3[5]", "$['639-3'][5]"),
        ("$.items[?(@.state='open')]", "$.items[?(@.state=='open')]"),
        ("items[0]", "$.items[0]"),
        ("$.x[?@.a>1 and @.b<2]", "$.x[?@.a>1 && @.b<2]"),
        ("$['639-3'][1", "$['639-3'][1]"),
    ],
)
def test_a_jsonpath_that_does_not_parse_gets_its_position_and_a_fix(
    tl: Taskloom, path: str, fixed: str
) -> None:
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, languages())
    with pytest.raises(InvalidInput) as caught:
        g.read(rid, path=path)
    assert re.search(r"at position \d+", str(caught.value))
    assert f"Did you mean {fixed}" in str(caught.value)


def test_rfc_9535_forms_work(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, languages())
    assert "16 matches" in g.extract(rid, "$..[?(@.type=='C')]").split("\n")[0]
    assert '"l05"' in g.read(rid, path="$['639-3'][5].alpha_3")
    long_names = g.extract(rid, "$['639-3'][?length(@.name) > 10 && @.scope == 'I']")
    assert re.search(r"\d (match|matches)\b", long_names)
    assert '"l79"' in g.extract(rid, "$['639-3'][-1:].alpha_3")
    assert "40 of 40" in g.extract(rid, "$['639-3'][?search(@.name, '[13579]$')].name")


def test_a_bad_regex_gets_its_position_and_an_escaped_form(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    rid = g.stash("log", "\n".join(f"line {i} (ok)" for i in range(400))).result_id or ""
    with pytest.raises(InvalidInput, match=r"at position 7: missing \); .* /line 3\\\(/$"):
        g.extract(rid, "/line 3(/")


def test_text_keeps_line_retrieval_and_another_threads_result_stays_invisible(
    tl: Taskloom,
) -> None:
    g = tl.guard("t1", SMALL)
    text = "\n".join(f"{i:04d} worker started job-{i}" for i in range(500))
    rid = g.stash("log", text).result_id or ""
    assert "--- lines 1" in g.extract(rid, "job-417") or "job-417" in g.extract(rid, "job-417")
    assert g.read(rid, lines="418-418").split("\n")[1] == "0417 worker started job-417"
    with pytest.raises(Exception, match="no stashed result"):
        tl.guard("t2", SMALL).extract(rid, "job-417")


def events() -> list[dict[str, object]]:
    """Records each holding objects of their own (a user, an assignee, labels)."""
    return [
        {"event_id": f"ev-{i:04d}", "type": "ab"[i % 2], "resolved": i % 3 == 0,
         "user": {"login": f"u{i % 7}"}, "assignee": {"login": f"u{i % 5}"},
         "labels": [{"name": "x"}, {"name": "y"}, {"name": "z"}]}
        for i in range(300)
    ]  # fmt: skip


def test_a_count_of_every_record_is_exact_only_when_nothing_else_is_asked(tl: Taskloom) -> None:
    """Each record's user made a rival group of as many records, so "how many events are
    there?" got no count; and a condition that could not be read was dropped, so "how many
    events have colour red?" was answered with every record."""
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, events())
    assert "Exact count: 300 (JSONPath $[*]," in g.extract(rid, "How many events are there?")
    assert "Exact count: 900 " in g.extract(rid, "How many labels are there?")
    for question in ("How many events have colour red?", "How many events are red?"):
        answer = g.extract(rid, question)
        assert "Exact count" not in answer and "Not an exact count" in answer
        assert "'red' could not be read as conditions" in answer
    assert "Exact count" not in g.extract(rid, "How many users are there?")


def test_a_true_or_false_field_named_alone_counts_where_it_holds(tl: Taskloom) -> None:
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, events())
    resolved = g.extract(rid, "How many events are resolved?")
    assert "Exact count: 100 (JSONPath $[?@.resolved==true]," in resolved
    assert "Exact count: 200 " in g.extract(rid, "How many events are not resolved?")
    assert "Exact count: 200 " in g.extract(rid, "How many events aren't resolved?")
    assert "Exact count: 200 " in g.extract(rid, "How many events have resolved false?")


def test_a_field_or_value_several_fields_could_mean_gives_no_count(tl: Taskloom) -> None:
    """``login`` was read as the user's (the first field ending so) and ``u3`` as the
    assignee's login (the first group holding it): exact counts of guesses."""
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, events())
    for question in ("How many events have login u3?", "How many events were opened by u3?"):
        answer = g.extract(rid, question)
        assert "Exact count" not in answer and "Not an exact count" in answer
        assert "user.login=='u3'" in answer and "assignee.login=='u3'" in answer
    answer = g.extract(rid, "How many events have user login u3?")
    assert "Exact count: 43 (JSONPath $[?@.user.login=='u3']," in answer


def test_records_under_names_count_with_those_under_a_wildcard(tl: Taskloom) -> None:
    """A path with one or two methods keeps them as named members (``get``), one with
    three as a map: the count read the paths' ``get`` alone."""
    methods = ("get", "post", "delete")
    paths = {
        f"/widgets/{{id}}/part{i}": {
            m: {"operationId": f"{m}Part{i}", "deprecated": i % 4 == 0}
            for m in methods[: 1 + i % 3]
        }
        for i in range(40)
    }
    g = tl.guard("t1", SMALL)
    rid = stashed(tl, {"openapi": "3.1.0", "paths": paths})
    answer = g.extract(rid, "How many operations are deprecated?")
    assert "Exact count: 19 (JSONPath $.paths[*][?@.deprecated==true]," in answer
    gets = g.extract(rid, "How many get operations have deprecated true?")
    assert "Exact count: 10 " in gets and ".get" in gets


def test_a_list_of_values_or_names_is_not_counted_as_a_match(tl: Taskloom) -> None:
    """The header said "5 of 4 matches shown": the list of the matches' names counted."""
    g = tl.guard("t1", SMALL)
    shapes = {f"S{i}": {"type": "structure" if i < 4 else "string"} for i in range(40)}
    rid = stashed(tl, {"shapes": shapes})
    answer = g.extract(rid, "List the shapes with type structure")
    assert "· 4 of 4 matches shown]" in answer.split("\n")[0]
    assert '--- names (keys) of the matches\n["S0","S1","S2","S3"]' in answer
    rid = stashed(tl, languages())
    names = g.extract(rid, "List every name whose type is C")
    assert "· 16 of 16 matches shown]" in names.split("\n")[0]


def test_the_values_a_cut_list_shows_are_counted_whole() -> None:
    assert listed_values('--- $.x\n["a","b,c",3]') == 3
    assert listed_values('--- $.x\n["a","b",12 …(cut; use read_result)') == 2
    assert listed_values('--- $.x\n["a","b\\"c …(cut)') == 1
    assert listed_values("--- $.x\n{}") == 0


def test_a_count_with_no_condition_says_what_it_counted(tl: Taskloom) -> None:
    """A count with no condition said it was "evaluated over every one of the 590 records
    of $[*]" while it counted 4,000 (an array of objects mixed with other values), and "of
    the 32 records of $.shapes.InventoryConfiguration" for the 7 members of one record."""
    g = tl.guard("t1", SMALL)
    items: list[object] = [{"k": i, "name": f"n{i}"} if i % 4 == 0 else i for i in range(400)]
    items[1:4] = ["s", None, [1, 2]]
    rid = stashed(tl, items)
    summary = g.extract(rid, "How many items are there?").split("\n")[1]
    assert summary == (
        "Exact count: 400 (JSONPath $[*], no condition, every match counted; 100 of them are"
        " objects, the records a condition selects)."
    )
    summary = g.extract(rid, "How many records have k more than 300?").split("\n")[1]
    assert summary.startswith("Exact count: 24 (") and "the 100 records of $[*]" in summary
    rid = stashed(tl, api_description())
    summary = g.extract(rid, "How many members does the shape InventoryConfiguration have?")
    assert summary.split("\n")[1] == (
        "Exact count: 7 (JSONPath $.shapes.InventoryConfiguration.members[*], no condition,"
        " every match counted)."
    )
