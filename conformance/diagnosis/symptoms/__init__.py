"""Symptoms: what a failing result's error looks like, measured from the case's inputs, the expected and the actual.

Where the catalogue names a known mistake, a symptom describes the shape of any
error in the domain's terms: a constant factor and what it equals (D, sqrt(D),
int(sqrt(D)), 1/B ...), which rows differ, which table row each output row is,
a parameter that received no gradient, a dtype that was not cast back, which
boundary a check gets wrong, where an untyped exception came from. Each
detector returns a statement only when its measurement holds on the whole
output; otherwise nothing (a symptom is never guessed).

Rooms: ``base`` (the :func:`symptom` constructor), ``values`` (dtype, shape, constant factors, sinusoid fits),
``rows`` (row stories of lookups, gradients and positions), ``layer`` (the layer's output as a * tokens + b *
positions), ``errors`` (rejections, acceptances,
exceptions) with ``raised`` (a constructor failure, an unchecked cast), ``replayed`` (a bag case replayed
through the reference with one thing changed: a convention followed undeclared, the padding id counted), ``rope`` (the rotation a rotary output
applied, read against the spec's) with ``rope_words`` (its sentences, in the case's own terms), ``bags`` (where a
bag result differs, measured: a running sum in a half dtype, repeated rows, padding positions), ``quantized`` (a
quantizer's undeclared convention, its wrong integers); this module
dispatches a result to them and measures a buffer kept across calls."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Callable, Iterable

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.difference import described
from embconf.diagnosis.localise import located
from embconf.diagnosis.symptoms.bags import (
    bag_shapes,
    empty_refused,
    padding_positions,
    repeated_rows,
    running_sum,
    unreduced,
)
from embconf.diagnosis.symptoms.base import MAX_ELEMENTS, OWNER, PARAMETER, Symptom, symptom
from embconf.diagnosis.symptoms.errors import accepted, exception, rejected
from embconf.diagnosis.symptoms.layer import layer_parts
from embconf.diagnosis.symptoms.quantized import undeclared_quantize_convention, wrong_row_part
from embconf.diagnosis.symptoms.replayed import padding_counted, undeclared_convention
from embconf.diagnosis.symptoms.rope import rotation_symptoms, table_symptoms
from embconf.diagnosis.symptoms.rows import (
    lookup_rows,
    position_gradient,
    position_rows,
    table_gradient_rows,
)
from embconf.diagnosis.symptoms.values import (
    constant_factor,
    dtype_symptom,
    one_hot_product,
    shape_symptoms,
    sinusoid_table,
    zero_rows,
)
from embconf.model.outcomes import ERROR, FAIL, CaseResult
from embconf.model.rope import ROTATIONS
from embconf.model.symptom import NO_GRADIENT, NONE, STALE_BUFFER, STATE, SymptomKey
from embconf.model.vocabulary import operation_area

PARAMETER_TITLE = {"token_table": "the token table", "position_table": "the learned position table"}

__all__ = ["Symptom", "describe", "history_symptom", "symptom"]


def describe(case: Case, inputs: Mapping[str, Any], result: CaseResult) -> list[Symptom]:
    """Every symptom measured on ``result`` (a non-pass outcome of ``case``)."""
    if result.outcome == ERROR:
        return exception(case, inputs, result)
    if result.outcome != FAIL:
        return []
    if result.error_kind is not None:
        return (
            rejected(case, inputs, result) + empty_refused(case, inputs, result) if case.expected_error is None else []
        )
    if result.actual is None:  # failed on a rule (an input modified, a view returned), not on its outputs
        return []
    actual = result.actual
    conventions = undeclared_convention(case, inputs, result)
    if case.expected_error is not None:
        gradients = [name for name in actual if name.startswith("grad")]
        if gradients and all(actual[name] is None for name in gradients):  # no backward ran: nothing was accepted
            return [_no_gradient(case, name) for name in gradients]
        untouched = [name for name in gradients if actual[name] is None and PARAMETER.get(name) == "token_table"]
        if untouched:  # the token table's backward never ran (a layer's positions got theirs): the same mistake
            return [_no_gradient(case, name) for name in untouched]
        return conventions + accepted(case, inputs, actual)
    if case.operation == "rope_tables":  # two outputs read together: the angles are (cos, sin)
        return _tables(case, inputs, actual)
    found: list[Symptom] = conventions + padding_counted(case, inputs, result)
    missing = {m.output for m in result.mismatches if getattr(m, "kind", "") == "missing"}  # None judged as no value
    differing = {getattr(m, "output", None) for m in result.mismatches} or set(case.expected_outputs)
    for name, want in case.expected_outputs.items():
        if name not in differing:  # an output that matched says nothing about the mistake
            continue
        got = actual.get(name)
        if isinstance(want, np.ndarray) and (got is not None or name in missing):
            found += _array(case, inputs, name, want, got)
    return found


def _tables(case: Case, inputs: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Symptom]:
    """rope_tables' (cos, sin): a dtype not cast back is said first (one symptom: both tables share its key), and
    the angles are read from the tables cast to the expected dtype when their values differ as well."""
    wanted = {n: w for n, w in case.expected_outputs.items() if isinstance(w, np.ndarray)}
    got = {n: actual.get(n) for n in wanted}
    other = [n for n, g in got.items() if isinstance(g, np.ndarray) and g.dtype != wanted[n].dtype]
    if not other or any(got[n].shape != wanted[n].shape or got[n].dtype.kind not in "fiu" for n in other):  # type: ignore[union-attr]
        return table_symptoms(case, inputs, actual)
    dtype = dtype_symptom(case, other[0], wanted[other[0]], got[other[0]])  # type: ignore[arg-type]
    if all(dtype_symptom(case, n, wanted[n], got[n]).complete for n in other):  # type: ignore[arg-type]
        return [dtype]
    cast = {**actual, **{n: got[n].astype(wanted[n].dtype) for n in other}}  # type: ignore[union-attr]
    return [replace(dtype, complete=False)] + table_symptoms(case, inputs, cast)


OWN_BACKWARD = "embedding_layer_own_backward"


def _untrained(name: str) -> Symptom:
    """EMB-LAY-12: a table the layer built itself got no gradient from the layer's own forward and backward."""
    owner = OWNER.get(name, f"'{name}'")
    said = (
        f"{owner} the layer built itself received no gradient ('{name}' is None) from the layer's own forward and "
        "backward, measured on the layer as its constructor built it, before any optimizer exists"
    )
    return symptom(
        SymptomKey.of(NO_GRADIENT, OWN_BACKWARD, name),
        said,
        "make the layer's tables trainable parameters that its forward builds the output from "
        "(TinyTorch: Tensor(data, requires_grad=True))",
        title=said,
        mistake=str(
            SymptomKey.of(NO_GRADIENT, PARAMETER.get(name, name))
        ),  # the same table's missing gradient elsewhere
    )


