"""One budget for the tool results of a turn, placements frozen by call id, on every backend."""

from __future__ import annotations

import json

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import InvalidInput
from taskloom.guard import GuardConfig
from taskloom.guard.budget import TurnResult
from taskloom.tools.adapters import run_tool_calls
from taskloom.tools.registry import ToolContext

CONFIG = GuardConfig(threshold_tokens=2_000, turn_budget_tokens=2_500, preview_chars=200)


def output(n: int, words: int) -> str:
    """A text output of about ``words`` tokens that passes on its own."""
    return "\n".join(f"result {n} line {i} alpha beta gamma" for i in range(words // 10))


def turn() -> list[TurnResult]:
    return [
        TurnResult("call_a", "grep", output(1, 1_800)),
        TurnResult("call_b", "ls", output(2, 400)),
        TurnResult("call_c", "cat", output(3, 1_500)),
        TurnResult("call_d", "find", output(4, 900)),
    ]


def test_the_largest_results_are_stashed_until_the_rest_fits(tl: Taskloom) -> None:
    g = tl.guard("t1", CONFIG)
    alone = [g.stash(r.tool_name, r.output) for r in turn()]
    assert all(w.mode == "pass" for w in alone) and sum(w.tokens for w in alone) > 2_500
    placed = g.wrap_turn(turn())
    assert [w.mode for w in placed] == ["stashed", "pass", "stashed", "pass"]
    assert sum(w.tokens for w in placed) <= 2_500
    assert placed[1].text == turn()[1].output  # what fits goes as the tool returned it
    assert "result 1 line 0" in g.read(placed[0].result_id or "", lines="1-1")


def test_wrapping_the_turn_again_gives_the_same_bytes(tl: Taskloom) -> None:
    g = tl.guard("t1", CONFIG)
    first = [w.text for w in g.wrap_turn(turn())]
    again = [w.text for w in tl.guard("t1", CONFIG).wrap_turn(turn())]
    assert again == first


def test_a_placement_is_frozen_when_more_results_of_the_turn_come(tl: Taskloom) -> None:
    """Results placed before keep their text, whatever arrives later; only the new ones
    share what is left of the budget."""
    g = tl.guard("t1", CONFIG)
    early = g.wrap_turn(turn()[1:2])  # the small one alone: it passes
    assert early[0].mode == "pass"
    later = g.wrap_turn(turn())
    assert later[1].text == early[0].text
    assert [w.mode for w in later] == ["stashed", "pass", "stashed", "pass"]
    bigger = GuardConfig(threshold_tokens=2_000, turn_budget_tokens=100_000)
    assert [w.text for w in tl.guard("t1", bigger).wrap_turn(turn())] == [w.text for w in later]


def test_a_result_placed_as_shown_stays_shown_under_a_lower_threshold(tl: Taskloom) -> None:
    """A placement never changes: a lower threshold since the turn was placed would stash
    the results shown, and a re-render still shows them as they were."""
    placed = tl.guard("t1", CONFIG).wrap_turn(turn())
    lower = GuardConfig(threshold_tokens=100, turn_budget_tokens=2_500, preview_chars=200)
    assert tl.guard("t1", lower).stash("ls", turn()[1].output).mode == "stashed"
    again = tl.guard("t1", lower).wrap_turn(turn())
    assert [w.text for w in again] == [w.text for w in placed]


def test_every_result_needs_its_own_call_id(tl: Taskloom) -> None:
    g = tl.guard("t1", CONFIG)
    with pytest.raises(InvalidInput, match="same call id"):
        g.wrap_turn([TurnResult("x", "a", "1"), TurnResult("x", "b", "2")])
    with pytest.raises(InvalidInput, match="call id"):
        g.wrap_turn([TurnResult("", "a", "1")])


def test_placements_are_per_thread(tl: Taskloom) -> None:
    tl.guard("t1", CONFIG).wrap_turn(turn())
    other = tl.guard("t2", GuardConfig(threshold_tokens=2_000, turn_budget_tokens=100_000))
    assert all(w.mode == "pass" for w in other.wrap_turn(turn()))


def test_the_adapters_place_a_turns_results_under_the_budget(tl: Taskloom) -> None:
    tl.guard_config = GuardConfig(
        threshold_tokens=3_000, turn_budget_tokens=1_500, preview_chars=200
    )
    g = tl.guard("t1")
    for i in range(40):
        tl.board("t1").add(f"issue {i}: look into the flaky release build on the arm runners")
    calls = [
        {"id": f"call_{i}", "type": "function",
         "function": {"name": "todo", "arguments": json.dumps({"op": "list"})}}
        for i in range(3)
    ]  # fmt: skip
    response = {"choices": [{"message": {"role": "assistant", "tool_calls": calls}}]}
    ctx = ToolContext(thread_id="t1")
    plain = run_tool_calls(tl.tools, response, "openai", ctx)
    guarded = run_tool_calls(tl.tools, response, "openai", ctx, guard=g)
    assert [m["tool_call_id"] for m in guarded] == ["call_0", "call_1", "call_2"]
    assert sum(g.count(m["content"]) for m in guarded) <= 1_500
    assert sum(g.count(m["content"]) for m in plain) > 1_500
    assert run_tool_calls(tl.tools, response, "openai", ctx, guard=g) == guarded


def test_calls_without_an_id_of_their_own_are_run_once_and_answered(tl: Taskloom) -> None:
    """Compatible servers send calls with no id, or one id for every call of a response:
    run_tool_calls with a guard ran every tool, then raised ("two results of one turn have
    the same call id"), so the host lost the results of work done (cards added), and a
    retry would do it twice. Each result is now answered, still guarded."""
    tl.guard_config = GuardConfig(threshold_tokens=300, preview_chars=100)
    g = tl.guard("t1")
    for i in range(40):
        tl.board("t1").add(f"issue {i}: look into the flaky release build on the arm runners")
    listing = {"name": "todo", "arguments": json.dumps({"op": "list"})}
    ids: list[object] = ["same", "same", None, "", {"id": 1}, "x" * 500, "own"]
    calls = [
        {"type": "function", "function": {"name": "todo",
                                          "arguments": json.dumps({"op": "add", "content": "a"})}},
        {"type": "function", "function": listing},
        *({"type": "function", "function": listing} for _ in ids[2:]),
    ]  # fmt: skip
    for call, call_id in zip(calls, ids, strict=True):
        call["id"] = call_id
    response = {"choices": [{"message": {"role": "assistant", "tool_calls": calls}}]}
    messages = run_tool_calls(tl.tools, response, "openai", ToolContext(thread_id="t1"), guard=g)
    assert [m["tool_call_id"] for m in messages] == ids
    assert [c["title"] for c in tl.board("t1").list()["cards"]][-1] == "a"
    assert len(tl.board("t1").list()["cards"]) == 41
    for m in messages[1:]:  # every listing is over the threshold: stashed, not shown whole
        assert m["content"].startswith("[stashed tool output"), m["content"][:200]


def test_a_call_id_sent_again_for_another_output_is_placed_afresh(tl: Taskloom) -> None:
    """Servers that number calls per response send ``call_0`` on every turn. The second
    turn's ``call_0`` took the first one's placement: a 3 MB output after a small one was
    shown whole, flooding the model's context. A placement now holds for the output it was
    made for; the same output under that id is still placed as before."""
    g = tl.guard("t1", CONFIG)
    assert g.wrap_turn([TurnResult("call_0", "bash", "ok")])[0].mode == "pass"
    big = output(9, 60_000)
    second = g.wrap_turn([TurnResult("call_0", "bash", big)])[0]
    assert second.mode == "stashed" and second.tokens < 2_000
    assert g.wrap_turn([TurnResult("call_0", "bash", "ok")])[0].text == "ok"
    nested: dict[str, object] = {"rows": [{"n": i, "x": "y" * 50} for i in range(3_000)]}
    third = g.wrap_turn([TurnResult("call_1", "api", nested)])[0]
    assert third.mode == "stashed"
    assert g.wrap_turn([TurnResult("call_1", "api", {"rows": []})])[0].mode == "pass"


def test_a_placement_recorded_without_a_fingerprint_still_holds(tl: Taskloom) -> None:
    """Rows written before placements carried the output's fingerprint keep their word."""
    from taskloom.store import stash as sql

    g = tl.guard("t1", CONFIG)
    with g.runtime.store.write() as tx:
        sql.place(tx, "t1", {"call_old": "stashed"}, g.runtime.now())
    assert g.stash("ls", output(5, 400)).mode == "pass"
    assert g.wrap_turn([TurnResult("call_old", "ls", output(5, 400))])[0].mode == "stashed"


@pytest.mark.parametrize("format", ["openai", "openai-responses", "anthropic"])
def test_a_read_of_a_stashed_result_is_answered_not_stashed_again(
    tl: Taskloom, format: str
) -> None:
    """With the default config a read_result answer (capped at 4,000 tokens) passes the
    3,000-token threshold: run_tool_calls with a guard stashed it under a new result id,
    so the model asked for lines 1-2000 got a placeholder for them, and reading that one
    gave another placeholder. The retrieval tools' answers now go in as they are."""
    g = tl.guard("t1")
    log = "\n".join(
        f"2026-11-30 worker-{i % 7} job {i} finished in {i % 97} ms" for i in range(9_000)
    )
    rid = g.stash("bash", log).result_id or ""
    asked = [
        ("read_result", {"result_id": rid, "lines": "1-2000"}),
        ("extract_from_result", {"result_id": rid, "query": "worker-3"}),
    ]
    shapes = {
        "openai": lambda n, name, args: {
            "id": f"c{n}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        },
        "openai-responses": lambda n, name, args: {
            "type": "function_call", "call_id": f"c{n}", "name": name,
            "arguments": json.dumps(args),
        },
        "anthropic": lambda n, name, args: {
            "type": "tool_use", "id": f"c{n}", "name": name, "input": args,
        },
    }  # fmt: skip
    items = [shapes[format](n, name, args) for n, (name, args) in enumerate(asked)]
    response = {
        "openai": {"choices": [{"message": {"role": "assistant", "tool_calls": items}}]},
        "openai-responses": {"output": items},
        "anthropic": {"content": items},
    }[format]
    messages = run_tool_calls(tl.tools, response, format, ToolContext(thread_id="t1"), guard=g)
    texts = (
        [m["content"] for m in messages[0]["content"]]
        if format == "anthropic"
        else [m.get("content", m.get("output")) for m in messages]
    )
    direct = [
        tl.tools.dispatch(name, args, ToolContext(thread_id="t1")).content for name, args in asked
    ]
    assert g.count(direct[0]) > g.config.threshold_tokens
    assert texts == direct
    assert "2026-11-30 worker-0 job 0 finished in 0 ms" in texts[0]
    assert not any(t.startswith("[stashed tool output") for t in texts)
