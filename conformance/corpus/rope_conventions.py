"""The cases of the rotary conventions an implementation declares (spec section 14, EMB-ROPE-V1..V3, since 2.0.0):
one for each case among those run that a declared convention changes, with the same inputs and the answer under
every declared convention that changes it (and those it was already under: conventions compose), computed by the
reference in the run that declares them, as the frozen goldens under a convention are (``reference/generate.py``):

- ``negative_sense``: the rotation by the negative angle, which is the canonical backward of x (and its backward
  the canonical forward of the upstream gradient), under the canonical tolerance;
- ``attention_by_caller``: YaRN's tables and rotations with the attention factor 1, under their tolerance;
- ``float32_tables``: the canonical golden of a half-precision x, under the tolerance of float32 tables.

A case of calls on one instance any call of which a convention changes is computed whole, each call under the
conventions, so a declaration never leaves such a case with nothing in its place.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from embconf.corpus.fixtures import Case, case_of
from embconf.model.features import STATEFUL
from embconf.model.rope_conventions import RopeConvention

SOURCE = "computed for a declared rope convention"
PREFIX = "rope.convention."


def rope_convention_cases(declared: Iterable[RopeConvention], cases: Sequence[Case]) -> list[Case]:
    """The cases of the declared conventions: one per case of ``cases`` that one of them changes."""
    chosen = frozenset(declared)
    built = []
    for case in cases:
        calls = case.calls or (case,)
        carried = {c for c in RopeConvention if c.feature in case.features}
        changing = {c for c in chosen for call in calls if c.changes(call.operation, case.features)}
        if changing and carried <= chosen:
            built.append(_computed(sorted(carried | changing, key=lambda c: c.value), case))
    return built


def _computed(conventions: list[RopeConvention], case: Case) -> Case:
    """``case`` answered by the reference under ``conventions`` (float64, rounded once)."""
    from embconf.reference.cases import CaseSpec, sequence
    from embconf.reference.generate import build_case

    names = "+".join(c.value for c in conventions)
    base = case.id.removeprefix("rope.")
    if case.id.startswith(PREFIX):  # a case under a convention already: its own id without the prefix
        base = case.id[len(PREFIX) :].partition(".")[2]
    case_id = f"{PREFIX}{names}.{base}"
    said = "; ".join(c.describe() for c in conventions)
    features = tuple(dict.fromkeys((*case.features, *(c.feature for c in conventions))))
    requirements = tuple(dict.fromkeys((*(c.requirement for c in conventions), *case.requirements)))
    description = f"{case.description} Under the declared convention(s): {said}."
    own = tuple(f for f in features if f != STATEFUL) if case.is_sequence else features  # sequence() adds it
    calls = [
        CaseSpec(case_id, description, requirements, call.operation, call.inputs(), own, call.expected_error)
        for call in case.calls or (case,)
    ]
    spec = sequence(case_id, description, requirements, calls) if case.is_sequence else calls[0]
    return case_of(build_case(spec), SOURCE)
