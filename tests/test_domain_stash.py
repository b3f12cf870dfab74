"""Placeholders and result ids are pure functions of the output."""

from __future__ import annotations

from taskloom.domain.stash import StashFacts, child_path, json_shape, placeholder, result_id


def facts(**over: object) -> StashFacts:
    base = dict(
        result_id=result_id("github", "[1,2]"),
        tool_name="github",
        tokens=12_345,
        encoding="o200k_base",
        bytes=45_678,
        lines=901,
        shape=json_shape([{"id": 1, "tags": [1, 2]}, {"id": 2}]),
        preview="[{...",
        is_json=True,
    )
    base.update(over)
    return StashFacts(**base)  # type: ignore[arg-type]


def test_result_id_is_a_content_hash() -> None:
    rid = result_id("github", "[1,2]")
    assert rid.startswith("res_") and len(rid) == 20
    assert rid == result_id("github", "[1,2]")
    assert rid != result_id("github", "[1,3]") != result_id("gitlab", "[1,2]")
    assert result_id("ab", "c") != result_id("a", "bc")  # length-prefixed


def test_placeholder_is_deterministic_and_says_how_to_read_more() -> None:
    text = placeholder(facts())
    assert text == placeholder(facts())
    rid = facts().result_id
    assert text.splitlines()[0] == (
        f'[stashed tool output: result_id="{rid}" · tool github · 12,345 tokens (o200k_base)'
        " · 45,678 bytes · 901 lines]"
    )
    assert "Shape: JSON array of 2 items (object); item keys: id, tags[2]" in text
    assert f'read_result(result_id="{rid}", path=' in text
    assert f'extract_from_result(result_id="{rid}"' in text
    assert "path=" not in placeholder(facts(is_json=False))


def test_shape_and_paths() -> None:
    assert json_shape({"a": {"b": 1}, "c": [1, 2]}) == "JSON object with 2 keys: a{b}, c[2]"
    assert child_path("$", "items") == "$.items"
    assert child_path("$.items", 3) == "$.items[3]"
    assert child_path("$", "+1") == "$['+1']"
