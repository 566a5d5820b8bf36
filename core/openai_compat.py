"""One client for every OpenAI-compatible API NeuroMem calls: the embedding provider, the LLM
extractor and the LLM pattern detector.

A call refuses to run inside a database transaction: it can take seconds (LLM_TIMEOUT is 30),
and a transaction held open that long holds its locks (the write path's per-user lock among
them) and a connection. Call providers first, then write in one atomic block.
"""

from typing import Any

import httpx
from django.conf import settings
from django.db import connections


def openai_settings(prefix: str) -> dict[str, Any]:
    """`<prefix>_API_BASE`, `_API_KEY`, `_MODEL` and `_TIMEOUT` as a caller's arguments
    (`LLM`: the extractor and the pattern detector; `EMBEDDING`: the embedding provider)."""
    return {
        "base_url": getattr(settings, f"{prefix}_API_BASE"),
        "api_key": getattr(settings, f"{prefix}_API_KEY"),
        "model": getattr(settings, f"{prefix}_MODEL"),
        "timeout": getattr(settings, f"{prefix}_TIMEOUT"),
    }


class OpenAICompatibleError(Exception):
    """The API failed or answered something unusable."""


class CalledInTransaction(RuntimeError):
    """A provider was called with a database transaction open (a bug in the caller)."""


class OpenAICompatibleClient:
    def __init__(self, *, base_url: str, api_key: str, timeout: float) -> None:
        self.http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            timeout=timeout,
        )

    def post_json(self, path: str, body: dict[str, Any]) -> Any:
        """POST `body` to `path`; the decoded JSON answer."""
        open_transactions = [
            connection.alias
            for connection in connections.all(initialized_only=True)
            # A test case's own wrapping atomic blocks are not the caller's transaction.
            if any(not block._from_testcase for block in connection.atomic_blocks)
        ]
        if open_transactions:
            raise CalledInTransaction(
                f"{self.http.base_url}{path} called inside a transaction on {open_transactions}"
            )
        try:
            response = self.http.post(path, json=body)
            response.raise_for_status()
            return response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise OpenAICompatibleError(str(error)) from error

    def embeddings(self, *, model: str, texts: list[str], dimensions: int) -> list[list[float]]:
        answer = self.post_json(
            "/embeddings", {"model": model, "input": texts, "dimensions": dimensions}
        )
        try:
            return [item["embedding"] for item in sorted(answer["data"], key=lambda i: i["index"])]
        except (KeyError, TypeError) as error:
            raise OpenAICompatibleError(f"unexpected answer: {error}") from error

    def chat_json(self, *, model: str, messages: list[dict[str, str]]) -> str:
        """The content of the first choice of a chat completion asked for a JSON object."""
        answer = self.post_json(
            "/chat/completions",
            {"model": model, "response_format": {"type": "json_object"}, "messages": messages},
        )
        try:
            return answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as error:
            raise OpenAICompatibleError(f"unexpected answer: {error}") from error
