"""The cases of the conventions declared by name (rotary conventions, EMB-ROPE-V1..V3; bag conventions,
EMB-BAG-V1, V2): one for each case among those run that a declared convention changes, with the same inputs and
the answer under every declared convention that changes it (and those it was already under: conventions
compose), computed by the reference in the run that declares them, as the frozen goldens under a convention are
(``reference/generate.py``). The expected error is the reference's under the conventions (a negative id that
the canonical case refuses is dropped under ``drop_negative_ids``), and the canonical markers of the conventions
it is computed under are not its features.

A case of calls on one instance any call of which a convention changes is computed whole, each call under the
conventions, so a declaration never leaves a case with nothing in its place.
"""

from __future__ import annotations

import enum
from typing import Any, Sequence

from embconf.corpus.fixtures import Case, case_of
from embconf.model.features import STATEFUL

SOURCE = "computed for a declared convention"


def named_convention_cases(members: type[enum.Enum], prefix: str) -> Any:
    """The computer of one kind of named conventions (``members``), its cases' ids under ``prefix``."""

    def compute(declared: frozenset[Any], cases: Sequence[Case]) -> list[Case]:
        built = []
        for case in cases:
            calls = case.calls or (case,)
            carried = {c for c in members if c.feature in case.features}  # type: ignore[attr-defined]
            changing = {c for c in declared for call in calls if c.changes(call.operation, case.features)}
            if changing and carried <= declared:
                built.append(_computed(sorted(carried | changing, key=lambda c: c.value), case, prefix))
        return built

    return compute


def _computed(conventions: list[Any], case: Case, prefix: str) -> Case:
    """``case`` answered by the reference under ``conventions`` (float64, rounded once)."""
    from embconf.reference.cases import CaseSpec, sequence
    from embconf.reference.generate import build_case

    names = "+".join(c.value for c in conventions)
    area = prefix.split(".")[0] + "."
    base = case.id[len(prefix) :].partition(".")[2] if case.id.startswith(prefix) else case.id.removeprefix(area)
    case_id = f"{prefix}{names}.{base}"
    said = "; ".join(c.describe() for c in conventions)
    markers = {c.canonical_marker for c in conventions}
    features = tuple(dict.fromkeys(f for f in (*case.features, *(c.feature for c in conventions)) if f not in markers))
    requirements = tuple(dict.fromkeys((*(c.requirement for c in conventions), *case.requirements)))
    description = f"{case.description} Under the declared convention(s): {said}."
    own = tuple(f for f in features if f != STATEFUL) if case.is_sequence else features  # sequence() adds it
    calls = [
        CaseSpec(case_id, description, requirements, call.operation, call.inputs(), own)
        for call in case.calls or (case,)
    ]
    spec = sequence(case_id, description, requirements, calls) if case.is_sequence else calls[0]
    return case_of(build_case(spec, checked=False), SOURCE)  # the reference's error under them, whatever it is
