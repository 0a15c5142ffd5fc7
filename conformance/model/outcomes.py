"""What one case ends in (:class:`Outcome`), and the result record of one case (:class:`CaseResult`)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import FrozenInstanceError, dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence

if TYPE_CHECKING:
    from embconf.model.contract import DocumentedChoice, Reason
    from embconf.model.record import Cause


class Outcome(str, enum.Enum):
    """The judgement of one case. A ``str``, so it compares, sorts and serialises as its spec name."""

    PASS = "pass"
    FAIL = "fail"  # wrong values, a wrong error, or a broken contract (a modified input)
    ERROR = "error"  # an exception that names no error kind
    CRASH = "crash"  # the implementation's process died
    TIMEOUT = "timeout"  # no answer in time (or not run: the hang policy, the run timeout)
    NOT_APPLICABLE = "not_applicable"  # outside the declared capabilities, or declined
    XFAIL = "xfail"  # failed, as the expectations file says it does
    XPASS = "xpass"  # listed as failing, but passed

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


PASS, FAIL, ERROR, CRASH, TIMEOUT = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT
NOT_APPLICABLE, XFAIL, XPASS = Outcome.NOT_APPLICABLE, Outcome.XFAIL, Outcome.XPASS
OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)
PROBLEMS = frozenset({FAIL, ERROR, CRASH, TIMEOUT})  # what makes a run fail
DIAGNOSED = frozenset({FAIL, ERROR})  # what diagnosis explains (a crash or a timeout has no values to measure)


class Freezable:
    """A record that can be frozen: once :meth:`freeze` is called, setting any attribute raises
    ``dataclasses.FrozenInstanceError`` (a finished run's record is read, never edited)."""

    _frozen: bool = False

    def __setattr__(self, name: str, value: Any) -> None:
        if self._frozen:
            raise FrozenInstanceError(f"cannot assign to field {name!r}: the record is frozen")
        object.__setattr__(self, name, value)

    def freeze(self) -> None:
        object.__setattr__(self, "_frozen", True)


class FrozenDict(dict):
    """A dict that cannot be changed (a frozen record's mappings); it pickles, as a record sent between
    processes must."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("the record is frozen")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return FrozenDict, (dict(self),)


@dataclass
class CaseResult(Freezable):
    """One case's result: its outcome, why, and what diagnosis found (frozen when its run finishes)."""

    id: str
    requirements: tuple[str, ...]
    features: tuple[str, ...]
    operation: str
    outcome: Outcome
    message: str = ""
    duration: float = 0.0
    expectation: Optional[str] = None  # the reason an expectations file gave
    causes: Sequence[Cause] = field(default_factory=list)  # why it failed, best first (diagnosis)
    stderr: str = ""
    mismatches: Sequence[Any] = field(default_factory=list, repr=False)
    actual: Optional[dict[str, Any]] = field(default=None, repr=False)  # the outputs returned, kept for diagnosis
    error_kind: Optional[str] = None  # the error kind the implementation raised, kept for diagnosis
    decided_by: str = ""  # "glue": an adapter's own check, not the implementation, raised the error judged or skipped
    reason: Optional[Reason] = None  # why the runner stopped the call (a timeout's cause)
    declined: bool = False  # not_applicable because the implementation skipped it, within its capabilities
    documented: Optional[DocumentedChoice] = None  # a problem the framework documents as its design (still a problem)
    call: int = 0  # a case of calls on one instance: the call (from 1) whose reply decided the outcome; 0: one call

    def freeze(self) -> None:
        object.__setattr__(self, "causes", tuple(self.causes))
        object.__setattr__(self, "mismatches", tuple(self.mismatches))
        super().freeze()

    @property
    def is_problem(self) -> bool:
        return self.outcome in PROBLEMS

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "id": self.id,
            "requirements": list(self.requirements),
            "features": list(self.features),
            "operation": self.operation,
            "outcome": self.outcome.value,
            "message": self.message,
            "duration_s": round(self.duration, 6),
        }
        if self.expectation is not None:
            record["expectation"] = self.expectation
        if self.causes:
            record["diagnosis"] = [cause.to_json() for cause in self.causes]
        if self.stderr:
            record["stderr"] = self.stderr
        if self.decided_by:
            record["decided_by"] = self.decided_by
        if self.declined:
            record["declined"] = True
        if self.documented is not None:
            record["documented"] = self.documented.to_json()
        if self.error_kind is not None:
            record["error_kind"] = self.error_kind
        if self.call:
            record["call"] = self.call
        if self.actual is not None and self.outcome in DIAGNOSED:
            record["returned"] = True  # it returned outputs (kept for diagnosis, not written)
        return record

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> CaseResult:
        """The result a report's case entry (:meth:`to_json`) describes; what a report does not hold (the outputs
        themselves, the mismatches) stays empty."""
        from embconf.model.contract import DocumentedChoice
        from embconf.model.record import Cause

        documented = raw.get("documented")
        return cls(
            str(raw["id"]),
            tuple(raw.get("requirements", ())),
            tuple(raw.get("features", ())),
            str(raw.get("operation", "")),
            Outcome(raw["outcome"]),
            str(raw.get("message", "")),
            float(raw.get("duration_s", 0.0)),
            raw.get("expectation"),
            [Cause.from_json(entry) for entry in raw.get("diagnosis", ())],
            str(raw.get("stderr", "")),
            actual={} if raw.get("returned") else None,
            error_kind=raw.get("error_kind"),
            decided_by=str(raw.get("decided_by", "")),
            declined=bool(raw.get("declined", False)),
            documented=DocumentedChoice.from_plain(documented) if documented is not None else None,
            call=int(raw.get("call", 0)),
        )
