"""Thin LLM provider clients behind one protocol (:class:`~taskloom.llm.base.ChatModel`).

Import the client you need from its module (``taskloom.llm.openai``, ``taskloom.llm.anthropic``);
both need the ``llm`` extra (httpx), which ``import taskloom`` never imports.
"""

from __future__ import annotations

from taskloom.llm.base import ChatModel

__all__ = ["ChatModel"]
