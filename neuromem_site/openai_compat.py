import httpx


def openai_compatible_client(*, base_url: str, api_key: str, timeout: float) -> httpx.Client:
    """An HTTP client for an OpenAI-compatible API (the embedding provider, the LLM extractor)."""
    return httpx.Client(
        base_url=base_url.rstrip("/"),
        headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
        timeout=timeout,
    )
