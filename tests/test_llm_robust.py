"""Providers that misbehave: keys that leak, replies that trickle, answers that are malformed,
refused, empty, cut off or far too long. Each is a real HTTP server on loopback."""

from __future__ import annotations

import json
import re
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from taskloom.client import Taskloom
from taskloom.domain.errors import ProviderError
from taskloom.guard import GuardConfig
from taskloom.llm.anthropic import AnthropicChat
from taskloom.llm.openai import OpenAIChat
from taskloom.tools.registry import ToolContext
from tests.test_llm_guard import SECRET, FakeProvider, big_log, send


def replying(payload: Any) -> Any:
    """A raw reply of ``payload`` as JSON, whatever it holds."""
    return lambda handler, system, prompt: send(handler, 200, json.dumps(payload).encode())


def openai_choice(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", **message}, "finish_reason": finish}]}


def extract_cfg(url: str, **over: Any) -> GuardConfig:
    base: dict[str, Any] = dict(
        threshold_tokens=300, chunk_tokens=800, llm=OpenAIChat("m", base_url=url, api_key=SECRET)
    )
    base.update(over)
    return GuardConfig(**base)


def stash_log(tl: Taskloom, cfg: GuardConfig) -> str:
    return tl.guard("t1", cfg).stash("bash", big_log()).result_id or ""


# --- 1. keys ------------------------------------------------------------------------------------


@pytest.mark.parametrize("pasted", [SECRET + "\n", " " + SECRET + "\u00a0", "\t" + SECRET])
def test_a_key_pasted_with_surrounding_whitespace_is_stripped(
    openai_server: tuple[FakeProvider, str], pasted: str
) -> None:
    provider, url = openai_server
    assert OpenAIChat("m", base_url=url, api_key=pasted).complete("s", "p") == "ok"
    assert provider.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_key_no_header_can_carry_fails_every_call_without_the_key(kind: str) -> None:
    """A smart-quoted key made httpx raise an error whose repr held ``Bearer sk-…``."""
    client = OpenAIChat if kind == "openai" else AnthropicChat
    llm = client("m", base_url="http://127.0.0.1:9", api_key=f"\u201c{SECRET}\u201d")
    with pytest.raises(ProviderError, match=r"U\+201C at position 1") as info:
        llm.complete("s", "p")
    assert SECRET not in str(info.value) and "sk-" not in str(info.value)


def echo_key(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
    auth = handler.headers.get("authorization") or handler.headers.get("x-api-key")
    send(handler, 401, json.dumps({"error": f"Incorrect API key provided: {auth}"}).encode())


def test_a_key_echoed_across_the_preview_cut_leaves_no_part_of_it(
    openai_server: tuple[FakeProvider, str],
) -> None:
    """The reply was cut to its first 300 characters before the key was replaced: a key
    straddling the cut no longer matched, and its first characters were kept."""
    provider, url = openai_server

    def echo_late(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
        auth = handler.headers.get("authorization")
        send(handler, 401, ("x" * 285 + f" {auth} " + "y" * 50).encode())

    provider.raw = echo_late
    with pytest.raises(ProviderError) as info:
        OpenAIChat("m", base_url=url, api_key=SECRET).complete("s", "p")
    assert SECRET[:8] not in str(info.value)


def test_a_401_that_echoes_the_key_is_redacted_everywhere(
    tl: Taskloom,
    openai_server: tuple[FakeProvider, str],
    anthropic_server: tuple[FakeProvider, str],
) -> None:
    for provider, url, client in (
        (*openai_server, OpenAIChat),
        (*anthropic_server, AnthropicChat),
    ):
        provider.raw = echo_key
        with pytest.raises(ProviderError, match=r"HTTP 401.*\[redacted\]") as info:
            client("m", base_url=url, api_key=SECRET).complete("s", "p")
        assert SECRET not in str(info.value)
    cfg = tl.guard_config = extract_cfg(openai_server[1], summarize=True)
    rid = stash_log(tl, cfg)
    assert SECRET not in (tl.guard("t1", cfg).breaker()["last_error"] or "x")
    args = {"result_id": rid, "query": "which tenant was throttled"}
    tool = tl.tools.dispatch("extract_from_result", args, ToolContext(thread_id="t1"))
    assert "HTTP 401" in tool.content and SECRET not in tool.content


# --- 2. wall-clock deadline ---------------------------------------------------------------------


def trickle(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
    """Headers, then a byte every 0.2 s: no single read ever waits long enough to time out."""
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", "100000")
    handler.end_headers()
    try:
        for _ in range(25):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.2)
    except OSError:
        pass


def test_a_server_that_trickles_bytes_is_cut_off_at_the_timeout(
    openai_server: tuple[FakeProvider, str],
) -> None:
    provider, url = openai_server
    provider.raw = trickle
    started = time.monotonic()
    with pytest.raises(ProviderError, match="timed out after 1 s"):
        OpenAIChat("m", base_url=url, api_key=SECRET, timeout=1).complete("s", "p")
    assert time.monotonic() - started < 2.5


# --- 3. malformed replies -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("anthropic", json.dumps({"content": ["hello"]}).encode()),
        ("anthropic", b"[" * 100_000 + b"]" * 100_000),
        ("openai", b"[" * 100_000 + b"]" * 100_000),
        ("openai", json.dumps(openai_choice({"content": {"text": "hi"}})).encode()),
    ],
    ids=["anthropic-string-blocks", "anthropic-deep-nesting", "openai-deep-nesting", "dict"],
)
def test_malformed_replies_are_provider_errors(
    openai_server: tuple[FakeProvider, str],
    anthropic_server: tuple[FakeProvider, str],
    kind: str,
    body: bytes,
) -> None:
    provider, url = openai_server if kind == "openai" else anthropic_server
    provider.raw = lambda handler, system, prompt: send(handler, 200, body)
    client = OpenAIChat if kind == "openai" else AnthropicChat
    with pytest.raises(ProviderError):
        client("m", base_url=url, api_key=SECRET).complete("s", "p")


def test_a_malformed_summary_reply_is_a_counted_failure_not_a_crash(
    tl: Taskloom, anthropic_server: tuple[FakeProvider, str]
) -> None:
    provider, url = anthropic_server
    provider.raw = replying({"content": ["hello"]})
    llm = AnthropicChat("c", base_url=url, api_key=SECRET)
    cfg = GuardConfig(threshold_tokens=300, summarize=True, llm=llm)
    out = tl.guard("t1", cfg).stash("bash", big_log())
    assert out.mode == "stashed" and not out.summarized
    assert tl.guard("t1", cfg).breaker()["failures"] == 1


def test_a_malformed_chunk_fails_alone_and_the_others_answer(
    tl: Taskloom, anthropic_server: tuple[FakeProvider, str]
) -> None:
    provider, url = anthropic_server

    def reply(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
        chunk = re.search(r"Chunk (\d+) of", prompt)
        blocks: list[Any] = [{"type": "text", "text": f"found in {chunk and chunk.group(1)}"}]
        payload = {"content": ["oops"] if chunk and chunk.group(1) == "2" else blocks}
        send(handler, 200, json.dumps(payload).encode())

    provider.raw = reply
    cfg = extract_cfg(url, llm=AnthropicChat("c", base_url=url, api_key=SECRET))
    out = tl.guard("t1", cfg).extract(stash_log(tl, cfg), "which tenant was throttled")
    assert "1 failed" in out.splitlines()[0] and "FAILED chunk 2" in out
    assert "found in 1" in out


# --- 4-6. answer sizes, refusals, empty and cut-off answers -------------------------------------


def test_a_map_reduce_answer_is_capped_and_says_how_to_get_more(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    provider, url = openai_server
    provider.reply = lambda system, prompt: (200, "[chunk 1] " + "word " * 40_000)
    cfg = extract_cfg(url, extract_cap_tokens=500)
    g = tl.guard("t1", cfg)
    out = g.extract(stash_log(tl, cfg), "which tenant was throttled")
    assert g.count(out) < 900
    assert "answer cut at 500 of its" in out and "read_result(lines=...)" in out


def test_an_oversized_or_cut_off_summary_is_a_failed_summary(
    tl: Taskloom, anthropic_server: tuple[FakeProvider, str]
) -> None:
    provider, url = anthropic_server
    cfg = GuardConfig(
        threshold_tokens=300, summarize=True, llm=AnthropicChat("c", base_url=url, api_key=SECRET)
    )
    payload = big_log(2000)
    provider.reply = lambda system, prompt: (200, "fact " * 5_000)  # shorter than the output
    out = tl.guard("t1", cfg).stash("bash", payload)
    assert not out.summarized and out.tokens < 1_000
    assert "over 2,000" in tl.guard("t1", cfg).breaker()["last_error"]
    provider.raw = replying(
        {"content": [{"type": "text", "text": "a summary that"}], "stop_reason": "max_tokens"}
    )
    assert not tl.guard("t1", cfg).stash("bash", payload + "\nmore").summarized
    assert "token limit" in tl.guard("t1", cfg).breaker()["last_error"]


@pytest.mark.parametrize(
    ("kind", "payload", "error"),
    [
        ("openai", openai_choice({"content": None, "refusal": "I can't help"}), "refused"),
        ("openai", openai_choice({"content": ""}), "empty answer"),
        ("anthropic", {"content": [], "stop_reason": "refusal"}, "refused"),
    ],
    ids=["openai-refusal", "openai-empty", "anthropic-refusal"],
)
def test_a_refused_or_empty_chunk_is_failed_not_nothing_found(
    tl: Taskloom,
    openai_server: tuple[FakeProvider, str],
    anthropic_server: tuple[FakeProvider, str],
    kind: str,
    payload: dict[str, Any],
    error: str,
) -> None:
    provider, url = openai_server if kind == "openai" else anthropic_server
    provider.raw = replying(payload)
    llm = (OpenAIChat if kind == "openai" else AnthropicChat)("m", base_url=url, api_key=SECRET)
    cfg = extract_cfg(url, llm=llm)
    out = tl.guard("t1", cfg).extract(stash_log(tl, cfg), "which tenant was throttled")
    chunks = re.search(r"(\d+) chunks?\b", out)
    assert chunks and f"{chunks.group(1)} failed" in out.splitlines()[0]
    assert "FAILED chunk 1 (lines 1-" in out and error in out


def test_a_chunk_answer_cut_at_max_tokens_is_marked_as_cut(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    provider, url = openai_server
    provider.raw = replying(openai_choice({"content": "tenant-7 throttl"}, finish="length"))
    cfg = extract_cfg(url, chunk_tokens=12_000)  # one chunk, one call
    out = tl.guard("t1", cfg).extract(stash_log(tl, cfg), "which tenant was throttled")
    assert "tenant-7 throttl\n…(answer cut at the model's token limit" in out


# --- 8. exact queries and the chunk limit -------------------------------------------------------


def test_an_exact_query_that_misses_is_answered_without_the_llm(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    provider, url = openai_server
    cfg = extract_cfg(url)
    g = tl.guard("t1", cfg)
    rid = g.stash("api", json.dumps({"items": [{"id": i} for i in range(400)]})).result_id or ""
    assert "JSONPath matches nothing" in g.extract(rid, "$.items[?(@.id==-5)]")
    assert "regex matches no line" in g.extract(rid, "/no-such-token/")
    assert provider.requests == []


def test_a_result_over_max_chunks_is_not_map_reduced(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    provider, url = openai_server
    cfg = extract_cfg(url, max_chunks=2)
    out = tl.guard("t1", cfg).extract(stash_log(tl, cfg), "which tenant was throttled")
    assert "no LLM map-reduce" in out and "over max_chunks=2" in out
    assert provider.requests == []


# --- 10, 12. content parts and the reduce step --------------------------------------------------


def test_openai_content_parts_are_joined(openai_server: tuple[FakeProvider, str]) -> None:
    provider, url = openai_server
    parts = [{"type": "text", "text": "hel"}, {"type": "text", "text": "lo"}]
    provider.raw = replying(openai_choice({"content": parts}))
    assert OpenAIChat("m", base_url=url, api_key=SECRET).complete("s", "p") == "hello"


def test_a_reduce_that_drops_the_labels_falls_back_to_the_labelled_partials(
    tl: Taskloom, openai_server: tuple[FakeProvider, str]
) -> None:
    provider, url = openai_server

    def reply(system: str, prompt: str) -> tuple[int, str]:
        chunk = re.search(r"Chunk (\d+) of", prompt)
        return 200, f"tenant-{chunk.group(1)} throttled" if chunk else "some tenants throttled"

    provider.reply = reply
    cfg = extract_cfg(url)
    out = tl.guard("t1", cfg).extract(stash_log(tl, cfg), "which tenant was throttled")
    assert "some tenants throttled" not in out and "named no [chunk N] source" in out
    assert re.search(r"\[chunk 2/\d+ · lines \d+-\d+\]\ntenant-2 throttled", out)


@pytest.mark.parametrize("client", [OpenAIChat, AnthropicChat])
def test_a_password_in_the_base_url_stays_out_of_repr_and_errors(
    client: type[OpenAIChat] | type[AnthropicChat],
) -> None:
    """``repr(OpenAIChat(base_url="http://user:pa55word@host/v1"))`` printed the password."""
    llm = client("m", base_url="http://user:pa55word@127.0.0.1:9/v1", api_key=SECRET)
    assert "pa55word" not in repr(llm) and "user:[redacted]@127.0.0.1:9" in repr(llm)
    with pytest.raises(ProviderError) as info:
        llm.complete("s", "p")
    assert "pa55word" not in str(info.value)
    plain = client("m", base_url="http://127.0.0.1:9/v1")
    assert "base_url='http://127.0.0.1:9/v1'" in repr(plain)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_proxys_html_error_page_is_one_line_per_failed_chunk(
    tl: Taskloom,
    openai_server: tuple[FakeProvider, str],
    anthropic_server: tuple[FakeProvider, str],
    kind: str,
) -> None:
    """A gateway's 502 page put its newlines and escape codes into each FAILED chunk line of
    the extract, so the model saw lines of HTML and the chunk's "read it with
    read_result(lines=...)" advice on a line of its own."""
    provider, url = openai_server if kind == "openai" else anthropic_server
    page = b"<html>\r\n<head><title>502 Bad Gateway</title></head>\n<body>\x1b[31mnginx</body>\n"
    provider.raw = lambda handler, system, prompt: send(handler, 502, page)
    llm = (OpenAIChat if kind == "openai" else AnthropicChat)("m", base_url=url, api_key=SECRET)
    with pytest.raises(ProviderError) as info:
        llm.complete("s", "p")
    assert info.value.message == (
        f"{llm.name} answered HTTP 502: <html> <head><title>502 Bad Gateway</title></head>"
        " <body>\\x1b[31mnginx</body>"
    )
    cfg = extract_cfg(url, llm=llm)
    out = tl.guard("t1", cfg).extract(stash_log(tl, cfg), "which tenant was throttled")
    failed = [line for line in out.splitlines() if line.startswith("FAILED chunk")]
    assert failed and all(line.endswith("read it with read_result(lines=...)") for line in failed)
    assert "\x1b" not in out and not any(line.startswith("<") for line in out.splitlines())
