"""Anthropic's Messages API (``POST {base_url}/v1/messages``; a ``base_url`` that already ends
in ``/v1`` is not given a second one). Without a ``base_url`` it is ``$ANTHROPIC_BASE_URL``,
else Anthropic's, as the official SDK reads it."""

from __future__ import annotations

import os
from typing import Any

from taskloom.domain.errors import ProviderError
from taskloom.llm.base import Answer, HttpChat, reply_error

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"


def parse_reply(name: str, data: Any) -> Answer:
    """The text blocks of a Messages reply. ``stop_reason: "refusal"`` is a failure, not an
    empty answer; ``"max_tokens"`` marks the answer truncated. A 200 reply of
    ``{"type": "error"}`` or with blocks that are not objects is a failure too."""
    if not isinstance(data, dict) or data.get("type") == "error":
        raise ProviderError(
            f"{name} sent an error or a reply that is not a message{reply_error(data)}"
        )
    if data.get("stop_reason") == "refusal":
        raise ProviderError(f"{name} refused to answer (stop_reason refusal)")
    blocks = data.get("content")
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        raise ProviderError(f"{name} sent a message whose content is not a list of blocks")
    texts = [b.get("text") for b in blocks if b.get("type") == "text"]
    text = "".join(t for t in texts if isinstance(t, str))
    return Answer(text, truncated=data.get("stop_reason") == "max_tokens")


def joined_events(events: list[Any]) -> Any:
    """The message that streamed Messages events make: the text blocks' text (as started,
    then each ``text_delta``) joined, the ``stop_reason`` of ``message_delta`` kept. An
    ``error`` event is the reply."""
    texts: list[str] = []
    stop = None
    for event in events:
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "error":
            return event
        block, delta = event.get("content_block"), event.get("delta")
        if kind == "content_block_start" and isinstance(block, dict):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        elif kind == "content_block_delta" and isinstance(delta, dict):
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                texts.append(delta["text"])
        elif kind == "message_delta" and isinstance(delta, dict):
            stop = delta.get("stop_reason") or stop
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "".join(texts)}],
        "stop_reason": stop,
    }


class AnthropicChat(HttpChat):
    """``AnthropicChat("claude-haiku-4-5")``; the key comes from ``api_key=`` or
    ``$ANTHROPIC_API_KEY``, stripped of surrounding whitespace (see ``llm.base.clean_key``);
    the base URL from ``base_url=`` or ``$ANTHROPIC_BASE_URL``."""

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.2,
        timeout: float = 120.0,
    ) -> None:
        super().__init__(
            model,
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL,
            temperature=temperature,
            timeout=timeout,
            headers={"anthropic-version": ANTHROPIC_VERSION},
            api_key=api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY"),
        )

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"x-api-key": key}

    def joined(self, events: list[Any]) -> Any:
        return joined_events(events)

    def complete(self, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
        with self.mapped_errors():
            data = self.post_json(
                f"{self.base_url.removesuffix('/v1')}/v1/messages",
                {
                    "model": self.model,
                    "system": system,
                    "messages": [{"role": "user", "content": prompt}],
                    "max_tokens": max_tokens,
                    "temperature": self.temperature,
                },
            )
            return parse_reply(self.name, data)
