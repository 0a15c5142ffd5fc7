"""Rotary cases under the declarable conventions (spec section 14, EMB-ROPE-V1..V3; area rope, listed after
reference/cases/rope_families.py): frozen goldens that pin each convention, and one under two at once, so that
every requirement has a golden whatever a run declares (a run that declares a convention also computes its cases
from the canonical ones it changes: conformance/corpus/rope_conventions.py, through the same reference)."""

from __future__ import annotations

from dataclasses import replace

from embconf.model.rope_conventions import RopeConvention
from embconf.reference.cases import CaseSpec
from embconf.reference.cases.rope import HALF, INTER, YARN, rotation, run, tables


def under(spec: CaseSpec, *names: str) -> CaseSpec:
    """``spec`` answered under the named conventions: its requirements and features gain theirs."""
    chosen = [RopeConvention(name) for name in names]
    return replace(
        spec,
        requirements=tuple(c.requirement for c in chosen) + spec.requirements,
        features=spec.features + tuple(c.feature for c in chosen),
    )


def cases() -> list[CaseSpec]:
    yarn = ("EMB-ROPE-9",)
    prec = ("EMB-ROPE-11",)
    return [
        under(rotation("rope.convention.negative_sense.pinned.forward_d64_p4093", "nanochat's rotation by the negative angle: the forward is the canonical backward of x.", (), (2, 8, 64), run(4093, 8), HALF), "negative_sense"),
        under(rotation("rope.convention.negative_sense.pinned.backward_interleaved_d32", "The backward under the negative angle: the canonical forward of the upstream gradient.", (), (1, 8, 32), run(0, 8), INTER, backward=True), "negative_sense"),
        under(tables("rope.convention.attention_by_caller.pinned.tables_yarn_d64", "YaRN tables with the attention factor left to the caller (a = 1).", yarn, run(16380, 8), 64, scaling=YARN), "attention_by_caller"),
        under(rotation("rope.convention.attention_by_caller.pinned.forward_yarn_d64", "A YaRN rotation with the attention factor left to the caller.", yarn, (2, 8, 64), run(16380, 8), HALF, scaling=YARN), "attention_by_caller"),
        under(rotation("rope.convention.float32_tables.pinned.forward_float16_d64_p32764", "float16 x with cos/sin in float32: the rotation term held to float32's unit roundoff.", prec, (2, 8, 64), run(32764, 8), HALF, dtype="float16"), "float32_tables"),
        under(rotation("rope.convention.float32_tables.pinned.backward_bfloat16_d64", "bfloat16 backward with float32 tables.", prec, (1, 8, 64), run(4093, 8), INTER, dtype="bfloat16", backward=True), "float32_tables"),
        under(rotation("rope.convention.both.pinned.forward_float16_negative_d64", "Two conventions at once: the negative angle, with float32 tables, on float16 x.", prec, (2, 8, 64), run(131068, 8), INTER, dtype="float16"), "negative_sense", "float32_tables"),
    ]
