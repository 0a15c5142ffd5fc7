"""Symptoms of bag lookups (area bags), each a predicate measured on the case it is said of, never guessed:

- ``running_sum``: a half-precision bag output that is, element for element, the bag's rows added one by one in the
  table's dtype (rounded after every addition), where the spec rounds the exact sum once;
- ``repeated_rows``: a table gradient that differs only in rows the ids select more than once, each holding its
  last occurrence's gradient alone (indexed assignment), every row selected once being right;
- ``padding_positions``: a weight gradient that differs only at positions holding ``padding_idx``, which is not
  counted and has 0;
- ``bag_shapes``: an output of another shape, read: the ids' rows unreduced, the expected last bag's row alone
  (shape (D,)), or the expected rows of every bag but the last one, which holds ids;
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


WORDS = {  # what -> (the hint, the verdict's title, the catalogue mistake it is the effect of)
    "running_sum": (
        "accumulate in float32 or wider and round each output element once to the table's dtype (EMB-BAG-14)",
        "the bag sums are accumulated in {}, rounded after every addition",
        "bag.sums_in_table_dtype",
    ),
    "repeated_rows": (
        "add every occurrence's gradient into its row (np.add.at, index_add, index_put(accumulate=True)) "
        "(EMB-BAG-10, EMB-BWD-2)",
        "a repeated id's row keeps only its last occurrence's gradient: overwritten (grad[ids] = g), not accumulated",
        "bwd.overwrite",
    ),
    "padding_positions": (
        "zero grad_per_sample_weights at positions holding padding_idx (EMB-BAG-12)",
        "the weight gradient is not 0 at positions holding padding_idx",
        "bag.padding_weight_gradient",
    ),
    "empty_refused": (
        "accept equal offsets: an empty bag gives a zero row (EMB-BAG-1, 6)",
        "valid offsets with equal entries (empty bags) are refused as invalid_offsets",
        "bag.empty_bags_refused",
    ),
    "unreduced": (
        "reduce each bag's rows to one (B, D) row per bag in the mode asked for (EMB-BAG-1 to 5)",
        "the output is the ids' rows unreduced: no bag is reduced",
        "bag.not_reduced",
    ),
    "last_bag_dropped": (
        "without include_last_offset, offsets holds B starts and the last bag runs to N (EMB-BAG-1, 8)",
        "the last bag (offsets[-1] to N) has no row: the offsets are read as boundaries",
        "bag.last_bag_dropped",
    ),
    "last_bag_row": (
        "write each bag's row into a (B, D) output (EMB-BAG-1)",
        "the output is the last bag's row alone, not one row per bag",
        "bag.last_bag_only",
    ),
}


def _stated(what: str, case: Case, said: str, *detail: str) -> list[Symptom]:
    """The one symptom a detector states: its sentence measured on the case, under the catalogue mistake's identity."""
    hint, title, mistake = WORDS[what]
    key = SymptomKey.of(BAG, what, case.operation, *detail)
    return [symptom(key, said, hint, title=title.format(*detail), mistake=mistake)]


def _listed(values: list[int], limit: int = 8) -> str:
    return ", ".join(map(str, values[:limit])) + (", ..." if len(values) > limit else "")


