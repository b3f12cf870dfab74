"""Credentials in JSON are redacted by where they sit, whether the guard takes the output as
JSON or keeps it as text; and JSON is taken as JSON only when no value of it is lost."""

from __future__ import annotations

import json
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.domain.redact import redact_text
from taskloom.guard import GuardConfig
from taskloom.guard.redact_json import redact_json_text, redact_value

TIGHT = GuardConfig(threshold_tokens=30, compacted_max_tokens=10)
FILLER = [{"n": i, "note": f"filler text {i}"} for i in range(200)]
STRIPE = "sk_live_51HxyzVerySecretValue"


def stored(tl: Taskloom) -> str:
    with tl.store.read() as tx:
        rows = tx.query("SELECT content, placeholder FROM stash_results")
    return "\n".join(f"{r['content']}\n{r['placeholder']}" for r in rows)


@pytest.mark.parametrize(
    ("value", "redacted"),
    [
        (
            {"request": {"headers": {"Authorization": f"Bearer {STRIPE}"}}},
            {"request": {"headers": {"Authorization": "Bearer [redacted]"}}},
        ),
        ({"authorization": "token 0123456789abcdef"}, {"authorization": "token [redacted]"}),
        ({"PROXY_AUTHORIZATION": "Basic dXNlcjpw"}, {"PROXY_AUTHORIZATION": "Basic [redacted]"}),
        ({"HTTP_AUTHORIZATION": "opaque0123"}, {"HTTP_AUTHORIZATION": "[redacted]"}),
        (
            {"headers": [["Authorization", "Basic dXNlcjpodW50ZXIy"], ["Accept", "*/*"]]},
            {"headers": [["Authorization", "Basic [redacted]"], ["Accept", "*/*"]]},
        ),
        (
            {"headers": [{"name": "Authorization", "value": "Bearer s3cr3tT0kenValue123"}]},
            {"headers": [{"name": "Authorization", "value": "Bearer [redacted]"}]},
        ),
        (
            {"env": [{"name": "DB_PASSWORD", "value": "hunter2"}, {"name": "A", "value": "/"}]},
            {"env": [{"name": "DB_PASSWORD", "value": "[redacted]"}, {"name": "A", "value": "/"}]},
        ),
        ({"Authorization": ["Bearer abc123"]}, {"Authorization": ["Bearer [redacted]"]}),
    ],
)
def test_an_authorization_value_in_json_loses_its_credential_and_keeps_its_scheme(
    value: dict[str, Any], redacted: dict[str, Any]
) -> None:
    """A JSON ``Authorization`` header was stored, previewed, read back and summarized in
    clear: only the text form ``Authorization: Bearer …`` was recognised."""
    assert redact_value(value) == (redacted, 1)
    assert json.loads(redact_json_text(json.dumps(value))[0]) == redacted


@pytest.mark.parametrize(
    "value",
    [
        {"authorization": "Bearer [redacted]"},
        {"name": "Authorization", "description": "the header to send"},
        ["Authorization"],
        {"requires_authorization": True, "authorization_url": "https://ex.com/oauth"},
    ],
)
def test_what_is_not_an_authorization_value_is_kept(value: Any) -> None:
    assert redact_value(value) == (value, 0)


