"""The adapter contract: what an implementation claims (:class:`Capabilities`), how it answers one call
(:class:`Reply`, with a :class:`Status` and, where the runner stopped it, a :class:`Reason`), and the
:class:`Adapter` Protocol every adapter satisfies. Optional abilities are their own small protocols.

A reply's status is how the call ended; a case's outcome (:class:`~embconf.model.outcomes.Outcome`) is the
judgement of that reply against the golden case: distinct types with distinct names.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from fnmatch import fnmatchcase
from functools import cached_property
from types import MappingProxyType
from typing import Any, Callable, Iterable, NamedTuple, Optional, Protocol, runtime_checkable

from embconf.model.convention import (
    Convention,
    contradictory_conventions,
    convention_features,
    conventions_json,
    declared_of,
    implied_features,
    read_declared,
    replacing,
    undeclared_reason,
)
from embconf.model.features import STATEFUL, contradictory_features, exclusive_defaults, missing_reason

__all__ = ["STATEFUL", "contradictory_features"]  # re-exported: the names adapters and the worker import from here


class Status(enum.Enum):
    """How one call ended. The first three are the wire protocol's three reply forms."""

    OUTPUTS = "outputs"  # it returned outputs
    REJECTED = "rejected"  # it rejected the input with a spec error kind (the wire's ``error``)
    SKIPPED = "skipped"  # it declined the call (not_applicable)
    RAISED = "raised"  # it raised an exception that names no error kind
    DIED = "died"  # its process died (a crash)
    STOPPED = "stopped"  # the runner stopped it or did not run it: ``Reply.reason`` says why


class Reason(enum.Enum):
    """Why the runner stopped a call, or did not make it."""

    CASE_TIMEOUT = "case_timeout"  # the call took longer than the case timeout
    RUN_TIMEOUT = "run_timeout"  # the whole run's time was spent
    HANG_POLICY = "hang_policy"  # not run: earlier calls timed out (isolation.hangs)
    RESTARTS_EXHAUSTED = "restarts_exhausted"  # the process died too often to be started again


# The error kind of a rejection whose kind the adapter cannot tell (a coarse error detail).
UNSPECIFIED = "unspecified"


@dataclass
class Reply:
    status: Status
    outputs: dict[str, Any] = field(default_factory=dict)
    error_kind: Optional[str] = None
    message: str = ""
    detail: str = ""  # a traceback tail, or what a crashed process printed
    violations: list[str] = field(default_factory=list)  # rules broken though the call succeeded (run.guard): a fail
    decided_by: str = ""  # "glue": the adapter's own code, not the implementation, raised this typed error or skipped
    reason: Optional[Reason] = None  # set when the runner stopped the call (status STOPPED or DIED)


@dataclass(frozen=True)
class DocumentedChoice:
    """A deviation the framework documents as its own design: ``link`` to its documentation and ``sentence``
    saying what it does, for the cases (ids or globs) and requirement ids it concerns.

    It tells a reader of the report and the matrix that a failure is the framework's documented behaviour,
    not a bug; it excuses nothing: the cases still fail and the implementation does not conform."""

    link: str
    sentence: str
    cases: tuple[str, ...] = ()
    requirements: tuple[str, ...] = ()

    def concerns(self, case_id: str, requirements: Iterable[str]) -> bool:
        return any(fnmatchcase(case_id, pattern) for pattern in self.cases) or any(
            req in self.requirements for req in requirements
        )

    def to_json(self) -> dict[str, str]:
        """What a report shows: the link and the sentence."""
        return {"link": self.link, "sentence": self.sentence}

    def to_plain(self) -> dict[str, Any]:
        """All of it as plain values: what a worker process sends and what the wire's start reply holds."""
        return {
            "link": self.link,
            "sentence": self.sentence,
            "cases": list(self.cases),
            "requirements": list(self.requirements),
        }

    @classmethod
    def from_plain(cls, raw: Any) -> DocumentedChoice:
        """The choice :meth:`to_plain` (or a start reply) describes; ValueError (one line) when malformed."""
        if not isinstance(raw, Mapping) or not all(isinstance(raw.get(key), str) for key in ("link", "sentence")):
            raise ValueError(f"a documented choice needs a 'link' and a 'sentence', got {str(raw)[:120]!r}")
        lists = [raw.get(key, []) for key in ("cases", "requirements")]
        if not all(isinstance(items, (list, tuple)) and all(isinstance(i, str) for i in items) for items in lists):
            raise ValueError("a documented choice's 'cases' and 'requirements' must be lists of strings")
        return cls(raw["link"], raw["sentence"], tuple(lists[0]), tuple(lists[1]))


