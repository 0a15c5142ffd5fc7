"""Symptoms of bag lookups (area bags), each a predicate measured on the case it is said of, never guessed:

- ``running_sum``: a half-precision bag output that is, element for element, the bag's rows added one by one in the
  table's dtype (rounded after every addition), where the spec rounds the exact sum once;
- ``repeated_rows``: a table gradient that differs only in rows the ids select more than once, every row selected
  once being right (repeated occurrences not all added up);
- ``padding_positions``: a weight gradient that differs only at positions holding ``padding_idx``, which is not
  counted and has 0;
- ``last_bag_row``: an output of shape (D,) that is the expected last bag's row;
- ``empty_refused``: ``invalid_offsets`` raised on a case whose only offsets the spec accepts hold equal entries
  (empty bags).

Each symptom carries the identity of the catalogue mistake it is the effect of (``mutants/bag_reports.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.symptoms.base import Symptom, symptom
from embconf.model.outcomes import CaseResult
from embconf.model.symptom import BAG, SymptomKey

HALF = ("float16", "bfloat16")


def _differs(case: Case, name: str, want: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Which elements of ``got`` differ from ``want`` beyond the case's tolerance for ``name`` (exact without one)."""
    rule = case.tolerance.get(name) or {}
    wide, expected = got.astype(np.float64), want.astype(np.float64)
    if rule.get("kind") == "close":
        return ~np.isclose(wide, expected, rtol=float(rule.get("rtol", 0.0)), atol=float(rule.get("atol", 0.0)))
    return ~((wide == expected) | (np.isnan(wide) & np.isnan(expected)))


def _listed(values: list[int], limit: int = 8) -> str:
    return ", ".join(map(str, values[:limit])) + (", ..." if len(values) > limit else "")


