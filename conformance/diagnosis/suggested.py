"""Conventions suggested when they explain the failures: a declarable convention the implementation did not declare
(a rotary or bag convention, a named sinusoid profile: ``embconf.model.convention.KINDS``) whose expectations,
computed as a run that declares it computes them (``embconf.corpus.conventions.COMPUTERS``; a profile's table by the
reference), are what the implementation answered on failing cases.

The predicate is checked on every failing case the convention changes (those it could explain): when it holds on
all of them, each says so and gives the declaration exactly as the implementation would write it (a ``functions:``
module's attribute, else the capabilities' field on the wire); when it holds on some, each of those says which of
them it explains and which not, and no declaration is offered. Either statement joins the entry of the mistake that
already explains those cases (one defect, one entry), and replaces a case's own "follows the convention" reading.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Iterator, Optional, Sequence

from embconf.corpus.fixtures import Case
from embconf.model.convention import KINDS, declared_of
from embconf.model.declarations import ConventionKind
from embconf.model.outcomes import DIAGNOSED, FAIL, CaseResult
from embconf.model.record import Cause, RunRecord
from embconf.model.sinusoid import CANONICAL_FEATURE
from embconf.model.symptom import CONVENTION, SymptomKey

MAX_CASES = 256  # failing cases a convention's expectations are computed for: more, and nothing is said
MAX_TABLE = 1 << 22  # elements: a larger sinusoid table is not computed again (the profile is then not said)
NAMED = 6  # cases named in a sentence, at most


def suggest_conventions(run: RunRecord, by_id: Mapping[str, Case]) -> None:
    """Each undeclared convention that answers some failing case it changes, said on those cases (see above)."""
    failing = [r for r in run.results if r.outcome in DIAGNOSED and r.id in by_id]
    results = {r.id: r for r in failing}
    declared = run.capabilities.conventions
    for kind, convention, label in _candidates(declared):
        changed = list(_computed(kind, declared, convention, failing, by_id))
        if len(changed) >= MAX_CASES or any(expected is UNCHECKED for _, expected in changed):
            continue  # not every case it changes was computed: "every" is not said, nor "some of"
        explained = [r.id for r, expected in changed if _answered_as(expected, r)]
        if not explained:
            continue
        others = [r.id for r, _ in changed if r.id not in explained]
        declaration = _declaration(run.impl.kind, kind, declared, convention)
        said, every = _said(kind, label, convention, explained, others, declaration)
        for case_id in explained:
            result = results[case_id]
            result.causes = _joined(
                result.causes, said, every, SymptomKey.of(CONVENTION, kind.name, label), declaration
            )


def _candidates(declared: frozenset[Any]) -> Iterator[tuple[ConventionKind, Any, str]]:
    """(kind, convention, its name) of every convention not declared: a named kind's members, a named profile."""
    from embconf.model.bag_conventions import BagConvention
    from embconf.model.rope_conventions import RopeConvention
    from embconf.model.sinusoid import named_profiles

    members: dict[str, list[Any]] = {"rope": list(RopeConvention), "bag": list(BagConvention)}
    for kind in KINDS:
        mine = declared_of(declared, kind.name)
        if kind.name == "sinusoid":
            if not mine:
                yield from ((kind, point, name) for name, point in named_profiles().items() if not point.canonical)
            continue
        yield from ((kind, c, c.value) for c in members.get(kind.name, []) if c not in mine)


Expected = tuple[Optional[str], Mapping[str, Any], Mapping[str, Any]]  # (error kind, outputs, tolerance)
UNCHECKED: Expected = (None, {}, {})  # a case it changes that is not computed again (too large): nothing is said


def _computed(
    kind: ConventionKind,
    declared: frozenset[Any],
    convention: Any,
    failing: list[CaseResult],
    by_id: Mapping[str, Case],
) -> Iterator[tuple[CaseResult, Expected]]:
    """(failing result, what the convention expects of it) for each failing case the convention changes."""
    from embconf.corpus.conventions import COMPUTERS

    count = 0
    for result in failing:
        case = by_id[result.id]
        if count >= MAX_CASES:
            return
        expected: Optional[Expected] = None
        if kind.name == "sinusoid":
            expected = _profile_table(case, result, convention)
        elif not case.is_sequence and convention.changes(case.operation, case.features):
            built = COMPUTERS[kind.area](frozenset(declared_of(declared, kind.name) | {convention}), [case])
            if built:
                expected = (built[0].expected_error, built[0].expected_outputs, built[0].tolerance)
        if expected is not None:
            count += 1
            yield result, expected


