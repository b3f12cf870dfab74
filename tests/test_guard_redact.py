"""Credentials in tool output the guard stashes never reach the stash table, the summarizer or
what the model reads back; an output passed through is left as it is unless asked."""

from __future__ import annotations

import json

import pytest

from taskloom.client import Taskloom
from taskloom.guard import GuardConfig
from taskloom.guard.redact import redact_text, redact_value
from taskloom.tools import ToolContext

KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
T1 = ToolContext(thread_id="t1")
STRICT = GuardConfig(redact_pass_through=True)


def stored_contents(tl: Taskloom) -> str:
    with tl.store.read() as tx:
        rows = tx.query("SELECT content, placeholder FROM stash_results")
    return "\n".join(f"{r['content']}\n{r['placeholder']}" for r in rows)


def test_a_key_in_a_large_json_result_is_nowhere(tl: Taskloom) -> None:
    """The key was in the placeholder's preview, in read_result and in the stored row."""
    payload = json.dumps([{"name": f"svc{i}", "api_key": KEY} for i in range(600)])
    g = tl.guard("t1")
    out = g.stash("t", payload)
    assert out.mode == "stashed" and out.result_id
    rid = out.result_id
    assert "600 credential-like value(s) replaced by [redacted]" in out.text
    replies = [
        out.text,
        tl.tools.dispatch("read_result", {"result_id": rid, "path": "$[0]"}, T1).content,
        tl.tools.dispatch("read_result", {"result_id": rid, "page": 1}, T1).content,
        tl.tools.dispatch(
            "extract_from_result", {"result_id": rid, "query": "api_key svc3"}, T1
        ).content,
        stored_contents(tl),
    ]
    for text in replies:
        assert "ABCDEFGHIJ" not in text and "[redacted]" in text, text[:300]
    assert f"{len(payload.replace(KEY, '[redacted]').encode()):,} bytes" in out.text


@pytest.mark.parametrize(
    ("output", "kept"),
    [
        (f"OPENAI_API_KEY={KEY}\nHOME=/root", "OPENAI_API_KEY=[redacted]\nHOME=/root"),
        ("token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ok", "token [redacted] ok"),
        (
            "id AKIAIOSFODNN7EXAMPLE, github_pat_11ABCDEFG0123456789_abcdefghij",
            "id [redacted], [redacted]",
        ),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [redacted]",
        ),
        (
            "xoxb-1234567890-abcdefghij AIzaSyA1234567890abcdefghijklmnopqrstuv",
            "[redacted] [redacted]",
        ),
        (
            'curl -H "Authorization: Bearer abcdef0123456789"',
            'curl -H "Authorization: Bearer [redacted]"',
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nok",
            "[redacted]\nok",
        ),
        ('{"password":"hunter2","user":"bob"}', '{"password":"[redacted]","user":"bob"}'),
        ("db: postgres://bob:hunter2@db:5432/app", "db: postgres://bob:[redacted]@db:5432/app"),
        ("secret: s3cr3t-value # prod", "secret: [redacted] # prod"),
    ],
)
def test_small_outputs_pass_through_redacted_when_asked(
    tl: Taskloom, output: str, kept: str
) -> None:
    assert tl.guard("t1", STRICT).wrap("shell", output) == kept


def test_a_small_output_passes_through_as_the_tool_returned_it(tl: Taskloom) -> None:
    """A coding agent reading a config file to change one line, shown ``[redacted]``, would
    write ``[redacted]`` back over the user's key."""
    env = f"OPENAI_API_KEY={KEY}\nDEBUG=1\n"
    assert tl.guard("t1").wrap("read_file", env) == env.strip()
    assert stored_contents(tl) == ""


def test_what_only_looks_like_a_secret_name_is_kept(tl: Taskloom) -> None:
    text = (
        '{"token_count":5,"max_tokens":100,"auth":true,"author":"bob","tokens":12,'
        '"token_type":"bearer","password":null}'
    )
    assert tl.guard("t1", STRICT).wrap("api", text) == text
    code = "token = request.headers['x']\npassword = ask()\nPWD=/home/me\nsk-short"
    assert tl.guard("t1", STRICT).wrap("cat", code) == code
    # A listing's place is not a secret: redacted, the model could not ask for the next page.
    page = '{"items":[1,2],"nextPageToken":"CAUQAA","continuation_token":"abc123def"}'
    assert tl.guard("t1", STRICT).wrap("api", page) == page


def test_python_values_are_redacted_and_the_input_is_untouched(tl: Taskloom) -> None:
    value = {"config": {"api_key": "abc123", "note": f"use {KEY}"}, "n": 1}
    out = tl.guard("t1", STRICT).wrap("tool", value)
    assert json.loads(out) == {
        "config": {"api_key": "[redacted]", "note": "use [redacted]"},
        "n": 1,
    }
    assert value["config"] == {"api_key": "abc123", "note": f"use {KEY}"}


def test_redaction_can_be_turned_off(tl: Taskloom) -> None:
    text = f"OPENAI_API_KEY={KEY}"
    assert tl.guard("t1", GuardConfig(redact=False)).wrap("shell", text) == text
    tl.guard_config = GuardConfig(redact=False, threshold_tokens=100)
    out = tl.guard("t1").stash("t", json.dumps([{"api_key": KEY}] * 60))
    assert KEY in stored_contents(tl) and "redacted" not in out.text


def test_replies_from_rows_stored_without_redaction_are_redacted(tl: Taskloom) -> None:
    raw = GuardConfig(redact=False, threshold_tokens=100)
    rid = tl.guard("t1", raw).stash("t", f"export GITHUB_TOKEN={KEY}\n" * 200).result_id or ""
    guard = tl.guard("t1", GuardConfig(threshold_tokens=100))
    assert KEY not in guard.read(rid, lines="1-3") and "[redacted]" in guard.read(rid, page=1)
    assert KEY not in guard.extract(rid, "/GITHUB/")


def test_json_stays_json_after_redaction() -> None:
    text = json.dumps(
        {
            "cmd": f'export TOKEN="{KEY}" && run',
            "secret": 'a"b\\c',
            "pem": "-----BEGIN PRIVATE KEY-----\nAB",
        }
    )
    out, count = redact_text(text)
    assert count == 3 and KEY not in out
    assert json.loads(out) == {
        "cmd": 'export TOKEN="[redacted]" && run',
        "secret": "[redacted]",
        "pem": "[redacted]",
    }
    assert redact_value([{"token": 7, "password": ""}]) == ([{"token": 7, "password": ""}], 0)
