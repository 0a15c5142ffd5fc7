"""Where a plain reading's cases sit among the run's cases: a case property that separates them, measured.

A difference no mistake explains (``localise``: what was measured, located in the output) is also said with the
property of its cases when one separates exactly: every valid case of the operation it is measured on has it, and
no other valid case of that operation does (a dtype, a later call on one instance, a bag mode or option, a rotary
scaling or pairing, a start position). Nothing is added when no property separates them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Callable, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.model.outcomes import ERROR, FAIL, PASS, CaseResult
from embconf.model.record import RunRecord
from embconf.model.symptom import PLAIN

JUDGED = (PASS, FAIL, ERROR)
Property = Callable[[Case, CaseResult], Optional[str]]  # a case's value of the property ("" / None: it has none)


def _dtype(case: Case, result: CaseResult) -> Optional[str]:
    dtypes = sorted(case.dtypes)
    return f"the inputs are {' and '.join(dtypes)}" if len(dtypes) == 1 else None


def _later_call(case: Case, result: CaseResult) -> Optional[str]:
    return "it is a later call on one instance (earlier calls ran on it first)" if result.call > 1 else None


def _option(name: str, words: str) -> Property:
    def value(case: Case, result: CaseResult) -> Optional[str]:
        found = case.inputs().get(name)
        if isinstance(found, Mapping):
            found = found.get("rope_type")
        return f"{words} {found}" if isinstance(found, (str, bool)) else None

    return value


def _given(name: str, words: str) -> Property:
    def value(case: Case, result: CaseResult) -> Optional[str]:
        return words if case.inputs().get(name) is not None else None

    return value


def _start(case: Case, result: CaseResult) -> Optional[str]:
    start = case.inputs().get("start_pos")
    return (
        "start_pos > 0" if isinstance(start, (int, np.integer)) and not isinstance(start, bool) and start > 0 else None
    )


def _two_d(case: Case, result: CaseResult) -> Optional[str]:
    ids = case.inputs().get("ids")
    return "the ids are 2-d (fixed-length bags)" if isinstance(ids, np.ndarray) and ids.ndim == 2 else None


PROPERTIES: tuple[Property, ...] = (
    _dtype,
    _later_call,
    _option("mode", "mode is"),
    _given("per_sample_weights", "per_sample_weights are given"),
    _given("padding_idx", "padding_idx is given"),
    _option("include_last_offset", "include_last_offset is"),
    _two_d,
    _option("scaling", "the scaling is"),
    _option("pairing", "the pairing is"),
    _start,
)


def located_cases(run: RunRecord, by_id: Mapping[str, Case]) -> None:
    """Each plain reading said with the case property that separates its cases from the other valid cases of
    its operation, when one does."""
    shown: dict[str, set[str]] = {}  # plain key -> the cases it is measured on
    for result in run.results:
        for cause in result.causes:
            said = cause.symptom
            if not cause.is_mutant and said is not None and said.family in PLAIN:
                shown.setdefault(cause.key, set()).add(result.id)
    for key, ids in shown.items():
        condition = _separating(run, by_id, ids)
        if condition is None:
            continue
        when = f"; of the {condition[0]} cases, exactly those where {condition[1]} show it"
        for result in run.results:
            if result.id in ids:
                result.causes = [
                    replace(c, title=c.title + when, summary=c.summary + when)
                    if c.key == key and not c.is_mutant
                    else c
                    for c in result.causes
                ]


def _separating(run: RunRecord, by_id: Mapping[str, Case], ids: set[str]) -> Optional[tuple[str, str]]:
    """(operation, property) when the cases ``ids`` are of one operation and exactly its valid cases with that
    property; None otherwise."""
    cases = [(by_id[r.id], r) for r in run.results if r.id in by_id and r.outcome in JUDGED]
    valid = [(c, r) for c, r in cases if c.expected_error is None]
    operations = {c.operation for c, r in valid if r.id in ids}
    if len(operations) != 1:
        return None
    (operation,) = operations
    group = [(c, r) for c, r in valid if c.operation == operation]
    inside = [pair for pair in group if pair[1].id in ids]
    outside = [pair for pair in group if pair[1].id not in ids]
    if not outside or len(inside) + len(outside) != len(group):
        return None
    for prop in PROPERTIES:
        values = {prop(c, r) for c, r in inside}
        if len(values) == 1 and None not in values:
            (value,) = values
            if all(prop(c, r) != value for c, r in outside):
                return operation, str(value)
    return None
