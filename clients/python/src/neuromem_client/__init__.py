"""NeuroMem's Python client: `NeuroMem` and `AsyncNeuroMem` over the REST API (/api/v1/),
and `neuromem_client.langgraph.NeuroMemStore` (the `[langgraph]` extra)."""

from neuromem_client._core import VERSION, ClientOptions
from neuromem_client.async_client import AsyncNeuroMem
from neuromem_client.client import NeuroMem
from neuromem_client.errors import (
    Conflict,
    ConnectionFailed,
    Forbidden,
    NeuroMemError,
    NotFound,
    RateLimited,
    RequestTimeout,
    Unauthorized,
    Unavailable,
    ValidationFailed,
)

__version__ = VERSION
__all__ = [
    "AsyncNeuroMem",
    "ClientOptions",
    "Conflict",
    "ConnectionFailed",
    "Forbidden",
    "NeuroMem",
    "NeuroMemError",
    "NotFound",
    "RateLimited",
    "RequestTimeout",
    "Unauthorized",
    "Unavailable",
    "ValidationFailed",
    "__version__",
]