def running_sum(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """A half-precision output equal, element for element, to the running sum in the table's dtype."""
    from embconf.adapters.bags import BagCall
    from embconf.mutants.bag_reduce import BagSlip, bag_forward

    dtype = np.dtype(want.dtype).name
    if name != "output" or dtype not in HALF or inputs.get("mode") not in ("sum", "mean", "sqrtn"):
        return []
    given = {k: inputs.get(k) for k in ("weight", "ids", "offsets", "mode", "per_sample_weights", "padding_idx")}
    try:
        call = BagCall(**given, include_last_offset=inputs.get("include_last_offset") is True)
        running = bag_forward(BagSlip(accumulate_in_dtype=True), call)
    except (IndexError, TypeError, ValueError):  # inputs the spec refuses: nothing to compare
        return []
    wrong = int(_differs(case, name, want, got).sum())
    if (
        not wrong
        or running.shape != got.shape
        or not np.array_equal(running.astype(np.float64), got.astype(np.float64))
    ):
        return []
    said = (
        f"every element of the output is the bag's rows added one by one in {dtype}, rounded after each addition "
        f"(a running sum in the table's dtype), not the exact sum rounded once: {wrong} of {got.size} elements "
        "differ from the spec's"
    )
    return [
        symptom(
            SymptomKey.of(BAG, "running_sum", case.operation, dtype),
            said,
            "accumulate in float32 or wider and round each output element once to the table's dtype (EMB-BAG-14)",
            title=f"the bag sums are accumulated in {dtype}, rounded after every addition",
            mistake="bag.sums_in_table_dtype",
        )
    ]


def _selected(inputs: Mapping[str, Any]) -> dict[int, int]:
    """How many counted occurrences select each row (padding positions left out)."""
    ids = np.asarray(inputs["ids"]).reshape(-1)
    padding = inputs.get("padding_idx")
    vocab = int(np.shape(inputs["weight"])[0])
    pad = None if padding is None else int(padding) % vocab
    rows, counts = np.unique([int(i) for i in ids.tolist() if int(i) != pad], return_counts=True)
    return dict(zip(rows.tolist(), counts.tolist()))


def repeated_rows(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """grad_weight wrong only in rows selected more than once, and right in every row selected once."""
    if name != "grad_weight" or got.ndim != 2:
        return []
    counts = _selected(inputs)
    wrong = sorted(np.flatnonzero(_differs(case, name, want, got).any(axis=1)).tolist())
    repeated = {row for row, count in counts.items() if count > 1}
    if not wrong or not set(wrong) <= repeated or len(counts) == len(repeated):
        return []
    said = (
        f"'grad_weight' differs only in rows the ids select more than once ({_listed(wrong)} of the "
        f"{len(repeated)} such rows); every row selected once is right: the gradients of a row's repeated "
        "occurrences are not added up as the spec adds them (assigned, or some lost)"
    )
    return [
        symptom(
            SymptomKey.of(BAG, "repeated_rows", case.operation),
            said,
            "add every occurrence's gradient into its row (np.add.at, index_add, index_put(accumulate=True)) "
            "(EMB-BAG-10, EMB-BWD-2)",
            title="the table gradient is wrong only in rows selected more than once: repeated occurrences are not "
            "all added up",
            mistake="bag.repeated_ids_overwritten",
        )
    ]


def padding_positions(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray
) -> list[Symptom]:
    """grad_per_sample_weights wrong exactly at (some of) the positions holding padding_idx, where it is 0."""
    padding = inputs.get("padding_idx")
    if name != "grad_per_sample_weights" or padding is None or got.shape != want.shape:
        return []
    ids = np.asarray(inputs["ids"]).reshape(-1)
    held = ids == int(padding) % int(np.shape(inputs["weight"])[0])
    wrong = _differs(case, name, want, got).reshape(-1)
    if not wrong.any() or np.any(wrong & ~held) or np.any(want.reshape(-1)[wrong] != 0):
        return []
    positions = np.flatnonzero(wrong).tolist()
    said = (
        f"'grad_per_sample_weights' differs only at positions holding padding_idx ({padding}): positions "
        f"{_listed(positions)} are not 0, where a position not counted has 0"
    )
    return [
        symptom(
            SymptomKey.of(BAG, "padding_positions", case.operation),
            said,
            "zero grad_per_sample_weights at positions holding padding_idx (EMB-BAG-12)",
            title="the weight gradient is not 0 at positions holding padding_idx",
            mistake="bag.padding_weight_gradient",
        )
    ]


def empty_refused(case: Case, inputs: Mapping[str, Any], result: CaseResult) -> list[Symptom]:
    """invalid_offsets raised on valid offsets that hold equal entries (an empty bag)."""
    offsets = inputs.get("offsets")
    if result.error_kind != "invalid_offsets" or case.expected_error is not None or offsets is None:
        return []
    points = np.asarray(offsets).reshape(-1)
    ends = points if inputs.get("include_last_offset") is True else np.append(points, np.size(inputs["ids"]))
    empty = np.flatnonzero(np.diff(ends) == 0).tolist()
    if not empty:
        return []
    said = (
        f"raises invalid_offsets for valid offsets whose equal entries make bags {_listed(empty)} empty: equal "
        "offsets are an empty bag, a zero row"
    )
    return [
        symptom(
            SymptomKey.of(BAG, "empty_refused", case.operation),
            said,
            "accept equal offsets: an empty bag gives a zero row (EMB-BAG-1, 6)",
            title="valid offsets with equal entries (empty bags) are refused as invalid_offsets",
            mistake="bag.empty_bags_refused",
        )
    ]


def last_bag_row(case: Case, name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """An output of shape (D,) equal to the expected last bag's row: one row returned where B are expected."""
    if name != "output" or want.ndim != 2 or not want.shape[0] or got.shape != want.shape[1:]:
        return []
    if _differs(case, name, want[-1:], got[None]).any():
        return []
    rows = want.shape[0]
    said = (
        f"the output is one row of shape {got.shape}, equal to the expected row of the last bag ({rows - 1}); one "
        f"row per bag is expected, shape {want.shape}"
    )
    return [
        symptom(
            SymptomKey.of(BAG, "last_bag_row", case.operation),
            said,
            "write each bag's row into a (B, D) output (EMB-BAG-1)",
            title="the output is the last bag's row alone, not one row per bag",
            mistake="bag.last_bag_only",
        )
    ]
