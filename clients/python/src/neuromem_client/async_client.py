"""The asynchronous client: `AsyncNeuroMem(base_url=…, token=…)`, the synchronous one's
calls as coroutines (and its listings as async iterators)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import httpx

from neuromem_client._api import BaseClient
from neuromem_client._calls import Listing
from neuromem_client._core import Operation, Request, Retry, Steps, http_arguments, page
from neuromem_client.errors import NeuroMemError, envelope_of

T = TypeVar("T")


class AsyncNeuroMem(BaseClient[Awaitable[httpx.Response]]):
    """NeuroMem's client with coroutines: use it within one event loop, and close it
    (`await aclose()`, or `async with`) to release its connections. `ClientOptions` explains
    the keyword arguments."""

    _HTTP = httpx.AsyncClient
    _http: httpx.AsyncClient

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncNeuroMem:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- Transport: `NeuroMem`'s, awaiting instead of blocking ---------------------------

    async def _send(self, request: Request) -> httpx.Response:
        sent = http_arguments(request)
        retry = Retry(self.options, request)
        while True:
            try:
                response = await self._http.request(**sent)
            except httpx.TransportError as error:
                await asyncio.sleep(retry.after(error))
            else:
                if response.is_success:
                    return response
                await asyncio.sleep(retry.after(response))

    async def _call(self, steps: Steps[T]) -> T:
        operation = Operation(steps)
        outcome: Any = None
        while (request := operation.next(outcome)) is not None:
            try:
                outcome = envelope_of(await self._send(request))
            except NeuroMemError as error:
                outcome = error  # thrown into the steps: they may handle it
        return operation.result

    async def _pages(self, listing: Listing[T]) -> AsyncIterator[T]:
        cursor = None
        while True:
            items, cursor = await self._call(page(listing.path, listing.params, cursor))
            for item in items:
                yield item
            if cursor is None:
                return
