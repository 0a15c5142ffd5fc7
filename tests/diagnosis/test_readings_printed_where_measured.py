"""A sentence template is a predicate on the cases it cites, printed only where it holds: "every angle is the spec's
within that rounding, at every position" of cos/sin rounded to bfloat16 only when each measured angle is, and "it
raises whenever the ids are 1-d (no batch axis)" only of 1-d ids without offsets (with offsets, 1-d ids are a
batch of bags). Each is generated where the predicate holds and where it does not."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rope_cases import case, window

from embconf.adapters.reference import ReferenceAdapter
from embconf.corpus.fixtures import Case
from embconf.diagnosis.conditions import crash_conditions
from embconf.diagnosis.symptoms import describe
from embconf.diagnosis.symptoms.base import symptom
from embconf.model.outcomes import ERROR, FAIL, PASS, CaseResult
from embconf.model.record import RunRecord
from embconf.model.symptom import UNTYPED, SymptomKey
from embconf.reference.generate import _encode_value
from embconf.reference.rope import inverse_frequencies

STEADY = "every angle is the spec's within that rounding"
ROUNDED = "cos and sin were rounded to bfloat16"
NO_BATCH_AXIS = "the ids are 1-d (no batch axis)"


def _tables_said(p0: int, length: int, d: int, drift: float) -> str:
    """What is said of rope_tables whose cos and sin are bfloat16 roundings of the spec's angles plus ``drift``
    radians per position past the first."""
    c = case(f"tables.{p0}.{length}.{d}", "rope_tables", positions=window(p0, length), d=d)
    inputs = c.inputs()
    theta, _ = inverse_frequencies(d, 10000.0, None, p0 + length - 1)
    positions = inputs["position_ids"]
    angles = positions[:, None] * theta + drift * (positions - p0)[:, None]
    tables = {
        name: f(angles).astype(ml_dtypes.bfloat16).astype(np.float32) for name, f in (("cos", np.cos), ("sin", np.sin))
    }
    found = describe(c, inputs, CaseResult(c.id, (), (), c.operation, FAIL, actual=tables))
    return " ".join(s.summary for s in found)


@settings(max_examples=25, deadline=None)
@given(p0=st.integers(0, 20000), length=st.integers(2, 16), d=st.sampled_from([8, 16, 64]))
def test_the_error_is_said_not_to_grow_only_where_every_angle_is_within_the_rounding(p0, length, d) -> None:
    rounded = _tables_said(p0, length, d, drift=0.0)  # holds: only the rounding of cos and sin
    assert STEADY in rounded or ROUNDED not in rounded, rounded  # said, unless the rounding is not read at all
    grown = _tables_said(p0, length, d, drift=2.0**-5 / (length - 1))  # 2^-5 rad at the last position: 4x the rounding
    assert STEADY not in grown, grown


def test_the_rounding_of_cos_and_sin_alone_is_said_not_to_grow() -> None:
    said = _tables_said(4096, 16, 64, drift=0.0)
    assert ROUNDED in said and STEADY in said and "from 4096 to 4111" in said, said


def _bag_or_lookup(index: int, operation: str, ids_shape: tuple[int, ...], offsets: bool) -> Case:
    ids = np.arange(int(np.prod(ids_shape)), dtype=np.int64).reshape(ids_shape) % 4
    inputs = {"weight": np.ones((4, 4), np.float32), "ids": ids}
    if operation == "embedding_bag_forward":
        inputs.update(offsets=np.array([0, 1], np.int64) if offsets else None, mode="sum")
    raw = {name: _encode_value(value) for name, value in inputs.items() if value is not None}
    return Case(f"c{index}", "built for the test", (), (), operation, raw, {"outputs": {}}, {})


SHAPES = {  # (operation, ids shape, offsets given)
    "lookup 0-d": ("embedding_forward", (), False),
    "lookup 1-d": ("embedding_forward", (3,), False),
    "lookup 2-d": ("embedding_forward", (2, 3), False),
    "bag 1-d with offsets": ("embedding_bag_forward", (3,), True),
    "bag 2-d": ("embedding_bag_forward", (2, 3), False),
}


def _crashed(drawn: list[tuple[str, bool]]) -> tuple[list[Case], list[CaseResult]]:
    """The cases drawn (shape, raised) and their results, an untyped TypeError on those that raised, with the
    condition analysis run over them."""
    cases = [_bag_or_lookup(i, *SHAPES[shape]) for i, (shape, _) in enumerate(drawn)]
    raised = symptom(SymptomKey.of(UNTYPED, "TypeError", None), "raised TypeError; this input is valid")
    results = [
        CaseResult(c.id, (), (), c.operation, ERROR if down else PASS, causes=[raised] if down else [])
        for c, (_, down) in zip(cases, drawn)
    ]
    crash_conditions(RunRecord(results, ReferenceAdapter().capabilities(), {"name": "t"}), {c.id: c for c in cases})
    return cases, results


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(SHAPES)), st.booleans()), min_size=2, max_size=8))
def test_no_batch_axis_is_said_only_where_the_raising_cases_have_1d_ids_without_offsets(drawn) -> None:
    cases, results = _crashed(drawn)
    said = any(NO_BATCH_AXIS in cause.title for r in results for cause in r.causes)
    flat = {c.id: np.ndim(c.inputs()["ids"]) == 1 and c.inputs().get("offsets") is None for c in cases}
    crashed = [c for c, (_, down) in zip(cases, drawn) if down]
    operations = {c.operation for c in crashed}
    others = [c for c, (_, down) in zip(cases, drawn) if not down and c.operation in operations]
    holds = bool(crashed) and bool(others) and all(flat[c.id] for c in crashed) and not any(flat[c.id] for c in others)
    assert said == holds, [(c.id, c.operation, np.shape(c.inputs()["ids"]), down) for c, (_, down) in zip(cases, drawn)]


def test_a_bag_raising_on_every_batch_of_flat_ids_is_said_to_raise_with_offsets() -> None:
    _, results = _crashed([("bag 1-d with offsets", True), ("bag 2-d", False), ("bag 1-d with offsets", True)])
    assert "whenever the ids are 1-d with offsets" in results[0].causes[0].title, results[0].causes[0].title