def _array(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: Any) -> list[Symptom]:
    if got is None and not name.startswith("grad"):
        return [
            symptom(
                SymptomKey.of(NONE, case.operation, name), f"'{name}' is None: the operation returned no value for it"
            )
        ]
    if got is None and case.operation == OWN_BACKWARD:
        return [_untrained(name)]
    if got is None:
        return [_no_gradient(case, name)]
    if not isinstance(got, np.ndarray):
        return []
    raw = case.raw_expected["outputs"][name]
    rows = raw.get("rows") if isinstance(raw, Mapping) else None
    if rows is not None and got.shape == tuple(raw["shape"]):  # the goldens pin sampled rows of a large output
        if got.dtype == want.dtype and case.operation == "sinusoidal_table":
            return sinusoid_table(case, inputs, name, want, got)
        got = got[np.asarray(rows, dtype=np.int64)]
    elif rows is not None and got.ndim == 2 and got.shape[:1] == tuple(raw["shape"])[:1]:  # other columns
        got = got[np.asarray(rows, dtype=np.int64)]
    if want.size > MAX_ELEMENTS or got.size > MAX_ELEMENTS:
        return []
    if got.dtype != want.dtype:
        dtype = dtype_symptom(case, name, want, got)
        if dtype.complete or got.shape != want.shape or not _is_float(want) or got.dtype.kind not in "fiu":
            return [dtype]
        return [dtype] + _values(
            case, inputs, name, want, got.astype(want.dtype)
        )  # what is wrong with the values, once cast
    if got.shape != want.shape:
        return shape_symptoms(case, name, want, got) or bag_shapes(case, inputs, name, want, got)
    if not _is_float(want):
        return []
    return _values(case, inputs, name, want, got)


def _no_gradient(case: Case, name: str) -> Symptom:
    """The gradient output ``name`` is None: backward never reached its parameter (on an error case too, where
    nothing was computed that could have been refused)."""
    owner = OWNER.get(name, f"'{name}'")
    return symptom(
        SymptomKey.of(NO_GRADIENT, case.operation, name),
        f"{owner} received no gradient ('{name}' is None): backward never reached it, so it is not in the graph the output was built from",
        "build the output from the parameter Tensor itself (slicing or indexing it), not from a new Tensor made of its .data",
        title=f"{PARAMETER_TITLE[PARAMETER[name]] if name in PARAMETER else owner} received no gradient (None): "
        "backward never reached it, so it is not in the graph the output was built from",
        mistake=str(SymptomKey.of(NO_GRADIENT, PARAMETER.get(name, name))),
    )


def _is_float(array: np.ndarray) -> bool:
    """float16/32/64, and bfloat16 (ml_dtypes' kind is 'V', not 'f')."""
    return array.dtype.kind == "f" or array.dtype.name == "bfloat16"


