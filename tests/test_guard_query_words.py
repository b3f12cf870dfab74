"""A query with no word to search for is an error the model sees as one: no result could
answer it, so the call has to change, and no LLM is asked."""

from __future__ import annotations

import json

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.guard import GuardConfig
from taskloom.tools import ToolContext

T1 = ToolContext(thread_id="t1")


class CountingModel:
    """A model that must not be asked: it counts the calls it gets."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
        self.calls += 1
        return "NONE"


def stash_issues(tl: Taskloom, config: GuardConfig | None = None) -> str:
    issues = [{"number": i, "title": f"Issue {i} crashes the parser"} for i in range(400)]
    out = tl.guard("t1", config).stash("github_issues", json.dumps(issues))
    assert out.mode == "stashed" and out.result_id
    return out.result_id


@pytest.mark.parametrize("query", ["???", "the", "what is the value of it", "--- !!"])
def test_a_query_with_no_word_is_a_tool_error(tl: Taskloom, query: str) -> None:
    """It came back with is_error=False and a "no match" line, while docs/guard.md called it
    an error: a model was told its call worked."""
    rid = stash_issues(tl)
    reply = tl.tools.dispatch("extract_from_result", {"result_id": rid, "query": query}, T1)
    assert reply.is_error
    assert reply.content.startswith("error: the query has no word to search for")
    assert "JSONPath ($..login)" in reply.content


def test_a_query_with_no_word_never_reaches_the_llm(tl: Taskloom) -> None:
    model = CountingModel()
    config = GuardConfig(llm=model)
    rid = stash_issues(tl, config)
    with pytest.raises(InvalidInput, match="no word to search for"):
        tl.guard("t1", config).extract(rid, "the")
    assert model.calls == 0


@pytest.mark.parametrize("query", ["number 7", "$[7].title", "/Issue 7 /"])
def test_a_query_with_words_is_answered_as_before(tl: Taskloom, query: str) -> None:
    rid = stash_issues(tl)
    reply = tl.tools.dispatch("extract_from_result", {"result_id": rid, "query": query}, T1)
    assert not reply.is_error and "Issue 7 crashes" in reply.content


def test_a_word_that_matches_nothing_is_a_miss_not_an_error(tl: Taskloom) -> None:
    """A miss depends on the data, so it is an answer; only a query that no data could
    match is refused."""
    rid = stash_issues(tl)
    reply = tl.tools.dispatch("extract_from_result", {"result_id": rid, "query": "zebra"}, T1)
    assert not reply.is_error and "no match]" in reply.content