def test_a_json_authorization_header_is_nowhere_the_model_or_the_summarizer_looks(
    tl: Taskloom,
) -> None:
    """The QA repro: the key was in the stored row, the preview, read_result and the prompt."""
    prompts: list[str] = []

    class Model:
        name = "recorder"

        def complete(self, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
            prompts.append(prompt)
            return "[Tool output summary — http]\nA request and 200 filler items."

    payload = {"request": {"headers": {"Authorization": f"Bearer {STRIPE}"}}, "items": FILLER}
    g = tl.guard("t1", GuardConfig(threshold_tokens=30, llm=Model(), summarize=True))
    out = g.stash("http", json.dumps(payload))
    assert out.result_id and out.summarized and prompts
    read = g.read(out.result_id, path="$.request.headers")
    assert '"Authorization": "Bearer [redacted]"' in read
    for text in (out.text, read, stored(tl), *prompts):
        assert STRIPE not in text


@pytest.mark.parametrize("number", ["100000000000000000000", "NaN", "1e400"])
def test_json_kept_as_text_for_a_number_is_still_redacted_by_key(tl: Taskloom, number: str) -> None:
    """One number beyond a double made the output text, and every JSON-key redaction was
    lost: the password was stored, shown and read back in clear."""
    text = (
        '{"password": "hunter2-very-secret", "amount": ' + number + ',\n "headers": '
        '[{"name": "Authorization", "value": "Bearer s3cr3tT0kenValue123"}],\n'
        ' "note": "caf\\u00e9 \\"quoted\\"", "items": ' + json.dumps(FILLER) + "}"
    )
    out = tl.guard("t1", TIGHT).stash("api", text)
    assert out.mode == "stashed" and "2 credential-like values" in out.text
    with tl.store.read() as tx:
        [row] = tx.query("SELECT content FROM stash_results")
    expected = text.replace('"hunter2-very-secret"', '"[redacted]"').replace(
        "Bearer s3cr3tT0kenValue123", "Bearer [redacted]"
    )
    assert row["content"] == expected  # every other character as the tool wrote it
    assert "hunter2" not in stored(tl) and "s3cr3t" not in stored(tl)


@pytest.mark.parametrize("scheme", ["Bearer", "Digest", "Negotiate"])
def test_an_authorization_header_kept_as_text_keeps_its_scheme_word(
    tl: Taskloom, scheme: str
) -> None:
    """In JSON kept as text (a NaN) the key rule wrote ``"Authorization": "Bearer
    [redacted]"``, then the text rule took ``Bearer`` (six letters, as a credential may be)
    for the credential: ``"[redacted] [redacted]"``, two values counted for one. A log
    line already showing ``Authorization: Bearer [redacted]`` lost its scheme the same way."""
    text = (
        '{"headers": {"Authorization": "' + scheme + ' s3cr3tT0kenValue123"}, "x": NaN,'
        ' "items": ' + json.dumps(FILLER) + "}"
    )
    out = tl.guard("t1", TIGHT).stash("api", text)
    assert out.mode == "stashed" and "1 credential-like value replaced" in out.text
    with tl.store.read() as tx:
        [row] = tx.query("SELECT content FROM stash_results")
    assert row["content"] == text.replace(f"{scheme} s3cr3tT0kenValue123", f"{scheme} [redacted]")
    shown = f"> Authorization: {scheme} [redacted]\n< HTTP/1.1 200 OK"
    assert redact_text(shown) == (shown, 0)


def test_redaction_in_place_keeps_escapes_spacing_and_duplicate_keys() -> None:
    text = '{ "token" : "a\\"b" , "token": "second",\n\t"x": [1, 2e5, "\\u00e9"], "jwt": ""}'
    out, count = redact_json_text(text)
    assert count == 2
    assert out == (
        '{ "token" : "[redacted]" , "token": "[redacted]",\n\t"x": [1, 2e5, "\\u00e9"], "jwt": ""}'
    )
    assert redact_json_text("[INFO] not JSON") == ("[INFO] not JSON", 0)
    assert redact_json_text('{"user": "bob"}') == ('{"user": "bob"}', 0)


def test_a_text_pass_through_is_redacted_by_key_when_asked(tl: Taskloom) -> None:
    strict = GuardConfig(redact_pass_through=True)
    out = tl.guard("t1", strict).wrap("api", '{"password": "x", "n": 100000000000000000000}')
    assert out == '{"password": "[redacted]", "n": 100000000000000000000}'


def test_json_with_a_duplicate_key_is_kept_as_text(tl: Taskloom) -> None:
    """``{"a":1,"a":2}`` was taken as JSON and minified to ``{"a":2}``: the first value could
    not be read back."""
    g = tl.guard("t1", TIGHT)
    assert g.wrap("api", '{"a": 1, "a": 2}') == '{"a": 1, "a": 2}'
    text = '{"a":1,"a":2,' + ",".join(f'"k{i}":{i}' for i in range(100)) + "}"
    out = g.stash("api", text)
    assert out.mode == "stashed" and "Shape: text" in out.text and out.result_id
    assert g.read(out.result_id, lines="1-1").endswith(text)
    nested = '[{"id": 1, "tags": {"x": 1, "x": 1}}]'
    assert g.wrap("api", nested) == nested
