"""Running cases against an adapter and judging each reply: one outcome per case."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

import numpy as np

from embconf.adapters.base import CRASH, ERROR_KIND, EXCEPTION, OK, SKIPPED, TIMEOUT, UNSPECIFIED, Adapter, Capabilities, Reply
from embconf.run.compare import compare_outputs
from embconf.model.encoding import ARRAY_DTYPES
from embconf.corpus.expectations import Expectations
from embconf.corpus.fixtures import Case
from embconf.run.messages import mismatch_headline, reproduction
from embconf.model.outcomes import ERROR, FAIL, NOT_APPLICABLE, PASS, XFAIL, XPASS, CaseResult
from embconf.model.outcomes import CRASH as CRASH_OUTCOME
from embconf.model.outcomes import TIMEOUT as TIMEOUT_OUTCOME
from embconf.untrusted.bounds import bounded_description, bounded_reply, kept_outputs

Progress = Callable[[int, int, CaseResult], None]


@dataclass
class RunResult:
    results: list[CaseResult]
    capabilities: Capabilities
    implementation: dict
    unmatched_expectations: list[str] = field(default_factory=list)
    duration: float = 0.0

    def summary(self) -> dict[str, int]:
        from embconf.model.outcomes import OUTCOMES

        counts = dict.fromkeys(OUTCOMES, 0)
        for result in self.results:
            counts[result.outcome] += 1
        return counts


def judge(case: Case, reply: Reply, caps: Capabilities) -> CaseResult:
    """The outcome of one case given the implementation's reply (expectations not yet applied)."""
    reply = bounded_reply(reply)
    result = CaseResult(case.id, case.requirements, case.features, case.operation, PASS, stderr=reply.detail if reply.status in (CRASH, TIMEOUT) else "")
    expected_error = case.expected_error
    if reply.violations and reply.status in (OK, ERROR_KIND):  # e.g. it modified an input: wrong whatever it returned
        result.outcome, result.message = FAIL, reproduction(case, "; ".join(reply.violations))
    elif reply.status == SKIPPED:
        result.outcome, result.message = NOT_APPLICABLE, f"skipped by the implementation: {reply.message}"
    elif reply.status == TIMEOUT:
        result.outcome, result.message = TIMEOUT_OUTCOME, reproduction(case, reply.message if reply.message.startswith("not run:") else f"timed out: {reply.message}")
    elif reply.status == CRASH:
        result.outcome, result.message = CRASH_OUTCOME, reproduction(case, f"the implementation crashed: {reply.message}")
    elif reply.status == EXCEPTION:
        wanted = f"expected error {expected_error}" if expected_error else "expected a result"
        result.outcome = ERROR
        result.message = reproduction(case, f"{reply.message} ({wanted})") + (f"\n{reply.detail}" if reply.detail else "")
    elif reply.status == ERROR_KIND:
        result.error_kind, result.decided_by = reply.error_kind, reply.decided_by
        if expected_error is None:
            result.outcome, result.message = FAIL, reproduction(case, f"rejected valid input ({reply.error_kind}: {reply.message}); expected a result")
        elif reply.error_kind == UNSPECIFIED and caps.error_detail == "coarse":
            result.message = f"rejected as expected; the error kind ({expected_error}) is not checked for this adapter"
        elif reply.error_kind != expected_error:
            result.outcome, result.message = FAIL, reproduction(case, f"raised {reply.error_kind} ({reply.message}); expected {expected_error}")
    elif reply.status == OK:
        if expected_error is not None:
            result.outcome = FAIL
            result.message = reproduction(case, f"returned a result; expected error {expected_error} (no clamping, wrapping or filling)")
        else:
            mismatches = compare_outputs(case.expected_outputs, case.raw_expected["outputs"], reply.outputs, case.tolerance)
            if mismatches:
                result.outcome, result.mismatches = FAIL, mismatches
                result.message = reproduction(case, mismatch_headline(mismatches), mismatches)
        result.actual = kept_outputs(reply.outputs, result.mismatches, _expected_bytes(case))  # bounded: what diagnosis and --repeat need
    else:
        result.outcome, result.message = ERROR, f"{case.id}: adapter returned unknown status {reply.status!r}"
    return result


def _expected_bytes(case: Case) -> dict[str, int]:
    """The size in bytes of each array output the case expects (from its encoded shape and dtype)."""
    sizes = {}
    for name, raw in ((case.raw_expected or {}).get("outputs") or {}).items():
        if isinstance(raw, dict) and isinstance(raw.get("shape"), list) and raw.get("dtype") in ARRAY_DTYPES:
            sizes[name] = math.prod(raw["shape"]) * np.dtype(ARRAY_DTYPES[raw["dtype"]]).itemsize
    return sizes


def run_cases(adapter: Adapter, cases: Iterable[Case], expectations: Optional[Expectations] = None,
              progress: Optional[Progress] = None) -> RunResult:
    """Run every case (not_applicable ones are not sent) and apply the expectations."""
    started = time.perf_counter()
    caps = adapter.capabilities()
    cases = list(cases)
    results: list[CaseResult] = []
    for number, case in enumerate(cases, 1):
        reason = caps.applies(case.operation, case.features)
        if reason:
            result = CaseResult(case.id, case.requirements, case.features, case.operation, NOT_APPLICABLE, reason)
        else:
            t0 = time.perf_counter()
            reply = adapter.call(case.operation, case.inputs())
            result = judge(case, reply, caps)
            result.duration = time.perf_counter() - t0
        if expectations is not None:
            expectations.apply(result)
        results.append(result)
        if progress:
            progress(number, len(cases), result)
    unmatched = expectations.unmatched() if expectations is not None else []
    return RunResult(results, caps, bounded_description(adapter.describe()), unmatched, time.perf_counter() - started)


__all__ = ["RunResult", "judge", "run_cases", "XFAIL", "XPASS"]
