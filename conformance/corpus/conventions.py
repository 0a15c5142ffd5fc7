"""The cases of the rotary conventions an implementation declares (spec section 14, EMB-ROPE-V1..V3, since 2.0.0):
one for each canonical case a convention changes among those run, with the same inputs and the convention's
answer, computed by the reference in the run that declares it (as a declared sinusoid point's cases are):

- ``negative_sense``: the rotation by the negative angle, which is the canonical backward of x (and its backward
  the canonical forward of the upstream gradient), under the canonical tolerance;
- ``attention_by_caller``: YaRN's tables and rotations with the attention factor 1, under their tolerance;
- ``float32_tables``: the canonical golden of a half-precision x, under the tolerance of float32 tables.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from embconf.corpus.fixtures import Case
from embconf.model.encoding import encode_array
from embconf.model.rope_conventions import RopeConvention

SOURCE = "computed for a declared rope convention"


def convention_cases(conventions: Iterable[RopeConvention], cases: Sequence[Case]) -> list[Case]:
    """The declared conventions' cases, one per canonical case of ``cases`` each changes (none declared: none)."""
    return [
        _computed(convention, case)
        for convention in sorted(conventions, key=lambda c: c.value)
        for case in cases
        if not case.is_sequence and convention.changes(case.operation, case.features)
    ]


def _computed(convention: RopeConvention, case: Case) -> Case:
    expected, tolerance = dict(case.raw_expected), dict(case.tolerance)
    if case.expected_error is None:
        outputs, tolerance = _answer(convention, case)
        expected = {"outputs": {name: encode_array(value) for name, value in outputs.items()}}
    record = {
        "id": f"rope.convention.{convention.value}.{case.id.removeprefix('rope.')}",
        "description": f"{case.description} Under the declared convention: {convention.describe()}.",
        "requirements": [convention.requirement, *case.requirements],
        "features": [*case.features, convention.feature],
        "operation": case.operation,
        "inputs": case.raw_inputs,
        "expected": expected,
    }
    return Case.from_record(record, SOURCE, tolerance)


def _answer(convention: RopeConvention, case: Case) -> tuple[dict[str, Any], dict[str, Any]]:
    """(outputs, tolerance) of ``case`` under ``convention``, by the reference (float64, rounded once)."""
    from embconf.model.vocabulary import named_outputs
    from embconf.reference import OPERATIONS
    from embconf.reference.tolerance import for_case, strict_rope_rotation

    inputs = case.inputs()
    if convention is RopeConvention.FLOAT32_TABLES:
        return dict(case.expected_outputs), strict_rope_rotation(inputs, case.expected_outputs)
    if convention is RopeConvention.ATTENTION_BY_CALLER:
        plain = {**inputs, "scaling": {**inputs["scaling"], "attention_factor": 1.0}}
        outputs = named_outputs(case.operation, OPERATIONS[case.operation](**plain))
        return outputs, for_case(case.operation, plain, outputs)
    if case.operation == "rope_forward":  # the rotation by -angle is the transpose: the canonical backward
        result = OPERATIONS["rope_backward"](**inputs, grad_output=inputs["x"])
    else:
        upstream = inputs.pop("grad_output")
        result = OPERATIONS["rope_forward"](**{**inputs, "x": upstream})
    return named_outputs(case.operation, result), dict(case.tolerance)