@dataclass(frozen=True)
class Capabilities:
    """What an implementation claims: a case outside these is not_applicable, never a failure."""

    operations: frozenset[str]
    features: frozenset[str] = frozenset()
    _: KW_ONLY  # the rest by name (1.x took a convention's name third: conventions are never positional)
    error_detail: str = "kinds"  # "kinds": errors name their kind; "coarse": one generic rejection
    notes: tuple[str, ...] = ()
    documented: tuple[DocumentedChoice, ...] = ()  # deviations the framework documents as its design
    conventions: frozenset[Convention] = frozenset()  # every declared convention (embconf.model.convention)

    def __post_init__(self) -> None:
        """At most one convention of a kind that declares a single point (ValueError, one line)."""
        problem = contradictory_conventions(self.conventions)
        if problem:
            raise ValueError(problem)

    def documented_choice(self, case_id: str, requirements: Iterable[str]) -> Optional[DocumentedChoice]:
        """The first documented choice that concerns the case, if any."""
        return next((choice for choice in self.documented if choice.concerns(case_id, requirements)), None)

    def applies(self, operation: str, case_features: Iterable[str]) -> Optional[str]:
        """None when a case applies, else the reason it does not (answered once per operation and features: a run
        asks for every case when it plans and again when it runs it)."""
        case_features = tuple(case_features)
        answers = self.__dict__.setdefault("_answers", {})  # the capabilities are frozen: so are the answers
        key = (operation, case_features)
        if key not in answers:
            answers[key] = self._applies(operation, case_features)
        return answers[key]

    def _applies(self, operation: str, case_features: tuple[str, ...]) -> Optional[str]:
        if operation not in self.operations:
            return f"the implementation does not provide {operation}"
        replaced_by = replacing(self.conventions, operation, case_features)
        if replaced_by is not None:
            return replaced_by.replaced()
        claimed = self.all_features
        missing = [f for f in case_features if f not in claimed]
        reason = missing_reason(missing) or undeclared_reason(self.conventions, missing)
        if reason:
            return reason
        if missing:
            return f"needs optional feature(s) {', '.join(missing)}"
        if "bfloat16" not in case_features:
            return None
        from embconf.model.dtypes import unavailable_dtype  # NumPy: not before a case needs it

        return unavailable_dtype(case_features)  # the harness cannot hold the arrays (EMB-HLF-2)

    @cached_property
    def all_features(self) -> frozenset[str]:
        """The claimed features plus the implied ones: the first of each exclusive pair unless the other is
        claimed, and what the declared conventions imply (each one's feature, every canonical marker but theirs)."""
        replaced = {c.canonical_marker for c in self.conventions}
        declared = self.features - convention_features() - replaced
        return frozenset(declared | exclusive_defaults(self.features) | implied_features(self.conventions))

    @property
    def dtypes(self) -> list[str]:
        """The float dtypes it handles: float32 always (EMB-FWD-3), float64, float16 and bfloat16 with their features."""
        return ["float32"] + [d for d in ("float64", "float16", "bfloat16") if d in self.features]

    def declared(self, kind: str) -> frozenset[Any]:
        """The declared conventions of one kind (``embconf.model.convention.KINDS``)."""
        return declared_of(self.conventions, kind)

    def to_json(self) -> dict[str, Any]:
        return {
            "operations": sorted(self.operations),
            "features": sorted(self.features),
            "dtypes": self.dtypes,
            "error_detail": self.error_detail,
            **conventions_json(self.conventions),
        }

    def to_plain(self) -> dict[str, Any]:
        """As plain values (lists, strings, numbers): what a worker process sends; :meth:`from_plain` rebuilds it."""
        return {
            "operations": sorted(self.operations),
            "features": sorted(self.features),
            "error_detail": self.error_detail,
            "notes": list(self.notes),
            "documented": [choice.to_plain() for choice in self.documented],
            **conventions_json(self.conventions),
        }

    @classmethod
    def from_plain(cls, raw: Any) -> Capabilities:
        """The capabilities :meth:`to_plain` describes; ValueError (one line) when anything is malformed."""
        if not isinstance(raw, Mapping):
            raise ValueError(f"capabilities must be a mapping, got {type(raw).__name__}")
        names = {key: raw.get(key, []) for key in ("operations", "features", "notes")}
        for key, items in names.items():
            if not isinstance(items, (list, tuple)) or not all(isinstance(item, str) for item in items):
                raise ValueError(f"capabilities' {key!r} must be a list of strings")
        documented = raw.get("documented", [])
        if not isinstance(documented, (list, tuple)):
            raise ValueError("capabilities' 'documented' must be a list")
        return cls(
            frozenset(names["operations"]),
            frozenset(names["features"]),
            error_detail=str(raw.get("error_detail", "kinds")),
            notes=tuple(names["notes"]),
            documented=tuple(DocumentedChoice.from_plain(item) for item in documented),
            conventions=read_declared(raw),
        )


