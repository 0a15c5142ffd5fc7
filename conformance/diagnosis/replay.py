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
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

import numpy as np

from embconf.adapters.base import call_python
from embconf.corpus.fixtures import Case
from embconf.diagnosis.compose import Relation, relate
from embconf.judging.compare import compare_outputs, compare_value
from embconf.judging.kept import RowSample, compare_kept
from embconf.model.contract import UNSPECIFIED, Reply, Status
from embconf.model.outcomes import ERROR, FAIL, CaseResult
from embconf.model.record import Cause
from embconf.mutants.base import Mutant

SAMPLE_ABOVE = 4096  # outputs with more elements are first compared on a few rows


@dataclass
class Replay:
    """The catalogue's answer on one failing case: who matches, and who fails it differently (contradicted)."""

    matches: list[Mutant] = field(default_factory=list)
    partial: list[Mutant] = field(default_factory=list)  # one mistake of several on the case (compose.PARTIAL)
    contradicted: set[str] = field(default_factory=set)
    direct: set[str] = field(default_factory=set)  # matched on an operation they replace themselves
    indirect_against: set[str] = field(default_factory=set)  # contradicted only through a composed operation
    notes: dict[str, str] = field(default_factory=dict)  # mutant id -> how it matched ("computed in float32")

    def causes(
        self, contradicted: frozenset[str] | set[str] = frozenset(), order: Optional[Callable[[Mutant], Any]] = None
    ) -> list[Cause]:
        """The matching mutants as causes, then the partly matching ones (not complete), without the contradicted
        ones, each group in ``order`` (default: as matched)."""
        kept = [m for m in self.matches if m.id not in contradicted]
        part = [m for m in self.partial if m.id not in contradicted]
        whole = [m.explain(self.notes.get(m.id, "")) for m in (sorted(kept, key=order) if order else kept)]
        return whole + [
            replace(m.explain(self.notes.get(m.id, "")), complete=False)
            for m in (sorted(part, key=order) if order else part)
        ]


def replay(case: Case, result: CaseResult, inputs: Mapping[str, Any]) -> Replay:
    """Run every mutant that can change the case's operation on its inputs (``case.inputs()``) and compare with the
    implementation's reply."""
    found = Replay()
    if result.outcome not in (FAIL, ERROR) or (
        result.outcome == FAIL and result.error_kind is None and result.actual is None
    ):
        return found
    from embconf.mutants import catalogue

    direct: list[Mutant] = []
    indirect: list[Mutant] = []
    sampled = any(isinstance(value, RowSample) for value in (result.actual or {}).values())
    passing = _passing(case)
    for mutant in catalogue():
        if not mutant.covers(case.operation) or mutant.id in passing:
            continue
        reply = mutant_reply(mutant, case, inputs)
        if not _fails(case, reply):
            passing.add(mutant.id)
            continue
        if reply_matches(case, inputs, reply, result):
            (direct if case.operation in mutant.overrides else indirect).append(mutant)
        elif not sampled:  # on kept rows only, a lower-precision form of the mistake cannot be ruled out
            tolerance = case.tolerance or (
                _model_tolerance(case.operation, inputs, reply.outputs) if reply.status == Status.OUTPUTS else {}
            )
            relation = relate(case, reply, result, tolerance)
            if relation is Relation.PARTIAL:
                found.partial.append(mutant)
            elif relation is Relation.AGAINST and case.operation not in mutant.overrides:
                found.indirect_against.add(mutant.id)
            elif relation is Relation.AGAINST:
                found.contradicted.add(mutant.id)
    found.matches = direct + indirect
    found.direct = {m.id for m in direct}
    if not found.matches and case.operation == "sinusoidal_table":
        _sinusoid_family(inputs, result, found)
    if found.matches:  # a mistake that explains the whole case leaves no room for one that explains part of it
        found.partial = []
    return found


def mutant_reply(mutant: Mutant, case: Case, inputs: Mapping[str, Any]) -> Reply:
    """The mutant's reply on the case's inputs (fresh copies; its numerical noise silenced), on a fresh instance
    of it after the calls made before the case on its instance (a call of a case of calls, section 9.7)."""
    from embconf.mutants import implementation

    with warnings.catch_warnings(), np.errstate(all="ignore"):  # a mutant's numerical noise is not the user's concern
        warnings.simplefilter("ignore")
        instance = implementation(mutant.id)
        for earlier in case.before:
            call_python(earlier.operation, instance[earlier.operation], **earlier.inputs())
        return call_python(case.operation, instance[case.operation], **_fresh(inputs))


def fails_passed_case(mutant: Mutant, case: Case) -> bool:
    """Whether ``mutant`` fails a value case the implementation passed: then it is not the implementation's mistake.
    (Error cases are left out: an adapter with coarse error detail passes them whatever kind is raised.)"""
    if case.is_sequence:
        return any(fails_passed_case(mutant, call) for call in case.calls)
    if case.expected_error is not None or not mutant.covers(case.operation) or mutant.id in _passing(case):
        return False
    if _fails(case, mutant_reply(mutant, case, case.inputs())):
        return True
    _passing(case).add(mutant.id)
    return False


_PASSING: dict[int, set[str]] = {}  # id(case) -> the mutants that pass the case, kept while the case lives