def _values(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """The first detector that measures what is wrong with values of the right dtype and shape."""
    first = () if case.operation in OWN_FACTORS else (constant_factor,)  # a rotation's factor is read as such
    for detector in first + DETECTORS[operation_area(case.operation)].get(case.operation, PLAIN_READINGS_ONLY):
        found = detector(case, inputs, name, want, got)
        if found:
            return found
    # nothing fitted: what was measured, in plain words, never a guess (a rotation: where it differs, no numbers)
    plain = "" if case.operation in OWN_FACTORS else described(name, want, got, rule=case.tolerance.get(name))
    return located(case, inputs, name, want, got, plain)


OWN_FACTORS = ROTATIONS  # a rotation's factor is read by its angles, never as a constant factor
Detector = Callable[..., list[Symptom]]
PLAIN_READINGS_ONLY: tuple[Detector, ...] = ()  # no detector of its own: the constant factor and the plain reading

# The detectors of each family's operations, by area; an operation listed with PLAIN_READINGS_ONLY says so on
# purpose (tests/test_family_completeness.py holds every operation to an entry). Every case also gets the error
# and state readings above, and a bag case its replays (``replayed``) before these.
DETECTORS: dict[str, dict[str, tuple[Detector, ...]]] = {
    "token_lookup": {
        "embedding_forward": (one_hot_product, lookup_rows),
        "embedding_backward": (table_gradient_rows,),
        "embedding_backward_sparse": PLAIN_READINGS_ONLY,
        "embedding_forward_max_norm": PLAIN_READINGS_ONLY,
    },
    "sinusoidal": {"sinusoidal_table": (sinusoid_table, zero_rows)},
    "learned_positions": {
        "learned_positions_forward": (position_rows,),
        "learned_positions_backward": (position_gradient,),
    },
    "embedding_layer": {
        "embedding_layer_forward": (layer_parts,),
        "embedding_layer_backward": (table_gradient_rows,),
        "embedding_layer_own_backward": PLAIN_READINGS_ONLY,
    },
    "memory": {
        "parameter_count": PLAIN_READINGS_ONLY,
        "table_bytes": PLAIN_READINGS_ONLY,
        "gradient_bytes": PLAIN_READINGS_ONLY,
        "adam_state_bytes": PLAIN_READINGS_ONLY,
    },
    "rope": {
        "rope_tables": PLAIN_READINGS_ONLY,  # its two outputs are read together, as angles (_tables above)
        "rope_forward": (rotation_symptoms,),
        "rope_backward": (rotation_symptoms,),
        "rope_apply": PLAIN_READINGS_ONLY,
        "rope_apply_backward": PLAIN_READINGS_ONLY,
    },
    "bags": {
        "embedding_bag_forward": (running_sum, unreduced),
        "embedding_bag_backward": (repeated_rows, padding_positions),
        "sharded_table_bytes": PLAIN_READINGS_ONLY,
    },
    "quantized": {
        "quantized_lookup": PLAIN_READINGS_ONLY,  # a row read in another layout: the catalogue's replays name it
        "quantize_table": (undeclared_quantize_convention, wrong_row_part),
        "quantized_table_bytes": PLAIN_READINGS_ONLY,
        "quantized_bag_forward": PLAIN_READINGS_ONLY,
    },
}


def history_symptom(case: Case, result: CaseResult, earlier: Iterable[tuple[Case, CaseResult]]) -> list[Symptom]:
    """The gradient is this call's plus the gradient an earlier call returned: a buffer reused across calls."""
    for name, want in case.expected_outputs.items():
        got = (result.actual or {}).get(name)
        if (
            not isinstance(want, np.ndarray)
            or not isinstance(got, np.ndarray)
            or got.shape != want.shape
            or not name.startswith("grad")
        ):
            continue
        leftover = got.astype(np.float64) - want.astype(np.float64)
        if not np.any(np.abs(leftover) > 1e-6):
            continue
        for other_case, other in earlier:
            before = (other.actual or {}).get(name)
            if (
                other_case.operation == case.operation
                and isinstance(before, np.ndarray)
                and before.shape == got.shape
                and np.any(before)
                and np.allclose(leftover, before.astype(np.float64), rtol=1e-5, atol=1e-6)
            ):
                return [
                    symptom(
                        SymptomKey.of(STALE_BUFFER, case.operation, name),
                        f"'{name}' is the right gradient plus exactly the gradient an earlier call returned ({other_case.label}): "
                        "a buffer kept across calls and never zeroed",
                        "allocate a fresh zero gradient on every backward call (EMB-BWD-2)",
                        title="the gradient is the right one plus exactly the gradient an earlier call returned: a buffer kept across calls and never zeroed",
                        mistake=str(SymptomKey.of(STATE, "carried")),  # state carried across calls, as measured
                        earlier=other_case.id,
                    )
                ]
    return []
