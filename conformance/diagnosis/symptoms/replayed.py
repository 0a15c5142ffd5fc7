"""Symptoms measured by replaying a bag case through the reference with one thing changed, never guessed:

- an undeclared bag convention (EMB-BAG-V1, V2): a canonical case that a declarable convention answers otherwise
  (it carries the convention's canonical marker) answered exactly as the reference answers it under that
  convention; the symptom says which, and both ways out (the canonical rule, or the declaration);
- a padding id counted (EMB-BAG-7): a case with ``padding_idx`` answered exactly as without it."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, Callable

from embconf.adapters.base import call_python
from embconf.corpus.fixtures import Case
from embconf.diagnosis.symptoms.base import Symptom, symptom
from embconf.model.bag import BAG_OPERATIONS
from embconf.model.bag_conventions import BagConvention
from embconf.model.outcomes import FAIL, CaseResult
from embconf.model.symptom import CONVENTION, PADDING_COUNTED, SymptomKey

CANONICAL = {
    BagConvention.DROP_NEGATIVE_IDS: "raise index_out_of_range for an id < 0 (EMB-BAG-13)",
    BagConvention.PRUNE_NONPOSITIVE_WEIGHTS: "use every weight as given: a zero weight counts, a negative one "
    "subtracts (EMB-BAG-9)",
}


def _wrong_bag_values(case: Case, result: CaseResult) -> bool:
    """Whether the case is a bag operation's that failed with outputs (the only results a replay can match)."""
    return result.outcome == FAIL and result.error_kind is None and case.operation in BAG_OPERATIONS


def _replayed(
    case: Case, inputs: Mapping[str, Any], result: CaseResult, function: Callable[..., Any], **called: Any
) -> bool:
    """Whether ``function`` (the reference with one thing changed) answers the case as the implementation did,
    called with the case's ``inputs`` or, given, with ``called``."""
    from embconf.diagnosis.replay import reply_matches

    return reply_matches(case, inputs, call_python(case.operation, function, **(called or inputs)), result)


def undeclared_convention(case: Case, inputs: Mapping[str, Any], result: CaseResult) -> list[Symptom]:
    """The convention whose answer the failing result is, among those that change the case; [] for none."""
    from embconf.reference import OPERATIONS

    if not _wrong_bag_values(case, result):
        return []
    return [
        _said(convention)
        for convention in BagConvention
        if convention.changes(case.operation, case.features)
        and _replayed(case, inputs, result, partial(OPERATIONS[case.operation], conventions=(convention.value,)))
    ]


def _said(convention: BagConvention) -> Symptom:
    said = (
        f"follows the bag convention {convention.value} without declaring it: {convention.describe()}, where the "
        "canonical rule applies"
    )
    return symptom(
        SymptomKey.of(CONVENTION, "bag", convention.value),
        said,
        f"{CANONICAL[convention]}; or, if this is the behaviour meant, declare the convention "
        f"(EMBCONF_BAG_CONVENTIONS = ['{convention.value}'] in a functions: module, bag_conventions in an adapter's "
        f"capabilities) ({convention.requirement})",
        title=said,
    )


def padding_counted(case: Case, inputs: Mapping[str, Any], result: CaseResult) -> list[Symptom]:
    """The padding id counted like any id: the failing result is the reference's answer without ``padding_idx``."""
    from embconf.reference import OPERATIONS

    padding = inputs.get("padding_idx")
    if not _wrong_bag_values(case, result) or padding is None or case.expected_error is not None:
        return []
    without = {name: value for name, value in inputs.items() if name != "padding_idx"}
    if not _replayed(case, inputs, result, OPERATIONS[case.operation], **without):
        return []
    said = f"counts the padding id like any other id: the outputs are those without padding_idx (= {padding})"
    resolve = " (a negative padding_idx counts from the end: compare ids with V + padding_idx)" if padding < 0 else ""
    return [
        symptom(
            SymptomKey.of(PADDING_COUNTED, "bag"),
            said,
            f"leave positions whose id is padding_idx out of the sum, the count and the max{resolve} (EMB-BAG-7)",
            title=said,
        )
    ]