ALL_ROWS: Mapping[str, tuple[int, ...]] = MappingProxyType({})
NO_INSTANCE = 0  # a call made on no instance of its own: the implementation may answer it from a fresh one
NOT_ENCODED: Mapping[str, Any] = MappingProxyType({})


class Planned(NamedTuple):
    """An announced call: its operation, a factory of its inputs, the rows of each output the runner judges
    (the rows its golden pins; an output not named here is judged whole), and its inputs as the fixture
    encodes them, where it has them. An adapter whose implementation runs elsewhere may ask it for those rows
    only (protocol minor 4) and forward the encoded arrays as they are."""

    operation: str
    inputs: Callable[[], dict[str, Any]]
    rows: Mapping[str, tuple[int, ...]] = ALL_ROWS
    encoded: Mapping[str, Any] = NOT_ENCODED
    instance: int = NO_INSTANCE  # the instance it is made on (a case of calls on one instance), else NO_INSTANCE


@runtime_checkable
class Adapter(Protocol):
    """One implementation, ready to answer calls. ``kind`` and ``target`` are the two halves of ``KIND:TARGET``.

    ``call`` never raises for anything the implementation does: every way it can end is a :class:`Reply`.
    ``close`` releases processes and resources; calling it twice is harmless.
    """

    kind: str
    target: str

    def describe(self) -> dict[str, Any]:
        """Name, version and language of the implementation, for reports."""
        ...

    def capabilities(self) -> Capabilities:
        """What it claims; cases outside it are not_applicable."""
        ...

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        """Run one operation of the spec on decoded inputs."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class OnInstances(Protocol):
    """An adapter that can make several calls on one instance of the implementation (a case of calls on one
    instance, spec section 9.7): the calls with the same ``instance`` number share whatever the implementation
    keeps between calls; a number not seen before is a fresh instance. The runner never interleaves instances:
    once a call names another number (or :data:`NO_INSTANCE`), the earlier instance is never named again."""

    def call_on(self, instance: int, operation: str, inputs: dict[str, Any]) -> Reply: ...


def call_on_instance(adapter: Adapter, instance: int, operation: str, inputs: dict[str, Any]) -> Reply:
    """``adapter.call_on`` where the adapter has instances of its own, else its plain ``call`` (an implementation
    made of plain functions is one instance: every call is made on it)."""
    if instance != NO_INSTANCE and isinstance(adapter, OnInstances):
        return adapter.call_on(instance, operation, inputs)
    return adapter.call(operation, inputs)


@runtime_checkable
class Renewing(Protocol):
    """An adapter whose next call can start on a newly loaded implementation (a fresh worker: the module imported
    again, its module-level state empty), so that a case runs as if it were the first."""

    def renew(self) -> bool:
        """Make the next call start on a newly loaded implementation; False when this adapter cannot."""
        ...


def renew(adapter: Adapter) -> bool:
    """``adapter.renew()`` where it can renew, else False (an implementation loaded in the runner's own process)."""
    return isinstance(adapter, Renewing) and adapter.renew()


@runtime_checkable
class Planning(Protocol):
    """An adapter that can run calls ahead of their turn (a worker batch, protocol requests written ahead)."""

    def plan(self, calls: Iterable[Planned]) -> None:
        """The calls about to be made, in order; a call that is not the next one announced voids the plan."""
        ...


@runtime_checkable
class Forgetting(Protocol):
    """An adapter that runs announced calls ahead and can drop those of an operation that will not be made (the
    hang policy stops calling it)."""

    def forget(self, operation: str) -> None: ...


@runtime_checkable
class Preparing(Protocol):
    """An adapter whose implementation runs elsewhere (a worker) and can import what the run's dtypes need
    there while the runner does the same (ml_dtypes for bfloat16: a second or more, paid once, side by side)."""

    def prepare(self, dtypes: Iterable[str]) -> None: ...


@runtime_checkable
class Applying(Protocol):
    """An adapter that runs one of the runner's own functions next to the implementation (``embconf bench``)."""

    def apply(self, function: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> tuple[bool, Any]: ...
