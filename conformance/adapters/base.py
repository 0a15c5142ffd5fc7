"""What every adapter provides: its capabilities, and one call per case operation.

An adapter turns a spec operation plus decoded inputs into a :class:`Reply`.
It never sees expected values. In-process adapters wrap Python callables with
:func:`call_python`, which maps the ways Python code can answer onto a Reply; an adapter that holds another to a
rule (the input guard, the hang policy) is a :class:`WrappingAdapter`.
"""

from __future__ import annotations

import os
import traceback
from collections import deque
from typing import Any, Callable, Iterable, Optional

from embconf.model.contract import NO_INSTANCE, UNSPECIFIED, Adapter, Capabilities, Planned, Reply, Status
from embconf.model.errors import Decline
from embconf.model.vocabulary import error_kinds, named_outputs, operations

ALL_OPERATIONS = frozenset(operations())


class CallPlan:
    """The calls the runner announced it is about to make, in order (see :func:`embconf.session.plan`).

    An adapter that runs calls ahead of their turn (a worker batch, protocol requests written
    ahead) takes them from here; a call that is not the one announced next voids the plan.
    """

    def __init__(self) -> None:
        self._calls: deque[Planned] = deque()

    def extend(self, calls: Iterable[Planned]) -> None:
        self._calls.extend(calls)

    def clear(self) -> None:
        self._calls.clear()

    def follow(self, operation: str, instance: int = NO_INSTANCE) -> Optional[Planned]:
        """The caller makes a call now: take it from the head of the plan (returned), or void an unannounced plan."""
        if self._calls and (self._calls[0].operation, self._calls[0].instance) == (operation, instance):
            return self._calls.popleft()
        self._calls.clear()
        return None

    def restore(self, calls: Iterable[Planned]) -> None:
        """Put calls that were taken but never answered back at the front, in their order."""
        self._calls.extendleft(reversed(list(calls)))

    def drop(self, operation: str) -> None:
        """Remove every announced call of ``operation`` (calls that will not be made)."""
        self._calls = deque(call for call in self._calls if call.operation != operation)

    def take(self, count: int) -> list[Planned]:
        """Up to ``count`` of the next announced calls, removed from the plan."""
        return [self._calls.popleft() for _ in range(min(max(count, 0), len(self._calls)))]


class AdapterBase:
    """Defaults for the :class:`~embconf.model.contract.Adapter` Protocol: subclasses set ``kind``, ``target``
    and implement ``capabilities`` and ``call``."""

    kind = ""
    target = ""

    def describe(self) -> dict[str, Any]:
        """Name, version and language of the implementation, for reports."""
        return {"name": self.target or self.kind, "version": "", "language": "python"}

    def capabilities(self) -> Capabilities:
        raise NotImplementedError

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        raise NotImplementedError

    def close(self) -> None:
        """Release processes or resources; the default has none."""


class WrappingAdapter(AdapterBase):
    """An adapter that holds another to a rule (the input guard, the hang policy): it is named, described and
    closed as ``inner`` and claims what ``inner`` claims; subclasses implement ``call_on``, which every call goes
    through (a call on no instance is ``call_on(NO_INSTANCE, ...)``)."""

    def __init__(self, inner: Adapter) -> None:
        self.inner = inner
        self.kind, self.target = inner.kind, inner.target

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def capabilities(self) -> Capabilities:
        return self.inner.capabilities()

    def close(self) -> None:
        self.inner.close()

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        return self.call_on(NO_INSTANCE, operation, inputs)

    def call_on(self, instance: int, operation: str, inputs: dict[str, Any]) -> Reply:
        raise NotImplementedError


def classify_exception(exc: BaseException) -> Optional[str]:
    """The error kind an exception signals through a ``kind`` attribute, if it names one of the spec's."""
    kind = getattr(exc, "kind", None)
    return kind if isinstance(kind, str) and kind in error_kinds() else None


def call_python(
    operation: str,
    fn: Callable[..., Any],
    *args: Any,
    coarse: Callable[[BaseException], bool] = lambda exc: False,
    **kwargs: Any,
) -> Reply:
    """Run ``fn`` and turn its result or exception into a Reply.

    :class:`~embconf.model.contract.Decline` declines the call; an exception naming a spec error kind is a
    typed error; one that ``coarse`` accepts as a generic rejection (TinyTorch's ValueError) is UNSPECIFIED;
    any other exception is RAISED with the tail of its traceback.
    """
    try:
        result = fn(*args, **kwargs)
    except Decline as exc:
        return declined(exc.reason)
    except Exception as exc:  # the implementation's own failure, reported, never propagated
        kind = classify_exception(exc)
        if kind:
            return Reply(Status.REJECTED, error_kind=kind, message=str(exc), decided_by=getattr(exc, "decided_by", ""))
        if coarse(exc):
            return Reply(Status.REJECTED, error_kind=UNSPECIFIED, message=f"{type(exc).__name__}: {exc}")
        return Reply(Status.RAISED, message=f"raised {type(exc).__name__}: {exc}", detail=_traceback_tail(exc))
    try:
        return Reply(Status.OUTPUTS, outputs=named_outputs(operation, result))
    except ValueError as exc:
        return Reply(Status.RAISED, message=f"returned a result of the wrong form: {exc}")


def declined(reason: str) -> Reply:
    """The reply of an implementation that declines the call it was sent."""
    return Reply(Status.SKIPPED, message=f"declined: {reason}")


_OWN = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
)  # this package's directory: its frames are the runner's, not the implementation's


def _traceback_tail(exc: BaseException, lines: int = 24) -> str:
    """The tail of the traceback, in the implementation's own frames (the adapter's are left out)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(_OWN)]
    text = "".join(
        ["Traceback (most recent call last):\n"]
        + traceback.format_list(frames)
        + traceback.format_exception_only(type(exc), exc)
    )
    return "\n".join(text.splitlines()[-lines:])