def running_sum(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """A half-precision output equal, element for element, to the running sum in the table's dtype."""
    from embconf.adapters.bags import BagCall
    from embconf.mutants.bag_reduce import BagSlip, bag_forward

    dtype = np.dtype(want.dtype).name
    if name != "output" or dtype not in HALF or inputs.get("mode") not in ("sum", "mean", "sqrtn"):
        return []
    try:
        last = inputs.get("include_last_offset") is True
        given = (inputs["weight"], inputs["ids"], inputs.get("offsets"), str(inputs["mode"]))
        call = BagCall(*given, inputs.get("per_sample_weights"), inputs.get("padding_idx"), last)
        running = bag_forward(BagSlip(accumulate_in_dtype=True), call)
    except (IndexError, KeyError, TypeError, ValueError):  # inputs the spec refuses: nothing to compare
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
    return _stated("running_sum", case, said, dtype)


def _selected(inputs: Mapping[str, Any]) -> dict[int, int]:
    """How many counted occurrences select each row (padding positions left out)."""
    ids = np.asarray(inputs["ids"]).reshape(-1)
    padding = inputs.get("padding_idx")
    vocab = int(np.shape(inputs["weight"])[0])
    pad = None if padding is None else int(padding) % vocab
    rows, counts = np.unique([int(i) for i in ids.tolist() if int(i) != pad], return_counts=True)
    return dict(zip(rows.tolist(), counts.tolist()))


def _overwritten(inputs: Mapping[str, Any]) -> np.ndarray:
    """The table gradient indexed assignment leaves: each row holding its last occurrence's gradient alone."""
    from embconf.adapters.bags import BagCall
    from embconf.mutants.bag_reduce import BagSlip, bag_backward

    last = inputs.get("include_last_offset") is True
    given = (inputs["weight"], inputs["ids"], inputs.get("offsets"), str(inputs["mode"]))
    call = BagCall(*given, inputs.get("per_sample_weights"), inputs.get("padding_idx"), last)
    return bag_backward(BagSlip(repeats_overwritten=True), call, np.asarray(inputs["grad_output"]))[0]


def repeated_rows(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """grad_weight wrong only in rows selected more than once, each holding its last occurrence's gradient alone
    (what indexed assignment leaves), and right in every row selected once."""
    if name != "grad_weight" or got.ndim != 2 or inputs.get("mode") == "max":
        return []
    counts = _selected(inputs)
    wrong = sorted(np.flatnonzero(_differs(case, name, want, got).any(axis=1)).tolist())
    repeated = {row for row, count in counts.items() if count > 1}
    if not wrong or not set(wrong) <= repeated or len(counts) == len(repeated):
        return []
    try:
        assigned = _overwritten(inputs)
    except (IndexError, KeyError, TypeError, ValueError):  # inputs the spec refuses: nothing to compare
        return []
    if assigned.shape != got.shape or _differs(case, name, assigned[wrong], got[wrong]).any():
        return []
    said = (
        f"'grad_weight' differs only in rows a repeated id selects (rows {_listed(wrong)}), each holding only its "
        "last occurrence's gradient, as indexed assignment (grad[ids] = g) leaves it; every row selected once is "
        "right: the repeated occurrences are overwritten, not accumulated"
    )
    return _stated("repeated_rows", case, said)


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
    return _stated("padding_positions", case, said)


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
    return _stated("empty_refused", case, said)


def bag_shapes(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """A bag output of another shape than (B, D), read: the ids' rows unreduced, the last bag's row alone, or every
    row but the last bag's."""
    if name != "output" or case.operation != "embedding_bag_forward" or want.ndim != 2:
        return []
    return (
        unreduced(case, inputs, name, want, got)
        or last_bag_row(case, name, want, got)
        or _last_missing(case, inputs, name, want, got)
    )


def unreduced(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """An output that is, element for element, the rows of the ids themselves: no bag reduced."""
    ids = np.asarray(inputs.get("ids"))
    weight = np.asarray(inputs.get("weight"))
    if name != "output" or ids.dtype.kind not in "iu" or weight.ndim != 2 or got.shape != ids.shape + weight.shape[1:]:
        return []
    if (
        not ids.size
        or ids.min() < 0
        or ids.max() >= weight.shape[0]
        or got.shape == want.shape
        and not _differs(case, name, want, got).any()
    ):
        return []
    if not np.array_equal(got.astype(np.float64), weight[ids].astype(np.float64)):
        return []
    said = (
        f"the output is the rows of the ids themselves, shape {got.shape} (ids {ids.shape} by D): no bag is reduced "
        f"({inputs.get('mode')}), where one row per bag is expected, shape {want.shape}"
    )
    return _stated("unreduced", case, said)


def _last_missing(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """B-1 rows equal to the expected first B-1, the last bag holding ids: the last bag has no row."""
    ids, offsets = np.asarray(inputs.get("ids")), inputs.get("offsets")
    if offsets is None or ids.ndim != 1 or got.shape != (want.shape[0] - 1, want.shape[1]) or not got.shape[0]:
        return []
    last = int(np.asarray(offsets).reshape(-1)[-2 if inputs.get("include_last_offset") is True else -1])
    if last >= ids.size or _differs(case, name, want[:-1], got).any():
        return []
    said = (
        f"the output has {got.shape[0]} rows, equal to the expected rows of bags 0 to {got.shape[0] - 1}: the last "
        f"bag (positions {last} to {ids.size - 1}, which hold ids) has no row"
    )
    return _stated("last_bag_dropped", case, said)


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
    return _stated("last_bag_row", case, said)
