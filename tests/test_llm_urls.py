"""A password in ``base_url`` stays out of reprs and errors however the URL is malformed, and
redaction does not mangle an error over a secret too short to hide anything."""

from __future__ import annotations

import pytest

from taskloom.domain.errors import ProviderError
from taskloom.llm.anthropic import AnthropicChat
from taskloom.llm.openai import OpenAIChat
from tests.test_llm_guard import SECRET

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
