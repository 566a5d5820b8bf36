"""The synchronous client: `NeuroMem(base_url=…, token=…)`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, TypeVar

import httpx

from neuromem_client._api import BaseClient
from neuromem_client._calls import Listing
from neuromem_client._core import Operation, Request, Retry, Steps, http_arguments, page
from neuromem_client.errors import NeuroMemError, envelope_of

T = TypeVar("T")


class NeuroMem(BaseClient[httpx.Response]):
    """A client of one NeuroMem service, as one API client (its token). Thread-safe; close it
    (or use it as a context manager) to release its connections. `ClientOptions` explains
    the keyword arguments."""

    _HTTP = httpx.Client
    _http: httpx.Client

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> NeuroMem:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- Transport: how the calls `_api` describes are made, blocking -------------------

    def _send(self, request: Request) -> httpx.Response:
        sent = http_arguments(request)
        retry = Retry(self.options, request)
        while True:
            try:
                response = self._http.request(**sent)
            except httpx.TransportError as error:
                time.sleep(retry.after(error))
            else:
                if response.is_success:
                    return response
                time.sleep(retry.after(response))

    def _call(self, steps: Steps[T]) -> T:
        operation = Operation(steps)
        outcome: Any = None
        while (request := operation.next(outcome)) is not None:
            try:
                outcome = envelope_of(self._send(request))
            except NeuroMemError as error:
                outcome = error  # thrown into the steps: they may handle it
        return operation.result

    def _pages(self, listing: Listing[T]) -> Iterator[T]:
        """Every item of a paged route, a page at a time, following `page.next`."""
        cursor = None
        while True:
            items, cursor = self._call(page(listing.path, listing.params, cursor))
            yield from items
            if cursor is None:
                return
