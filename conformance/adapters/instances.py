"""What an adapter keeps for calls on one instance (spec section 9.7): the object its implementation builds on an
instance's first call (a layer, a rotary module, a mutant's state), reused by the instance's later calls.

The runner never interleaves instances, so one is kept at a time; a call on no instance gets a fresh object.
:class:`CallsOnInstances` gives an adapter that keeps them its ``call_on``: the plain call, made on the instance.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Generic, Iterator, Optional, Protocol, TypeVar

from embconf.model.contract import NO_INSTANCE, Reply

T = TypeVar("T")


class Instances(Generic[T]):
    """The object of the instance at hand: :meth:`on` says which instance the calls inside it are made on."""

    def __init__(self) -> None:
        self.current = NO_INSTANCE
        self._kept: tuple[int, Any] = (NO_INSTANCE, None)

    @contextmanager
    def on(self, instance: int) -> Iterator[None]:
        """The calls made inside are on ``instance``."""
        self.current = instance
        try:
            yield
        finally:
            self.current = NO_INSTANCE

    def get(self, build: Callable[[], T]) -> tuple[T, bool]:
        """(the instance's object, whether it was built now): ``build()`` on the instance's first call, and on every
        call made on no instance."""
        number, kept = self._kept
        if self.current != NO_INSTANCE and number == self.current:
            return kept, False
        built = build()
        self._kept = (self.current, built) if self.current != NO_INSTANCE else (NO_INSTANCE, None)
        return built, True


class _Keeping(Protocol):
    instances: Optional[Instances[Any]]

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply: ...


class CallsOnInstances:
    """An adapter's ``call_on`` (:class:`~embconf.model.contract.OnInstances`): its plain ``call``, made on the
    instance, with the objects it keeps in ``instances`` (None: it keeps none, and every call is fresh)."""

    instances: Optional[Instances[Any]] = None

    def call_on(self: _Keeping, instance: int, operation: str, inputs: dict[str, Any]) -> Reply:
        if self.instances is None:
            return self.call(operation, inputs)
        with self.instances.on(instance):
            return self.call(operation, inputs)
