"""Render tool specs in each provider's format. One spec, several renderings, no copies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from taskloom.domain.errors import InvalidInput
from taskloom.tools.spec import ToolSpec


def neutral(spec: ToolSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.input_schema(),
    }


def openai_chat(spec: ToolSpec) -> dict[str, Any]:
    """OpenAI chat-completions ``tools=[...]`` entry.

    No ``strict`` key: chat completions default it to false already, and several
    OpenAI-compatible servers (NVIDIA NIM, Together, Moonshot…) refuse a request whose
    function carries ``strict`` at all, even ``false``."""
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.input_schema(),
        },
    }


def openai_responses(spec: ToolSpec) -> dict[str, Any]:
    """OpenAI Responses API ``tools=[...]`` entry (flat, no ``function`` wrapper).

    ``strict`` is false, and said: the Responses API takes a function without it as strict,
    and strict mode wants every property required, which optional arguments are not."""
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.input_schema(),
        "strict": False,
    }


def anthropic(spec: ToolSpec) -> dict[str, Any]:
    """Anthropic messages API ``tools=[...]`` entry."""
    return neutral(spec)


FORMATS: dict[str, Callable[[ToolSpec], dict[str, Any]]] = {
    "openai": openai_chat,
    "openai-responses": openai_responses,
    "anthropic": anthropic,
    "neutral": neutral,
}


def render(specs: Sequence[ToolSpec], format: str) -> list[dict[str, Any]]:
    try:
        renderer = FORMATS[format]
    except KeyError:
        raise InvalidInput(
            f"unknown tool format '{format}' (expected {'|'.join(FORMATS)})"
        ) from None
    return [renderer(s) for s in specs]
