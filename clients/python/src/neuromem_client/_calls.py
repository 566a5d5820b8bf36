"""How a call is described once and made by either client: `endpoint` and `listing` methods
only describe their requests; on a `NeuroMem` the call answers its result (an iterator), on an
`AsyncNeuroMem` an awaitable (an async iterator)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from functools import update_wrapper
from types import MethodType
from typing import (
    TYPE_CHECKING,
    Any,
    Concatenate,
    Generic,
    NamedTuple,
    ParamSpec,
    Self,
    TypeVar,
    overload,
)

from neuromem_client._core import Steps

if TYPE_CHECKING:
    from neuromem_client._api import BaseClient
    from neuromem_client.async_client import AsyncNeuroMem
    from neuromem_client.client import NeuroMem

P = ParamSpec("P")
T = TypeVar("T")
D = TypeVar("D")
R = TypeVar("R")
AR = TypeVar("AR")
C = TypeVar("C", bound="BaseClient[Any]")


class Listing(NamedTuple, Generic[T]):
    """A paged route, read a page at a time as the iteration goes."""

    path: str
    params: dict[str, Any]


class Described(ABC, Generic[P, D, R, AR]):
    """A method that only describes its call (`describe`, answering a `D`); the holder's
    client makes it (`make`), answering an `R` on a `NeuroMem`, an `AR` on an `AsyncNeuroMem`."""

    def __init__(self, describe: Callable[Concatenate[Any, P], D]) -> None:
        self.describe = describe
        update_wrapper(self, describe)  # its name, docstring and signature for help()

    @overload
    def __get__(self, holder: None, owner: type) -> Self: ...
    @overload
    def __get__(self, holder: NeuroMem | Resource[NeuroMem], owner: type) -> Callable[P, R]: ...
    @overload
    def __get__(
        self, holder: AsyncNeuroMem | Resource[AsyncNeuroMem], owner: type
    ) -> Callable[P, AR]: ...
    def __get__(self, holder: Any, owner: type) -> Any:
        return self if holder is None else MethodType(self, holder)

    def __call__(self, holder: Any, *args: P.args, **kwargs: P.kwargs) -> Any:
        client = holder._client if isinstance(holder, Resource) else holder
        return self.make(client, self.describe(holder, *args, **kwargs))

    @abstractmethod
    def make(self, client: Any, described: D) -> Any: ...


class endpoint(Described[P, Steps[T], T, Awaitable[T]]):
    """A call written as the requests it makes (`Steps`)."""

    def make(self, client: Any, described: Steps[T]) -> Any:
        return client._call(described)


class listing(Described[P, Listing[T], Iterator[T], AsyncIterator[T]]):
    """A call of a paged route, answering every item."""

    def make(self, client: Any, described: Listing[T]) -> Any:
        return client._pages(described)


class Resource(Generic[C]):
    def __init__(self, client: C) -> None:
        self._client = client
