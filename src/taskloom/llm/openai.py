"""Any OpenAI-compatible chat-completions endpoint: OpenAI, vLLM, llama.cpp, Ollama, LiteLLM.

``base_url`` is the API root including its version segment (``https://api.openai.com/v1``,
``http://localhost:11434/v1``); the client posts to ``{base_url}/chat/completions``.
"""

from __future__ import annotations

import os

from taskloom.llm.base import HttpChat, map_http_errors


class OpenAIChat(HttpChat):
    """``OpenAIChat("gpt-4o-mini")``; the key comes from ``api_key=`` or ``$OPENAI_API_KEY``."""

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        temperature: float = 0.2,
        timeout: float = 120.0,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        super().__init__(
            model,
            base_url=base_url,
            temperature=temperature,
            timeout=timeout,
            headers={"authorization": f"Bearer {key}"} if key else {},
        )

    def complete(self, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
        data = self.post_json(
            f"{self.base_url}/chat/completions",
            {
                "model": self.model,
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": prompt},
                ],
                "max_tokens": max_tokens,
                "temperature": self.temperature,
            },
        )
        with map_http_errors(self.name):
            return str(data["choices"][0]["message"]["content"] or "")
