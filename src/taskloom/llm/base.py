"""The one protocol the guard needs from a model: a system prompt and a user prompt in, text out.

Providers map their own failures (HTTP errors, timeouts, malformed answers) onto
:class:`~taskloom.domain.errors.ProviderError` at this boundary, so the summarizer and the
map-reduce can count failures without knowing httpx. API keys live only in the client's
private headers: never in a repr, a log line, an error message or a payload we store.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from taskloom.domain.errors import ProviderError

if TYPE_CHECKING:
    import httpx


@runtime_checkable
class ChatModel(Protocol):
    """Anything that can answer one prompt. ``name`` is shown in logs and reports."""

    name: str

    def complete(self, system: str, prompt: str, *, max_tokens: int = 1024) -> str:
        """Return the model's text answer, or raise ``ProviderError``."""
        ...


@contextmanager
def map_http_errors(provider: str) -> Iterator[None]:
    """Turn httpx failures into ``ProviderError`` whose text carries no request headers."""
    import httpx

    try:
        yield
    except httpx.HTTPStatusError as exc:
        body = exc.response.text[:300]
        raise ProviderError(
            f"{provider} answered HTTP {exc.response.status_code}: {body}"
        ) from None
    except httpx.HTTPError as exc:
        raise ProviderError(f"{provider} request failed: {type(exc).__name__}: {exc}") from None
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ProviderError(f"{provider} sent an unexpected response: {exc!r}") from None


class HttpChat:
    """Shared plumbing of the HTTP providers: one httpx client per OS thread (the map-reduce
    calls from a small pool), secret headers kept out of ``repr``, errors mapped."""

    provider = "http"

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        temperature: float,
        timeout: float,
        headers: dict[str, str],
    ) -> None:
        self.model = model
        self.name = f"{self.provider}:{model}"
        self.base_url = base_url.rstrip("/")
        self.temperature = temperature
        self.timeout = timeout
        self._headers = {"content-type": "application/json", **headers}
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    def _client(self) -> httpx.Client:
        client: httpx.Client | None = getattr(self._local, "client", None)
        if client is None:
            import httpx

            client = self._local.client = httpx.Client(timeout=self.timeout)
        return client

    def post_json(self, url: str, body: dict[str, Any]) -> Any:
        with map_http_errors(self.name):
            response = self._client().post(url, json=body, headers=self._headers)
            response.raise_for_status()
            return response.json()
