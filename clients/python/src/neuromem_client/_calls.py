"""How a call is described once and made by either client: `endpoint` and `listing` methods
only describe their requests; on a `NeuroMem` the call answers its result (an iterator), on an
`AsyncNeuroMem` an awaitable (an async iterator)."""

from __future__ import annotations

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
C = TypeVar("C", bound="BaseClient[Any]")


class Listing(NamedTuple, Generic[T]):
    """A paged route, read a page at a time as the iteration goes."""

    path: str
    params: dict[str, Any]


class Described(Generic[P, D]):
    """A method that only describes its call (`describe`); the holder's client makes it."""

    def __init__(self, describe: Callable[Concatenate[Any, P], D]) -> None:
        self.describe = describe
        update_wrapper(self, describe)  # its name, docstring and signature for help()

    def bind(self, holder: Any) -> Any:
        return self if holder is None else MethodType(self, holder)


class endpoint(Described[P, Steps[T]]):
    """A call written as the requests it makes (`Steps`)."""

    @overload
    def __get__(self, holder: None, owner: type) -> Self: ...
    @overload
    def __get__(self, holder: NeuroMem | Resource[NeuroMem], owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(
        self, holder: AsyncNeuroMem | Resource[AsyncNeuroMem], owner: type
    ) -> Callable[P, Awaitable[T]]: ...
    def __get__(self, holder: Any, owner: type) -> Any:
        return self.bind(holder)

    def __call__(self, holder: Any, *args: P.args, **kwargs: P.kwargs) -> Any:
        return client_of(holder)._call(self.describe(holder, *args, **kwargs))


class listing(Described[P, Listing[T]]):
    """A call of a paged route, answering every item."""

    @overload
    def __get__(self, holder: None, owner: type) -> Self: ...
    @overload
    def __get__(
        self, holder: NeuroMem | Resource[NeuroMem], owner: type
    ) -> Callable[P, Iterator[T]]: ...
    @overload
    def __get__(
        self, holder: AsyncNeuroMem | Resource[AsyncNeuroMem], owner: type
    ) -> Callable[P, AsyncIterator[T]]: ...
    def __get__(self, holder: Any, owner: type) -> Any:
        return self.bind(holder)

    def __call__(self, holder: Any, *args: P.args, **kwargs: P.kwargs) -> Any:
        return client_of(holder)._pages(self.describe(holder, *args, **kwargs))


def client_of(holder: BaseClient[Any] | Resource[Any]) -> Any:
    return holder._client if isinstance(holder, Resource) else holder


class Resource(Generic[C]):
    def __init__(self, client: C) -> None:
        self._client = client
