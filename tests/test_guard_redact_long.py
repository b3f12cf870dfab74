"""Redaction over long lines: memory stays near the text's size, and every key block and
command credential is redacted whole and counted."""

from __future__ import annotations

import tracemalloc

import pytest

from taskloom.domain.redact import REDACTED, redact_text

N = 1_000_000


def _peak(text: str) -> tuple[tuple[str, int], int]:
    tracemalloc.start()
    try:
        out = redact_text(text)
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "text",
    [
        "x://u:" + "a" * N + "@host.com/db",  # a URL's password
        "run --password=" + "a" * N,  # a flag's value
        "mysql -p" + "a" * N,  # a command
        " ".join(f"curl -u user{i}:pw{i}x http://h/{i}" for i in range(N // 40)),
        "-----BEGIN PRIVATE KEY-----\n" + "QUJD\n" * (N // 5) + "-----END PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----" + "\\nQUJD" * (N // 6),  # as a JSON string's escapes
    ],
    ids=["url", "flag", "mysql", "curl", "pem", "pem-escaped"],
)
def test_a_long_line_is_redacted_in_memory_near_its_size(text: str) -> None:
    """A match over a long line holds no backtracking state for each of its characters."""
    (_out, n), peak = _peak(text)
    assert n >= 1
    assert peak < 6 * len(text) + (1 << 20)


def test_an_encrypted_key_block_is_redacted_whole() -> None:
    """A key block with header lines (``Proc-Type: 4,ENCRYPTED``) is redacted whole, not up
    to the first header's first word."""
    text = (
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"
        "DEK-Info: AES-128-CBC,ABCDEF0123456789\nMIIEpAIBAAKCAQEAx7abc\n"
        "dGhpcyBpcyBzZWNyZXQ=\n-----END RSA PRIVATE KEY-----\nok"
    )
    assert redact_text(text) == (f"{REDACTED}\nok", 1)


def test_each_credential_of_a_command_is_counted() -> None:
    text = "curl -u alice:pw1 --proxy-user bob:pw2 https://h\nmysql -psecret3 db"
    out, n = redact_text(text)
    assert "pw1" not in out and "pw2" not in out and "secret3" not in out
    assert n == 3


GH = "ghp_" + "a1" * 18
PAT = "github_pat_" + "b2" * 16
AWS = "AKIA" + "ABCDEFGH12345678"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (f"{GH} and {PAT}", f"{REDACTED} and {REDACTED}"),
        (f"{PAT}", REDACTED),
        (f"x{PAT} x{GH} -{AWS} _{AWS}", None),
        (f"{AWS}\n{AWS}", f"{REDACTED}\n{REDACTED}"),
        ("--token=abc123 a--token=abc123", f"--token={REDACTED} a--token=abc123"),
        ("Proxy-Authorization: Bearer abcdef12", f"Proxy-Authorization: Bearer {REDACTED}"),
        ("AUTHORIZATION: Basic abcdef12", f"AUTHORIZATION: Basic {REDACTED}"),
        ("xAuthorization: Bearer abcdef12 xproxy-Authorization basic", None),
        ("curl -u bob:pw1 x\nmysql -psecret1", f"curl -u bob:{REDACTED} x\nmysql -p{REDACTED}"),
        ("xcurl -u bob:pw1 ymysql -psecret1 my-mysql -psecret1", None),
    ],
)
def test_a_rule_that_starts_with_a_literal_keeps_its_word_boundary(
    text: str, redacted: str | None
) -> None:
    """The rules look for their first characters at C speed and check the boundary before
    them after: a 20 MB base64 line took seconds when every position was tried."""
    assert redact_text(text)[0] == (text if redacted is None else redacted)
    blob = "QUJD+/9z" * 2_000
    assert redact_text(blob + " " + text)[0] == blob + " " + (redacted or text)
