"""Any OpenAI-compatible chat-completions endpoint: OpenAI, vLLM, llama.cpp, Ollama, LiteLLM.

``base_url`` is the API root including its version segment (``https://api.openai.com/v1``,
``http://localhost:11434/v1``); the client posts to ``{base_url}/chat/completions``. Without
one it is ``$OPENAI_BASE_URL``, else OpenAI's, as the official SDK reads it.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from taskloom.domain.errors import ProviderError
from taskloom.llm.base import Answer, HttpChat, Reply, mask_url, reply_error

DEFAULT_BASE_URL = "https://api.openai.com/v1"
REFUSED_CODES = frozenset({"unsupported_parameter", "unsupported_value"})
"""The codes of OpenAI's HTTP 400 for a field a model does not take (``param`` names it)."""
VERSIONED = re.compile(r"/v\d+[a-z0-9]*$")
"""A ``base_url`` path that ends in an API version (``/v1``, ``/v1beta``)."""
NEWER_FIELDS = {"max_tokens": "max_completion_tokens"}
"""A field some models refuse, and the one they take instead (reasoning models: o-series,
gpt-5); a refused field not named here (``temperature``) is left out."""


def refused_field(reply: Reply) -> str | None:
    """The request field an HTTP 400 says the model does not take, or ``None``."""
    try:
        error = json.loads(reply.body).get("error")
    except (ValueError, AttributeError, RecursionError):
        return None
    if not isinstance(error, dict) or error.get("code") not in REFUSED_CODES:
        return None
    param = error.get("param")
    return param if isinstance(param, str) else None


def content_text(content: Any) -> str:
    """The text of ``message.content``: a string, ``None``, or a list of parts.

    Some compatible servers send ``[{"type": "text", "text": "…"}]``: the answer is the
    parts' text, not ``str()`` of the list (a Python repr).
    """
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise ProviderError(f"message content is a {type(content).__name__}, not text")
    texts = []
    for part in content:
        text = (
            part if isinstance(part, str) else part.get("text") if isinstance(part, dict) else None
        )
        if isinstance(text, str):
            texts.append(text)
    return "".join(texts)


def parse_reply(name: str, data: Any) -> Answer:
    """The answer in a chat-completions reply. A refusal or a content filter is a failure, not
    an empty answer ("nothing found"); ``finish_reason: "length"`` marks it truncated."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError(f"{name} sent a reply without choices{reply_error(data)}")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ProviderError(f"{name} sent a choice without a message")
    refusal = message.get("refusal")
    if refusal:
        raise ProviderError(f"{name} refused: {str(refusal)[:300]}")
    if choice.get("finish_reason") == "content_filter":
        raise ProviderError(f"{name} withheld the answer (finish_reason content_filter)")
    text = content_text(message.get("content"))
    return Answer(text, truncated=choice.get("finish_reason") == "length")


def joined_chunks(events: list[Any]) -> dict[str, Any]:
    """The chat completion that streamed ``chat.completion.chunk`` events make: the deltas'
    content, refusal and tool calls (merged by their ``index``) joined, the last
    ``finish_reason`` kept. An event that carries an ``error`` is the reply."""
    content: list[str] = []
    refusal: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    for event in events:
        if not isinstance(event, dict):
            continue
        if event.get("error"):
            return event
        for choice in event.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            finish = choice.get("finish_reason") or finish
            delta = choice.get("delta") or choice.get("message")
            if not isinstance(delta, dict):
                continue
            for parts, key in ((content, "content"), (refusal, "refusal")):
                if isinstance(delta.get(key), str):
                    parts.append(delta[key])
            for call in delta.get("tool_calls") or []:
                if isinstance(call, dict):
                    _merge_call(calls.setdefault(call.get("index", 0), {}), call)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content)}
    if refusal:
        message["refusal"] = "".join(refusal)
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def _merge_call(merged: dict[str, Any], delta: dict[str, Any]) -> None:
    """One tool call's delta into the call so far: ids and names kept, arguments appended."""
    merged.setdefault("type", "function")
    for key in ("id", "type"):
        if delta.get(key):
            merged[key] = delta[key]
    function = delta.get("function")
    if isinstance(function, dict):
        into = merged.setdefault("function", {"name": "", "arguments": ""})
        if isinstance(function.get("name"), str):
            into["name"] += function["name"]
        if isinstance(function.get("arguments"), str):
            into["arguments"] += function["arguments"]


class OpenAIChat(HttpChat):
    """``OpenAIChat("gpt-4o-mini")``; the key comes from ``api_key=`` or ``$OPENAI_API_KEY``,
    the base URL from ``base_url=`` or ``$OPENAI_BASE_URL``.

    The key is stripped of surrounding whitespace; with a character a header cannot carry,
    every call raises ``ProviderError`` naming its position, never the key. A model that
    refuses ``max_tokens`` or ``temperature`` (HTTP 400, ``unsupported_parameter`` or
    ``unsupported_value``) is asked again with ``max_completion_tokens`` or without the
    temperature, and the client sends it so from then on.
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.2,
        timeout: float = 120.0,
    ) -> None:
        self._unsupported: frozenset[str] = frozenset()
        super().__init__(
            model,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
            temperature=temperature,
            timeout=timeout,
            headers={},
            api_key=api_key if api_key is not None else os.environ.get("OPENAI_API_KEY"),
        )

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {key}"}

    def joined(self, events: list[Any]) -> Any:
        return joined_chunks(events)

    def hint(self, reply: Reply) -> str:
        """A 404 from a ``base_url`` without its version segment, the usual mistake
        (``http://localhost:11434`` for Ollama's ``http://localhost:11434/v1``), or with the
        endpoint's path already in it."""
        if reply.status != 404:
            return ""
        if self.base_url.endswith("/chat/completions"):
            return (
                f"; base_url {mask_url(self.base_url)!r} ends in /chat/completions, which the"
                " client adds to it: leave that out"
            )
        if VERSIONED.search(self.base_url):
            return ""
        return (
            f"; base_url {mask_url(self.base_url)!r} has no version segment: requests go to"
            " {base_url}/chat/completions, so an OpenAI-compatible server's base_url usually"
            " ends in /v1"
        )

    def adjusted(self, body: dict[str, Any], reply: Reply) -> dict[str, Any] | None:
        field = refused_field(reply)
        if field is None or field not in body or field in ("model", "messages"):
            return None
        self._unsupported = self._unsupported | {field}  # one swap: other threads read it
        return self._fields(body)

    def _fields(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` in the fields this endpoint's model takes, as far as it has said."""
        out = dict(body)
        for field in self._unsupported & out.keys():
            value = out.pop(field)
            if field in NEWER_FIELDS:
                out[NEWER_FIELDS[field]] = value
        return out

    def complete(self, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
        with self.mapped_errors():
            data = self.post_json(
                f"{self.base_url}/chat/completions",
                self._fields(
                    {
                        "model": self.model,
                        "messages": [
                            {"role": "system", "content": system},
                            {"role": "user", "content": prompt},
                        ],
                        "max_tokens": max_tokens,
                        "temperature": self.temperature,
                    }
                ),
            )
            return parse_reply(self.name, data)
