"""How a catalogue mistake's reply relates to an implementation's on a failing case: compositional diagnosis.

Real code often has two mistakes, and one case can show both. A mistake is therefore not ruled out by a case
it fails differently for another reason, only by evidence against it:

- ``MATCH``: the same reply (decided by ``replay``);
- ``PARTIAL``: wherever the mistake departs from the golden outputs the implementation departs the same way
  (values compared after a cast to the golden dtype), and the implementation differs elsewhere or in dtype as
  well: one mistake of two on this case. Not within an integer output (counts, bytes: every element one
  formula's, so small numbers agree by chance): there the implementation departing where the mistake does not
  is evidence against it (a second mistake shows in another output, or composes with it: ``composes``);
- ``NEUTRAL``: the case cannot tell: the implementation crashed on, refused, or answered in another shape a
  valid input the mistake answers in the golden shape (another mistake stopped it first), or only a sample of
  its output was kept;
  (on an input the spec refuses, both answer and some outputs agree: the acceptance, and another mistake);
- ``AGAINST``: it fails the case differently for the same reason (other values where the mistake changes
  them, a refusal where the implementation answers, another answer to an input that must be refused).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Callable

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.factors import epsilon
from embconf.judging.compare import out_of_tolerance
from embconf.judging.kept import RowSample
from embconf.model.contract import Reply, Status
from embconf.model.outcomes import ERROR, CaseResult

AGREE = 0.9  # share of the mistake's departures the implementation must show the same way
COVER = 0.1  # share of the implementation's departures the mistake must account for


class Relation(enum.Enum):
    MATCH = "match"
    PARTIAL = "partial"
    NEUTRAL = "neutral"
    AGAINST = "against"


def relate(case: Case, reply: Reply, result: CaseResult, tolerance: Mapping[str, Any]) -> Relation:
    """How ``reply`` (a mistake that fails ``case``, and does not match ``result``) bears on the mistake."""
    raised = result.outcome == ERROR or result.error_kind is not None
    if raised:
        valid = case.expected_error is None and reply.status == Status.OUTPUTS
        return Relation.NEUTRAL if valid else Relation.AGAINST
    if case.expected_error is not None and reply.status == Status.OUTPUTS and result.actual:
        return _both_accepted(reply.outputs, result.actual)
    if case.expected_error is not None or reply.status != Status.OUTPUTS:
        return Relation.AGAINST
    return _outputs(case, reply.outputs, result.actual or {}, tolerance)


def _outputs(
    case: Case, mutant: Mapping[str, Any], actual: Mapping[str, Any], tolerance: Mapping[str, Any]
) -> Relation:
    """PARTIAL, NEUTRAL or AGAINST for two sets of outputs, both wrong."""
    footprint = agreed = departed = covered = 0
    compared = False
    for name, want in case.expected_outputs.items():
        raw = case.raw_expected["outputs"][name]
        rows = raw.get("rows") if isinstance(raw, Mapping) else None
        triple = _arrays(want, mutant.get(name), actual.get(name), rows)
        if triple is None:
            continue
        if isinstance(triple, Relation):
            return triple
        want_a, mutant_a, actual_a = triple
        if want_a.dtype == object:  # a count (see _arrays): as Python numbers, never through float64
            moved, off, same = want_a != mutant_a, want_a != actual_a, mutant_a == actual_a
        else:
            tol = tolerance.get(name, {"kind": "exact"})
            moved = out_of_tolerance(want_a, mutant_a, tol, rows)
            off = out_of_tolerance(want_a, actual_a, tol, rows)
            same = ~out_of_tolerance(mutant_a, actual_a, tol, rows)
        compared = True
        if want_a.dtype.kind in "iuO" and moved.any() and (off & ~moved).any():
            return Relation.AGAINST  # counts: see the module docstring
        footprint += int(moved.sum())
        agreed += int((moved & same).sum())
        departed += int(off.sum())
        covered += int((moved & off & same).sum())
    if not compared:
        return Relation.NEUTRAL
    if footprint and agreed >= AGREE * footprint and covered >= COVER * max(departed, 1):
        return Relation.PARTIAL
    return Relation.AGAINST if footprint else Relation.NEUTRAL


def _both_accepted(mutant: Mapping[str, Any], actual: Mapping[str, Any]) -> Relation:
    """Both answered an input the spec refuses: the mistake (accepting it) shows, and a second one as well when
    some of the outputs agree and others differ (a wrong unit on top of an unchecked dtype). All different is
    evidence against it when the outputs are rows (other rows for the same out-of-range id); counts (scalars)
    cannot tell: any other mistake in the arithmetic changes them."""
    same = [
        name
        for name, value in mutant.items()
        if name in actual
        and (a := _as_array(value)) is not None
        and (b := _as_array(actual[name])) is not None
        and a.shape == b.shape
        and np.array_equal(a, b)
    ]
    if same and len(same) < len(mutant):
        return Relation.PARTIAL
    counts = all(np.ndim(v) == 0 and _as_array(v) is not None for v in [*mutant.values(), *actual.values()])
    return Relation.NEUTRAL if counts else Relation.AGAINST


def _arrays(want: Any, mutant: Any, actual: Any, rows: Any) -> Any:
    """(golden, mutant, implementation) as arrays of the golden's shape and dtype; None when this output cannot
    tell; a Relation when it decides alone."""
    if isinstance(actual, RowSample) or want is None:
        return None
    want_a, mutant_a = _as_array(want), _as_array(mutant)
    if want_a is None:
        return None
    if mutant_a is None:
        return None if actual is None else Relation.AGAINST
    if rows is not None and mutant_a.shape[:1] != want_a.shape[:1]:
        mutant_a = mutant_a[np.asarray(rows, dtype=np.int64)] if mutant_a.ndim else mutant_a
    if mutant_a.shape != want_a.shape:
        return None
    actual_a = _as_array(actual)
    if actual_a is None:
        return None  # no value (None) where one was expected: another mistake
    if rows is not None and actual_a.shape[:1] != want_a.shape[:1] and actual_a.ndim:
        if actual_a.shape[0] <= max(rows, default=0):
            return None
        actual_a = actual_a[np.asarray(rows, dtype=np.int64)]
    if actual_a.shape != want_a.shape:
        return None  # another shape: another mistake
    if want_a.ndim == 0 and want_a.dtype.kind in "iuO":  # a count of unbounded width: exactly, as the judge does
        return tuple(np.asarray(a.item(), dtype=object) for a in (want_a, mutant_a, actual_a))
    try:
        return want_a, mutant_a.astype(want_a.dtype), actual_a.astype(want_a.dtype)
    except (TypeError, ValueError, OverflowError):
        return None


def _as_array(value: Any) -> Any:
    """A numeric array for an array or a number; None for anything else."""
    if isinstance(value, np.ndarray):
        return value if value.dtype.kind in "biufV" else None
    if isinstance(value, (bool, int, float, np.generic)):
        return np.asarray(value)
    return None


SUM_ULPS = 8.0  # roundings allowed when two mistakes' departures are added


def _rounding_bound(dtype: np.dtype, values: np.ndarray) -> dict[str, Any]:
    """SUM_ULPS roundings of the golden's dtype (float32's at least) at the size of ``values``: each of the golden
    and the two mistakes' outputs was rounded to that dtype (a float16 layer's one ulp of 2 is 0.001)."""
    eps = float(np.finfo(np.float32).eps)
    if dtype.kind == "f" or dtype.name == "bfloat16":
        eps = max(eps, epsilon(dtype))
    scale = float(np.max(np.abs(values))) if values.size else 0.0
    return {"kind": "close", "atol": SUM_ULPS * eps * scale, "rtol": SUM_ULPS * eps}


def additive(case: Case, first: Reply, second: Reply, result: CaseResult) -> bool:
    """Whether two mistakes together give the implementation's outputs: each departs from the golden outputs in
    its own term (output = golden + first's departure + second's), as a wrong scale and a wrong position slice do."""
    return _together(case, first, second, result, lambda want, one, two: one + two - want)


def multiplicative(case: Case, first: Reply, second: Reply, result: CaseResult) -> bool:
    """Whether two mistakes together give the implementation's outputs as factors of the golden outputs
    (output = golden x first's ratio x second's), as a wrong unit and a wrong bytes per element do (where the
    golden value is 0, the departures add)."""

    def combine(want: np.ndarray, one: np.ndarray, two: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.where(want != 0, one * two / np.where(want != 0, want, 1.0), one + two - want)

    return _together(case, first, second, result, combine)


def overlaid(case: Case, first: Reply, second: Reply, result: CaseResult) -> bool:
    """Whether every output element is the first mistake's or the second's, each mistake showing somewhere the
    other does not, as a table never updated hides a wrong norm in 'weight_after' but not in 'output'."""
    actual = result.actual or {}
    if first.status != Status.OUTPUTS or second.status != Status.OUTPUTS or result.error_kind is not None:
        return False
    only_first = only_second = False
    for name, want in case.expected_outputs.items():
        arrays = [_as_array(v) for v in (want, first.outputs.get(name), second.outputs.get(name), actual.get(name))]
        raw = case.raw_expected["outputs"][name]
        if (isinstance(raw, Mapping) and raw.get("rows") is not None) or any(a is None for a in arrays):
            return False
        if len({a.shape for a in arrays}) != 1:
            return False
        _, one, two, got = (a.astype(np.float64) for a in arrays)
        bound = _rounding_bound(arrays[0].dtype, got)
        is_one, is_two = ~out_of_tolerance(one, got, bound), ~out_of_tolerance(two, got, bound)
        if not (is_one | is_two).all():
            return False
        only_first |= bool((is_one & ~is_two).any())
        only_second |= bool((is_two & ~is_one).any())
    return only_first and only_second


def composes(case: Case, first: Reply, second: Reply, result: CaseResult) -> bool:
    """Whether the two mistakes, added, multiplied or overlaid, give the implementation's outputs."""
    return (
        additive(case, first, second, result)
        or multiplicative(case, first, second, result)
        or overlaid(case, first, second, result)
    )


def _together(
    case: Case,
    first: Reply,
    second: Reply,
    result: CaseResult,
    combine: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
) -> bool:
    actual = result.actual or {}
    if first.status != Status.OUTPUTS or second.status != Status.OUTPUTS or result.error_kind is not None:
        return False
    compared = False
    for name, want in case.expected_outputs.items():
        raw = case.raw_expected["outputs"][name]
        if isinstance(raw, Mapping) and raw.get("rows") is not None:
            return False
        arrays = [_as_array(v) for v in (want, first.outputs.get(name), second.outputs.get(name), actual.get(name))]
        if any(a is None for a in arrays) or len({a.shape for a in arrays}) != 1:
            return False
        want_a, one, two, got = (a.astype(np.float64) for a in arrays)
        combined = combine(want_a, one, two)
        bound = _rounding_bound(arrays[0].dtype, combined)
        if out_of_tolerance(combined, got, bound).any():
            return False
        compared = True
    return compared
