"""A cookie header's values, a ``.pgpass`` line's password and a private key split over a
JSON string's escaped line breaks or over an array of its lines are redacted; times, words and
other colon-separated text are left alone."""

from __future__ import annotations

import json

import pytest

from taskloom.client import Taskloom
from taskloom.domain.redact import redact_text
from taskloom.guard.redact_json import redact_value
from tests.test_guard_json_text import stored


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("Cookie: theme=dark; sid=Zq81mPx0", "Cookie: theme=[redacted]; sid=[redacted]"),
        (
            "> cookie: csrftoken=77aa; sessionid=kk2p",
            "> cookie: csrftoken=[redacted]; sessionid=[redacted]",
        ),
        (
            "< Set-Cookie: JSESSIONID=A1B2C3D4; Path=/app; Secure; HttpOnly; SameSite=Lax",
            "< Set-Cookie: JSESSIONID=[redacted]; Path=/app; Secure; HttpOnly; SameSite=Lax",
        ),
        (
            "SET-COOKIE: remember_me=opaque99; Expires=Thu, 01 Jan 2026 00:00:00 GMT",
            "SET-COOKIE: remember_me=[redacted]; Expires=Thu, 01 Jan 2026 00:00:00 GMT",
        ),
        (
            "curl -s -H 'Cookie: auth_sess=p0o9i8u7' https://intra.example.org/",
            "curl -s -H 'Cookie: auth_sess=[redacted]' https://intra.example.org/",
        ),
    ],
)
def test_a_cookie_header_line_has_its_values_redacted(line: str, kept: str) -> None:
    """Only JSON cookie fields were redacted: a cookie header written as text (curl -v, a
    raw HTTP request, an access log's dump) kept every session id."""
    assert redact_text(line)[0] == kept


def test_a_cookie_header_inside_a_json_string_keeps_the_json() -> None:
    doc = json.dumps({"raw": "GET / HTTP/1.1\r\nCookie: sid=Zq81mPx0\r\nAccept: */*", "n": 1})
    out = json.loads(redact_text(doc)[0])
    assert out == {"raw": "GET / HTTP/1.1\r\nCookie: sid=[redacted]\r\nAccept: */*", "n": 1}


@pytest.mark.parametrize(
    "text",
    [
        "Cookie: see the session section below",
        "the cookie: it expires after a day",
        "Set-Cookie: [redacted]",
        "cookie_path=/; tough-cookie: 4.1.3",
    ],
)
def test_cookie_words_without_a_pair_are_kept(text: str) -> None:
    assert redact_text(text) == (text, 0)


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        (
            "pg-main.internal:5432:orders:svc_orders:Tr0ub4dor&3",
            "pg-main.internal:5432:orders:svc_orders:[redacted]",
        ),
        ("*:*:*:replicator:quux-42", "*:*:*:replicator:[redacted]"),
        ("192.168.7.20:6432:*:report:pw\\:with\\:colons", "192.168.7.20:6432:*:report:[redacted]"),
        ("localhost:*:analytics:etl:hunter2  ", "localhost:*:analytics:etl:[redacted]  "),
    ],
)
def test_a_pgpass_line_has_its_password_redacted(line: str, kept: str) -> None:
    text = f"# ~/.pgpass\n{line}\n"
    assert redact_text(text)[0] == f"# ~/.pgpass\n{kept}\n"


@pytest.mark.parametrize(
    "text",
    [
        "12:30:45",
        "started 09:15:00:250 finished 09:16:01:100",
        "alpha:bravo:charlie:delta:echo",
        "de:ad:be:ef:00:01",
        "fe80::a1:b2:c3:d4",
        "2024-06-03:10:11:12:999",
        "src/app.py:42:7: E501 line too long",
        "root:x:0:0:root:/root:/bin/bash",
        "docker:x:998:alice,bob",
        "host.example.com:5432:db:user:pw:extra",
    ],
)
def test_colon_separated_text_that_is_no_pgpass_line_is_kept(text: str) -> None:
    assert redact_text(text) == (text, 0)


_KEY_LINES = [
    "-----BEGIN EC PRIVATE KEY-----",
    "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oYl6Xw0sB5bHoAoGCCqGSM49",
    "AwEHoUQDQgAEu6ZcXnCsC7w7V4rB6jY9sP4k8F9cG2aQ+xk1mN0pZ3a9pQz8sR7t",
    "-----END EC PRIVATE KEY-----",
]


@pytest.mark.parametrize(
    "doc",
    [
        {"deploy": {"ssh_material": "\n".join(_KEY_LINES) + "\n"}},
        {"deploy": {"ssh_material": "\r\n".join(_KEY_LINES)}},
        {"annotation": json.dumps({"data": "\n".join(_KEY_LINES)})},  # JSON in a JSON string
        {"deploy": {"ssh_material": _KEY_LINES}},
    ],
)
@pytest.mark.parametrize("indent", [None, 2])
def test_a_private_key_in_json_is_redacted_as_text(doc: object, indent: int | None) -> None:
    """A key inside a JSON string with ``\\n`` escapes was redacted; one escaped twice (JSON
    held in a JSON string, a ``last-applied-configuration``) or written as an array of its
    lines kept its base64 lines."""
    text = json.dumps(doc, indent=indent)
    out, n = redact_text(text)
    assert n and "MHcCAQEEIBkg" not in out and "AwEHoUQD" not in out
    json.loads(out)  # still JSON


def test_a_private_key_as_an_array_of_lines_is_redacted_as_a_value() -> None:
    value = {"lines": [*_KEY_LINES, "trailer"], "other": ["-----BEGIN RSA PRIVATE KEY-----", "a b"]}
    out, n = redact_value(value)
    assert n == 4 and out["lines"] == ["[redacted]"] * 4 + ["trailer"]
    assert out["other"] == value["other"]


def test_a_begin_marker_in_a_log_field_keeps_the_json() -> None:
    text = json.dumps({"msg": "-----BEGIN RSA PRIVATE KEY-----", "level": "info"})
    assert redact_text(text) == (text, 0)


def test_a_stashed_result_stores_no_key_nor_cookie_nor_pgpass_password(tl: Taskloom) -> None:
    rows = [
        {"id": i, "cert": "\n".join(_KEY_LINES), "dump": f"Cookie: sid=sess{i:04d}xyz"}
        for i in range(300)
    ]
    text = (
        json.dumps(rows)
        + "\n"
        + "\n".join(f"db{i}.example.net:5432:app:user{i}:pgpw{i:04d}" for i in range(300))
    )
    g = tl.guard("t1")
    out = g.stash("dump", text)
    assert out.result_id
    kept = stored(tl) + out.text
    assert "MHcCAQEEIBkg" not in kept and "sess0001xyz" not in kept and "pgpw0001" not in kept
