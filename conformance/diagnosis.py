"""Naming the likely mistake behind a failing case, by replaying the case through the catalogue of mutants.

For a case that failed, every mutant that can change the case's operation is run
in-process on the case's inputs. A mutant matches when its reply is the
implementation's: the same error kind, or outputs equal within the case's stored
tolerance. Matches are ranked: mutants that replace the case's own operation
first, then the catalogue's order. Only the case inputs and the implementation's
reply (``result.actual`` or ``result.error_kind``) are needed, so it works for
every adapter, the protocol included.
"""
from __future__ import annotations

import warnings
from typing import Any, Iterable, Mapping

import numpy as np

from .adapters.base import ERROR_KIND, OK, UNSPECIFIED, Reply, call_python
from .compare import compare_outputs, compare_value
from .fixtures import Case
from .outcomes import FAIL, CaseResult
from .runner import RunResult
from .untrusted import compare_kept

SAMPLE_ABOVE = 4096  # outputs with more elements are first compared on a few rows


def diagnose(case: Case, result: CaseResult) -> list[dict[str, Any]]:
    """The mutants whose reply matches the implementation's on this failing case, best first."""
    if result.outcome != FAIL or (result.error_kind is None and result.actual is None):
        return []
    from .mutants import catalogue, implementation

    inputs = case.inputs()
    direct, indirect = [], []
    for mutant in catalogue():
        if not mutant.covers(case.operation):
            continue
        with warnings.catch_warnings(), np.errstate(all="ignore"):  # a mutant's numerical noise is not the user's concern
            warnings.simplefilter("ignore")
            reply = call_python(case.operation, implementation(mutant.id)[case.operation], **_fresh(inputs))
        if _matches(case, inputs, reply, result) and _fails(case, reply):
            (direct if case.operation in mutant.overrides else indirect).append(mutant)
    return [mutant.explain() for mutant in direct + indirect]


def diagnose_run(run: RunResult, cases: Iterable[Case]) -> None:
    """Fill ``diagnosis`` on every failing result of ``run`` (nothing is loaded when nothing failed)."""
    failing = [result for result in run.results if result.outcome == FAIL]
    if not failing:
        return
    by_id = {case.id: case for case in cases}
    for result in failing:
        if result.id in by_id:
            result.diagnosis = diagnose(by_id[result.id], result)


def _fresh(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Copies of the array inputs, so no replay can disturb the next."""
    return {name: value.copy() if isinstance(value, np.ndarray) else value for name, value in inputs.items()}


def _matches(case: Case, inputs: Mapping[str, Any], reply: Reply, result: CaseResult) -> bool:
    if result.error_kind is not None:
        return reply.status == ERROR_KIND and result.error_kind in (reply.error_kind, UNSPECIFIED)
    if reply.status != OK:
        return False
    tolerance = case.tolerance or _model_tolerance(case.operation, inputs, reply.outputs)
    actual = result.actual or {}
    if _differs_on_sample(reply.outputs, actual, tolerance):
        return False
    return not compare_kept(reply.outputs, actual, tolerance)  # large outputs: on the rows kept (untrusted.kept_outputs)


def _differs_on_sample(outputs: Mapping[str, Any], actual: Mapping[str, Any], tolerance: Mapping[str, Any]) -> bool:
    """A cheap test on a few rows of large outputs: a difference there rules the match out for certain."""
    for name, want in outputs.items():
        got = actual.get(name)
        if not (isinstance(want, np.ndarray) and isinstance(got, np.ndarray)) or want.ndim < 2 or want.size <= SAMPLE_ABOVE:
            continue
        if got.shape != want.shape or got.dtype != want.dtype:
            return True
        rows = sorted({0, want.shape[0] // 2, want.shape[0] - 1})
        if compare_value(name, want[rows], got, tolerance.get(name, {"kind": "exact"}), got.shape, rows):
            return True
    return False


def _fails(case: Case, reply: Reply) -> bool:
    """Whether the mutant itself fails the case (a mutant that passes explains nothing)."""
    if case.expected_error is not None or reply.status != OK:
        return reply.status != ERROR_KIND or reply.error_kind != case.expected_error
    return bool(compare_outputs(case.expected_outputs, case.raw_expected["outputs"], reply.outputs, case.tolerance))


def _model_tolerance(operation: str, inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> dict[str, Any]:
    """The tolerance model's bound for outputs the goldens do not hold (a result where an error was expected)."""
    from .reference.tolerance import for_case

    try:
        return for_case(operation, dict(inputs), dict(outputs))
    except Exception:  # inputs the model was not written for (an out-of-range id): compare exactly
        return {}
