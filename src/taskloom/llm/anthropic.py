"""Anthropic's Messages API (``POST {base_url}/v1/messages``)."""

from __future__ import annotations

import os

from taskloom.llm.base import HttpChat, map_http_errors

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicChat(HttpChat):
    """``AnthropicChat("claude-haiku-4-5")``; the key comes from ``api_key=`` or
    ``$ANTHROPIC_API_KEY``."""

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.anthropic.com",
        api_key: str | None = None,
        temperature: float = 0.2,
        timeout: float = 120.0,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if key:
            headers["x-api-key"] = key
        super().__init__(
            model, base_url=base_url, temperature=temperature, timeout=timeout, headers=headers
        )

    def complete(self, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
        data = self.post_json(
            f"{self.base_url}/v1/messages",
            {
                "model": self.model,
                "system": system,
                "messages": [{"role": "user", "content": prompt}],
                "max_tokens": max_tokens,
                "temperature": self.temperature,
            },
        )
        with map_http_errors(self.name):
            return "".join(b.get("text", "") for b in data["content"] if b.get("type") == "text")