def _passing(case: Case) -> set[str]:
    """The ids of the mutants known to pass ``case``. A mutant is deterministic, so one that passed a case is not
    replayed on it again (``embconf mutants --diagnosis`` diagnoses every mutant's run on the same cases)."""
    known = _PASSING.get(id(case))
    if known is None:
        known = _PASSING[id(case)] = set()
        weakref.finalize(case, _PASSING.pop, id(case), None)
    return known


def _sinusoid_family(inputs: Mapping[str, Any], result: CaseResult, found: Replay) -> None:
    """Precision-aware replay of the sinusoid mutants: the table's fit names a mutant computed in lower precision."""
    from embconf.diagnosis.sinusoid_fit import CANONICAL, fit_table
    from embconf.mutants import catalogue

    table = (result.actual or {}).get("table")
    if not isinstance(table, np.ndarray) or table.size > 1 << 22:
        return
    fit = fit_table(table, int(inputs["max_len"]), int(inputs["embed_dim"]))
    if fit is None:
        return
    measured = {**fit.params(), "precision": fit.precision}
    for mutant in catalogue():
        if not mutant.family:
            continue
        point = {**CANONICAL, "precision": "float64", **mutant.family}
        if {**point, "precision": measured["precision"]} == measured and point["precision"] in (
            "float64",
            measured["precision"],
        ):
            found.matches.append(mutant)
            found.contradicted.discard(mutant.id)
            if point["precision"] != fit.precision:
                found.notes[mutant.id] = f"computed in {fit.precision}"


def diagnose(case: Case, result: CaseResult) -> list[Cause]:
    """The mutants whose reply matches the implementation's on this failing case, best first."""
    found = replay(case, result, case.inputs())
    return found.causes()


def _fresh(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Copies of the array inputs, so no replay can disturb the next."""
    return {name: value.copy() if isinstance(value, np.ndarray) else value for name, value in inputs.items()}


def reply_matches(case: Case, inputs: Mapping[str, Any], reply: Reply, result: CaseResult) -> bool:
    """Whether ``reply`` (a mistake's, or a declarable convention's) is the implementation's on the case."""
    if result.outcome == ERROR:  # an untyped exception: the same exception with the same message
        return (
            reply.status == Status.RAISED
            and bool(reply.message)
            and reply.message in (result.message.splitlines() or [""])[0]
        )
    if result.error_kind is not None:
        return reply.status == Status.REJECTED and result.error_kind in (reply.error_kind, UNSPECIFIED)
    if reply.status != Status.OUTPUTS:
        return False
    tolerance = case.tolerance or _model_tolerance(case.operation, inputs, reply.outputs)
    actual = result.actual or {}
    if _differs_on_sample(reply.outputs, actual, tolerance):
        return False
    if not compare_kept(reply.outputs, actual, tolerance):  # large outputs: on the rows kept (untrusted.kept_outputs)
        return True
    relaxed = _low_precision_tolerance(reply.outputs, tolerance)  # the same mistake, computed in float32 or float16
    return relaxed is not None and not compare_kept(reply.outputs, actual, relaxed)


LOW_PRECISION_ULPS = 8.0  # a few roundings of a float32 (or float16) computation, on the output's scale


def _low_precision_tolerance(outputs: Mapping[str, Any], tolerance: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """The case's tolerance widened by a low-precision computation's error, for float32/float16 outputs."""
    widened, changed = dict(tolerance), False
    for name, value in outputs.items():
        if isinstance(value, np.ndarray) and value.dtype in (np.float32, np.float16) and value.size:
            finite = value[np.isfinite(value)]
            scale = float(np.max(np.abs(finite))) if finite.size else 0.0
            eps = float(np.finfo(value.dtype).eps)
            base = tolerance.get(name, {"kind": "exact"})
            atol = float(base.get("atol", 0.0)) + LOW_PRECISION_ULPS * eps * scale
            rtol = float(base.get("rtol", 0.0)) + LOW_PRECISION_ULPS * eps
            widened[name] = {**base, "kind": "close", "atol": atol, "rtol": rtol}
            changed = True
    return widened if changed else None


def _differs_on_sample(outputs: Mapping[str, Any], actual: Mapping[str, Any], tolerance: Mapping[str, Any]) -> bool:
    """A cheap test on a few rows of large outputs: a difference there rules the match out for certain."""
    for name, want in outputs.items():
        got = actual.get(name)
        if (
            not (isinstance(want, np.ndarray) and isinstance(got, np.ndarray))
            or want.ndim < 2
            or want.size <= SAMPLE_ABOVE
        ):
            continue
        if got.shape != want.shape or got.dtype != want.dtype:
            return True
        rows = sorted({0, want.shape[0] // 2, want.shape[0] - 1})
        if compare_value(name, want[rows], got, tolerance.get(name, {"kind": "exact"}), got.shape, rows):
            return True
    return False


def _fails(case: Case, reply: Reply) -> bool:
    """Whether the mutant itself fails the case (a mutant that passes explains nothing)."""
    if case.expected_error is not None or reply.status != Status.OUTPUTS:
        return reply.status != Status.REJECTED or reply.error_kind != case.expected_error
    return bool(compare_outputs(case.expected_outputs, case.raw_expected["outputs"], reply.outputs, case.tolerance))


def _model_tolerance(operation: str, inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> dict[str, Any]:
    """The tolerance model's bound for outputs the goldens do not hold (a result where an error was expected)."""
    from embconf.reference.families import for_case

    try:
        return for_case(operation, dict(inputs), dict(outputs))
    except Exception:  # inputs the model was not written for (an out-of-range id): compare exactly
        return {}
