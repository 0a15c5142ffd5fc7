"""The outcomes a case can end in, and the result record of one case."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

PASS, FAIL, ERROR, CRASH, TIMEOUT = "pass", "fail", "error", "crash", "timeout"
NOT_APPLICABLE, XFAIL, XPASS = "not_applicable", "xfail", "xpass"
OUTCOMES: tuple[str, ...] = (PASS, FAIL, ERROR, CRASH, TIMEOUT, NOT_APPLICABLE, XFAIL, XPASS)
PROBLEMS = frozenset({FAIL, ERROR, CRASH, TIMEOUT})  # what makes a run fail


@dataclass
class CaseResult:
    id: str
    requirements: tuple[str, ...]
    features: tuple[str, ...]
    operation: str
    outcome: str
    message: str = ""
    duration: float = 0.0
    expectation: Optional[str] = None  # the reason an expectations file gave
    diagnosis: list[dict[str, Any]] = field(default_factory=list)
    stderr: str = ""
    mismatches: list[Any] = field(default_factory=list, repr=False)
    actual: Optional[dict[str, Any]] = field(default=None, repr=False)  # the outputs returned, kept for diagnosis
    error_kind: Optional[str] = None  # the error kind the implementation raised, kept for diagnosis
    decided_by: str = ""  # "glue": an adapter's own check, not the implementation, raised the error judged

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "id": self.id, "requirements": list(self.requirements), "features": list(self.features),
            "operation": self.operation, "outcome": self.outcome, "message": self.message,
            "duration_s": round(self.duration, 6),
        }
        if self.expectation is not None:
            record["expectation"] = self.expectation
        if self.diagnosis:
            record["diagnosis"] = self.diagnosis
        if self.stderr:
            record["stderr"] = self.stderr
        if self.decided_by:
            record["decided_by"] = self.decided_by
        return record
