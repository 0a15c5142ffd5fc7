"""Running one case against an adapter and judging its reply: one outcome per case (the pass over all of
them, and the record, are :class:`embconf.session.Session`'s)."""

from __future__ import annotations

import math
import time
from typing import Callable, Optional

import numpy as np

from embconf.corpus.expectations import Expectations
from embconf.corpus.fixtures import Case
from embconf.judging.compare import compare_outputs
from embconf.judging.kept import kept_outputs
from embconf.judging.messages import mismatch_headline, reproduction, returned_summary
from embconf.judging.sequence import new_instance, run_sequence, sequence_inapplicable
from embconf.model.contract import NO_INSTANCE, UNSPECIFIED, Adapter, Capabilities, Reason, Reply, Status
from embconf.model.encoding import ARRAY_DTYPES
from embconf.model.outcomes import CRASH as CRASH_OUTCOME
from embconf.model.outcomes import ERROR, FAIL, NOT_APPLICABLE, PASS, CaseResult
from embconf.model.outcomes import TIMEOUT as TIMEOUT_OUTCOME
from embconf.untrusted.text import bounded_reply, escaped_result

Progress = Callable[[int, int, CaseResult], None]


def judge(case: Case, reply: Reply, caps: Optional[Capabilities]) -> CaseResult:
    """The outcome of one case given the implementation's reply (expectations not yet applied)."""
    reply = bounded_reply(reply)
    result = CaseResult(
        case.id,
        case.requirements,
        case.features,
        case.operation,
        PASS,
        reason=reply.reason,
        stderr=reply.detail if reply.status in (Status.DIED, Status.STOPPED) else "",
    )
    expected_error = case.expected_error
    if reply.violations and reply.status in (
        Status.OUTPUTS,
        Status.REJECTED,
    ):  # e.g. it modified an input: wrong whatever it returned
        result.outcome, result.message = FAIL, reproduction(case, "; ".join(reply.violations))
    elif reply.status == Status.SKIPPED:
        who = "the adapter" if reply.decided_by else "the implementation"
        result.outcome, result.message, result.declined = NOT_APPLICABLE, f"skipped by {who}: {reply.message}", True
        result.decided_by = reply.decided_by
    elif reply.status == Status.STOPPED:
        result.outcome, result.message = (
            TIMEOUT_OUTCOME,
            reproduction(case, reply.message if reply.reason == Reason.HANG_POLICY else f"timed out: {reply.message}"),
        )
    elif reply.status == Status.DIED:
        result.outcome, result.message = (
            CRASH_OUTCOME,
            reproduction(case, f"the implementation crashed: {reply.message}"),
        )
    elif reply.status == Status.RAISED:
        wanted = f"expected error {expected_error}" if expected_error else "expected a result"
        result.outcome = ERROR
        result.message = reproduction(case, f"{reply.message} ({wanted})") + (
            f"\n{reply.detail}" if reply.detail else ""
        )
    elif reply.status == Status.REJECTED:
        result.error_kind, result.decided_by = reply.error_kind, reply.decided_by
        if expected_error is None:
            result.outcome, result.message = (
                FAIL,
                reproduction(case, f"rejected valid input ({reply.error_kind}: {reply.message}); expected a result"),
            )
        elif reply.error_kind == UNSPECIFIED and caps is not None and caps.error_detail == "coarse":
            result.message = f"rejected as expected; the error kind ({expected_error}) is not checked for this adapter"
        elif reply.error_kind != expected_error:
            result.outcome, result.message = (
                FAIL,
                reproduction(case, f"raised {reply.error_kind} ({reply.message}); expected {expected_error}"),
            )
    elif reply.status == Status.OUTPUTS:
        if expected_error is not None:
            result.outcome = FAIL
            result.message = reproduction(
                case,
                f"returned a result; expected error {expected_error} (no clamping, wrapping or filling); "
                f"it returned {returned_summary(reply.outputs)}",
            )
        else:
            mismatches = compare_outputs(
                case.expected_outputs, case.raw_expected["outputs"], reply.outputs, case.tolerance
            )
            if mismatches:
                result.outcome, result.mismatches = FAIL, mismatches
                result.message = reproduction(case, mismatch_headline(mismatches), mismatches)
        result.actual = kept_outputs(
            reply.outputs, result.mismatches, _expected_bytes(case)
        )  # bounded: what diagnosis and --repeat need
    else:
        result.outcome, result.message = ERROR, f"{case.id}: adapter returned unknown status {reply.status!r}"
    if result.outcome in (FAIL, ERROR) and caps is not None:
        result.documented = caps.documented_choice(case.id, case.requirements)
    return escaped_result(result)


def _expected_bytes(case: Case) -> dict[str, int]:
    """The size in bytes of each array output the case expects (from its encoded shape and dtype)."""
    sizes = {}
    for name, raw in ((case.raw_expected or {}).get("outputs") or {}).items():
        if isinstance(raw, dict) and isinstance(raw.get("shape"), list) and raw.get("dtype") in ARRAY_DTYPES:
            sizes[name] = math.prod(raw["shape"]) * np.dtype(ARRAY_DTYPES[raw["dtype"]]).itemsize
    return sizes


def run_case(
    adapter: Adapter,
    case: Case,
    expectations: Optional[Expectations] = None,
    caps: Optional[Capabilities] = None,
    instance: int = NO_INSTANCE,
) -> CaseResult:
    """One case: not sent when it does not apply, else called and judged; the expectations applied. A case of
    calls on one instance (spec section 9.7) makes them on ``instance``, or on a new one."""
    caps = caps or adapter.capabilities()
    reason = sequence_inapplicable(case, caps) if case.is_sequence else caps.applies(case.operation, case.features)
    if reason:
        result = CaseResult(case.id, case.requirements, case.features, case.operation, NOT_APPLICABLE, reason)
    else:
        started = time.perf_counter()
        if case.is_sequence:
            result = run_sequence(adapter, case, caps, instance or new_instance(), judge)
        else:
            result = judge(case, adapter.call(case.operation, case.inputs()), caps)
        result.duration = time.perf_counter() - started
    if expectations is not None:
        expectations.apply(result)
    return result


__all__ = ["judge", "run_case"]
