"""A password in ``base_url`` stays out of reprs and errors however the URL is malformed, and
redaction does not mangle an error over a secret too short to hide anything, and a redirect is
not followed but named."""

from __future__ import annotations

import base64
import logging
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from taskloom.domain.errors import ProviderError
from taskloom.llm.anthropic import AnthropicChat
from taskloom.llm.openai import OpenAIChat
from tests.test_llm_guard import SECRET, FakeProvider

MALFORMED = [
    ("http://user:hun#ter22@127.0.0.1:9/v1", ["hun#ter22", "'hun'", "ter22"]),
    ("http://user:hun/ter22@127.0.0.1:9/v1", ["hun/ter22", "'hun'", "ter22"]),
    ("http://user:hun?ter22@127.0.0.1:9/v1", ["hun?ter22", "'hun'", "ter22"]),
    ("http://user:hunter22@[bad/v1", ["hunter22"]),
]


@pytest.mark.parametrize("client", [OpenAIChat, AnthropicChat])
@pytest.mark.parametrize(("url", "pieces"), MALFORMED)
def test_a_password_urlsplit_cannot_parse_is_masked_in_repr_and_errors(
    client: type[OpenAIChat] | type[AnthropicChat], url: str, pieces: list[str]
) -> None:
    """``urlsplit`` failed or misread these, so the repr printed the password, and httpx's
    "Invalid port: 'hun'" quoted a piece of it in the error."""
    llm = client("m", base_url=url, api_key=SECRET)
    assert "user:[redacted]@" in repr(llm)
    with pytest.raises(ProviderError) as info:
        llm.complete("s", "p")
    for piece in pieces:
        assert piece not in repr(llm) and piece not in str(info.value)


def test_a_one_character_secret_does_not_mangle_errors() -> None:
    """Every "1" of "[Errno 111] Connection refused" became "[redacted]"."""
    llm = OpenAIChat("m", base_url="http://u:1@127.0.0.1:9/v1", api_key="k")
    with pytest.raises(ProviderError) as info:
        llm.complete("s", "p")
    assert "Errno 111" in str(info.value) and "[redacted]" not in str(info.value)
    assert "u:[redacted]@127.0.0.1:9" in repr(llm)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_redirect_is_not_followed_and_the_error_names_where_it_points(
    kind: str, request: pytest.FixtureRequest
) -> None:
    """A base_url that redirects (``http://`` moved to ``https://``) failed with "answered
    HTTP 307: " and nothing after it. The key still goes nowhere else; the error says where
    the redirect points, so base_url can be set to it."""
    server: tuple[FakeProvider, str] = request.getfixturevalue(f"{kind}_server")
    provider, url = server
    target = f"https://elsewhere.example/v1?key={SECRET}"

    def moved(handler: BaseHTTPRequestHandler, system: str, prompt: str) -> None:
        handler.send_response(307)
        handler.send_header("location", target)
        handler.send_header("content-length", "0")
        handler.end_headers()

    provider.raw = moved
    client: Any = OpenAIChat if kind == "openai" else AnthropicChat
    with pytest.raises(ProviderError) as info:
        client("m", base_url=url, api_key=SECRET).complete("s", "p")
    message = str(info.value)
    assert "HTTP 307; it redirects to 'https://elsewhere.example/v1?key=[redacted]'" in message
    assert "not followed" in message and "set base_url" in message and SECRET not in message
    assert len(provider.requests) == 1


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_password_in_the_base_url_stays_out_of_the_http_log(
    kind: str, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    """httpx logs every request's URL at INFO as it is: a host that logs at INFO wrote
    ``http://user:pa55word@host/v1/chat/completions`` to its log. The credentials still
    reach the server, as basic auth."""
    server: tuple[FakeProvider, str] = request.getfixturevalue(f"{kind}_server")
    provider, url = server
    with_password = url.replace("http://", "http://us%40er:pa55%23word@")
    client: Any = OpenAIChat if kind == "openai" else AnthropicChat
    with caplog.at_level(logging.DEBUG):
        assert client("m", base_url=with_password, api_key=SECRET).complete("s", "p") == "ok"
    assert "HTTP Request: POST" in caplog.text and "pa55" not in caplog.text
    assert all("pa55" not in r.getMessage() for r in caplog.records)
    [sent] = provider.requests
    basic = base64.b64encode(b"us@er:pa55#word").decode()
    assert sent["headers"]["Authorization"] == f"Basic {basic}"


def test_an_anthropic_base_url_ending_in_v1_is_not_given_a_second_one(
    anthropic_server: tuple[FakeProvider, str],
) -> None:
    """``base_url="https://api.anthropic.com/v1"`` (as OpenAI's is written) posted to
    ``/v1/v1/messages`` and every call failed with HTTP 404."""
    provider, url = anthropic_server
    for base in (url, url + "/", url + "/v1", url + "/v1/"):
        assert AnthropicChat("m", base_url=base, api_key=SECRET).complete("s", "p") == "ok"
    assert [r["path"] for r in provider.requests] == ["/v1/messages"] * 4
