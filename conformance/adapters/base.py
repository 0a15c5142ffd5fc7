"""What every adapter provides: its capabilities, and one call per case operation.

An adapter turns a spec operation plus decoded inputs into a :class:`Reply`.
It never sees expected values. In-process adapters wrap Python callables with
:func:`call_python`, which maps the ways Python code can answer onto a Reply.
"""
from __future__ import annotations

import os
import traceback
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from embconf.model.dtypes import BFLOAT16_HINT, HAVE_BFLOAT16
from embconf.model.vocabulary import error_kinds, named_outputs, operations

# The ways an implementation can answer one request.
OK, ERROR_KIND, SKIPPED, EXCEPTION, CRASH, TIMEOUT = "ok", "error_kind", "skipped", "exception", "crash", "timeout"
# Signalled when an adapter can tell that the input was rejected, but not which kind of error it was.
UNSPECIFIED = "unspecified"


@dataclass
class Reply:
    status: str
    outputs: dict[str, Any] = field(default_factory=dict)
    error_kind: Optional[str] = None
    message: str = ""
    detail: str = ""  # a traceback tail, or what a crashed process printed
    violations: list[str] = field(default_factory=list)  # rules broken though the call succeeded (guard.py): a FAIL
    decided_by: str = ""  # "glue": the adapter's own code, not the implementation, raised this typed error


@dataclass(frozen=True)
class Capabilities:
    """What an implementation claims: a case outside these is not_applicable, never a failure."""

    operations: frozenset[str]
    features: frozenset[str] = frozenset()
    sinusoid_convention: str = "interleaved"
    error_detail: str = "kinds"  # "kinds": errors name their kind; "coarse": one generic rejection
    notes: tuple[str, ...] = ()

    def applies(self, operation: str, case_features: Iterable[str]) -> Optional[str]:
        """None when a case applies, else the reason it does not."""
        if operation not in self.operations:
            return f"the implementation does not provide {operation}"
        missing = [f for f in case_features if f not in self.all_features]
        if missing:
            return f"needs optional feature(s) {', '.join(missing)}"
        if "bfloat16" in case_features and not HAVE_BFLOAT16:  # the harness cannot hold the arrays (EMB-HLF-2)
            return BFLOAT16_HINT
        return None

    @property
    def all_features(self) -> frozenset[str]:
        """The claimed features plus the implied ones: the convention's profile, and a stored table unless computed."""
        implied = set() if "sinusoid_computed" in self.features else {"sinusoid_stored"}
        if self.sinusoid_convention != "interleaved":
            implied.add(f"sinusoid-{self.sinusoid_convention}")
        return self.features | implied

    @property
    def dtypes(self) -> list[str]:
        """The float dtypes it handles: float32 always (EMB-FWD-3), float64, float16 and bfloat16 with their features."""
        return ["float32"] + [d for d in ("float64", "float16", "bfloat16") if d in self.features]

    def to_json(self) -> dict[str, Any]:
        return {"operations": sorted(self.operations), "features": sorted(self.features), "dtypes": self.dtypes,
                "sinusoid_convention": self.sinusoid_convention, "error_detail": self.error_detail}


ALL_OPERATIONS = frozenset(operations())

Planned = tuple[str, Callable[[], dict[str, Any]]]  # an announced call: operation, and a factory of its inputs


class CallPlan:
    """The calls the runner announced it is about to make, in order (see guard.announce).

    An adapter that runs calls ahead of their turn (a worker batch, protocol requests written
    ahead) takes them from here; a call that is not the one announced next voids the plan.
    """

    def __init__(self) -> None:
        self._calls: deque[Planned] = deque()

    def extend(self, calls: Iterable[Planned]) -> None:
        self._calls.extend(calls)

    def clear(self) -> None:
        self._calls.clear()

    def follow(self, operation: str) -> None:
        """The caller makes a call now: drop it from the head of the plan, or void an unannounced plan."""
        if self._calls and self._calls[0][0] == operation:
            self._calls.popleft()
        else:
            self._calls.clear()

    def restore(self, calls: Iterable[Planned]) -> None:
        """Put calls that were taken but never answered back at the front, in their order."""
        self._calls.extendleft(reversed(list(calls)))

    def drop(self, operation: str) -> None:
        """Remove every announced call of ``operation`` (calls that will not be made)."""
        self._calls = deque(call for call in self._calls if call[0] != operation)

    def take(self, count: int) -> list[Planned]:
        """Up to ``count`` of the next announced calls, removed from the plan."""
        return [self._calls.popleft() for _ in range(min(max(count, 0), len(self._calls)))]


class Adapter:
    """Base class: subclasses set ``kind``, ``target`` and implement ``capabilities`` and ``call``."""

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


def classify_exception(exc: BaseException) -> Optional[str]:
    """The error kind an exception signals through a ``kind`` attribute, if it names one of the spec's."""
    kind = getattr(exc, "kind", None)
    return kind if isinstance(kind, str) and kind in error_kinds() else None


def call_python(operation: str, fn: Callable[..., Any], *args: Any,
                coarse: Callable[[BaseException], bool] = lambda exc: False, **kwargs: Any) -> Reply:
    """Run ``fn`` and turn its result or exception into a Reply.

    An exception naming a spec error kind is a typed error; one that ``coarse``
    accepts as a generic rejection (TinyTorch's ValueError) is UNSPECIFIED; any
    other exception is EXCEPTION with the tail of its traceback.
    """
    try:
        result = fn(*args, **kwargs)
    except Exception as exc:  # the implementation's own failure, reported, never propagated
        kind = classify_exception(exc)
        if kind:
            return Reply(ERROR_KIND, error_kind=kind, message=str(exc), decided_by=getattr(exc, "decided_by", ""))
        if coarse(exc):
            return Reply(ERROR_KIND, error_kind=UNSPECIFIED, message=f"{type(exc).__name__}: {exc}")
        return Reply(EXCEPTION, message=f"raised {type(exc).__name__}: {exc}", detail=_traceback_tail(exc))
    try:
        return Reply(OK, outputs=named_outputs(operation, result))
    except ValueError as exc:
        return Reply(EXCEPTION, message=f"returned a result of the wrong form: {exc}")


_OWN = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # this package's directory: its frames are the runner's, not the implementation's


def _traceback_tail(exc: BaseException, lines: int = 24) -> str:
    """The tail of the traceback, in the implementation's own frames (the adapter's are left out)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(_OWN)]
    text = "".join(["Traceback (most recent call last):\n"] + traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc))
    return "\n".join(text.splitlines()[-lines:])