def _profile_table(case: Case, result: CaseResult, profile: Any) -> Optional[Expected]:
    """What a canonical sinusoid table case expects under the profile (None for any other case): its table (the
    rows kept of a large one), or the error the profile raises for it."""
    from embconf.judging.kept import RowSample
    from embconf.reference.sinusoid import sinusoidal_table

    inputs = case.inputs()
    if case.operation != "sinusoidal_table" or case.expected_error or CANONICAL_FEATURE not in case.features:
        return None
    kept = (result.actual or {}).get("table")
    rows = list(kept.rows) if isinstance(kept, RowSample) else None
    if int(inputs["max_len"]) * int(inputs["embed_dim"]) > (MAX_TABLE * 8 if rows else MAX_TABLE):
        return UNCHECKED
    try:
        size = (int(inputs["max_len"]), int(inputs["embed_dim"]), str(inputs["dtype"]))
        return None, {"table": sinusoidal_table(*size, profile, only_rows=rows)}, case.tolerance
    except Exception as exc:  # the profile refuses the width (its error kind), or the reference cannot say
        kind = getattr(exc, "kind", None)
        return (kind, {}, {}) if isinstance(kind, str) else UNCHECKED


def _answered_as(expected: Expected, result: CaseResult) -> bool:
    """Whether the implementation's answer is the expected one (an error kind, or outputs within the tolerance)."""
    from embconf.judging.kept import compare_kept

    if expected is UNCHECKED:
        return False
    error, outputs, tolerance = expected
    if error is not None:
        return result.error_kind == error
    if (
        result.outcome != FAIL
        or result.error_kind is not None
        or not result.actual
        or set(outputs) - set(result.actual)
    ):
        return False
    try:
        return not compare_kept(outputs, result.actual, tolerance)
    except (ValueError, TypeError):
        return False


def _declaration(impl_kind: str, kind: ConventionKind, declared: frozenset[Any], convention: Any) -> str:
    """The declaration as the implementation writes it: a functions: module's attribute, else the wire's field."""
    mine = frozenset() if kind.single else declared_of(declared, kind.name)
    fields = kind.to_json(frozenset(mine | {convention}))
    attribute, key = next(
        (a, k) for a, k in kind.module_attributes.items() if k in fields and fields[k] not in (None, "family")
    )
    if impl_kind == "functions":
        return f"{attribute} = {json.dumps(fields[key])} in the module"
    return f'"{key}": {json.dumps(fields[key])} in the capabilities'


def _said(
    kind: ConventionKind, label: str, convention: Any, explained: list[str], others: list[str], declaration: str
) -> tuple[str, bool]:
    """(the sentence, whether the convention answers every failing case it changes)."""
    what = f"the {kind.name} {'profile' if kind.name == 'sinusoid' else 'convention'} {label}"
    if not others:
        return (
            f"answered as under {what} ({convention.describe()}) on every failing case it changes "
            f"({len(explained)}): the computed expectations match the outputs; declare it: {declaration}"
        ), True
    return (
        f"answered as under {what} ({convention.describe()}) on {len(explained)} of the "
        f"{len(explained) + len(others)} failing cases it changes ({_named(explained)}), not on {_named(others)}: "
        "declaring it would leave those failing"
    ), False


def _named(ids: list[str]) -> str:
    return ", ".join(ids[:NAMED]) + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")


def _joined(causes: Sequence[Cause], said: str, every: bool, own: SymptomKey, declaration: str) -> list[Cause]:
    """A case's causes with the convention said by the cause that explains the case (its own reading of the
    convention, else the first complete cause: a catalogue mistake keeps its id, one defect, one entry): when the
    convention answers every failing case it changes, in its title, with the declaration in its hint; when some,
    a reading of the convention says so in its place, else the explaining cause's hint does."""
    mine = [
        c
        for c in causes
        if c.symptom is not None and c.symptom.family == CONVENTION and c.symptom.parts[:2] == own.parts
    ]
    explaining = mine[0] if mine else next((c for c in causes if c.complete), None)
    if explaining is None:
        return list(causes)
    if every:
        title = said if mine else f"{explaining.title}; {said}"
        hint = (
            explaining.hint if mine else f"{explaining.hint}; or, if this is the behaviour meant, declare {declaration}"
        )
        told = replace(explaining, title=title, summary=title if mine else f"{explaining.summary}; {said}", hint=hint)
    elif mine:
        told = replace(explaining, title=said, summary=said)
    else:
        told = replace(explaining, hint=f"{explaining.hint}; {said}" if explaining.hint else said)
    return [told if c is explaining else c for c in causes]


__all__ = ["suggest_conventions"]
