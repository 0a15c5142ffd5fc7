"""Row stories: which table row each output row is, which gradient rows differ, position windows (the layer as
a * token rows + b * position rows is ``layer``'s)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.factors import shortest
from embconf.diagnosis.symptoms.base import ROW_SEARCH_BUDGET, Symptom, symptom
from embconf.model.symptom import (
    IDS_SHIFTED,
    POSITION_GRAD_SEQUENCE,
    POSITIONS_SHIFTED,
    UNTOUCHED_ROWS,
    SymptomKey,
)


def _row_of(table: np.ndarray, row: np.ndarray) -> Optional[int]:
    """The index of the one table row equal to ``row`` (None when none or several are)."""
    if not np.isfinite(row).all():
        return None
    scale = float(np.max(np.abs(row))) if row.size else 0.0
    hits = np.flatnonzero(
        np.all(
            np.isclose(table.astype(np.float64), row.astype(np.float64), rtol=1e-5, atol=1e-5 * max(scale, 1e-3)),
            axis=1,
        )
    )
    return int(hits[0]) if hits.size == 1 else None


def lookup_rows(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """Which table row each output row is, against the ids asked for."""
    weight = inputs.get("weight")
    ids = inputs.get("ids")
    if (
        not isinstance(weight, np.ndarray)
        or not isinstance(ids, np.ndarray)
        or got.shape != ids.shape + (weight.shape[1],)
    ):
        return []
    return row_mapping(case, weight, ids, got)


def row_mapping(case: Case, weight: np.ndarray, ids: np.ndarray, got: np.ndarray) -> list[Symptom]:
    flat_ids = ids.reshape(-1).astype(np.float64)
    rows = got.reshape(-1, weight.shape[1])
    if flat_ids.size > 4096 or flat_ids.size * weight.size > ROW_SEARCH_BUDGET:  # each id searches the whole table
        return []
    stories: list[tuple[float, Any]] = []
    for asked, row in zip(flat_ids, rows):
        taken = _row_of(weight, row)
        if np.all(np.isnan(row)):
            stories.append((asked, "nan"))
        elif np.all(row == 0) and taken is None:
            stories.append((asked, "zeros"))
        else:
            stories.append((asked, taken))
    return _mapping_symptoms(case, weight.shape[0], stories)


def _mapping_symptoms(case: Case, vocab: int, stories: list[tuple[float, Any]]) -> list[Symptom]:
    wrong = [(a, t) for a, t in stories if not (isinstance(t, int) and float(t) == a)]
    if not wrong or any(t is None for _, t in wrong):
        return []
    rules: list[tuple[str, Optional[Callable[[float, Any], bool]], str]] = [
        (
            "ids_rounded",
            lambda a, t: isinstance(t, int) and np.isfinite(a) and t == int(np.round(a)) and t != int(np.trunc(a)),
            "a float id is rounded to the nearest integer",
        ),
        (
            "ids_truncated",
            lambda a, t: (
                isinstance(t, int)
                and np.isfinite(a)
                and t == int(np.trunc(a))
                and t != int(np.round(a))
                and 0 <= a < vocab
            ),
            "a float id is truncated toward zero",
        ),
        (
            "ids_rounded_or_truncated",
            lambda a, t: (
                isinstance(t, int) and np.isfinite(a) and t == int(np.trunc(a)) == int(np.round(a)) and 0 <= a < vocab
            ),
            "a float id is cast to an integer (rounded or truncated: this id cannot tell which)",
        ),
        (
            "ids_wrapped_or_clamped",  # V = 1, or ids only one past either end: both rules give these rows
            lambda a, t: _wrapped(a, t, vocab) and _clamped(a, t, vocab),
            "an id outside [0, V) reads a row of the table (wrapped around or clamped: these ids cannot tell which)",
        ),
        (
            "ids_wrapped",
            lambda a, t: _wrapped(a, t, vocab),
            "an id outside [0, V) wraps around (indexes from the end)",
        ),
        (
            "ids_clamped",
            lambda a, t: _clamped(a, t, vocab),
            "an id outside [0, V) is clamped to the nearest row",
        ),
        (
            "ids_cast",
            lambda a, t: isinstance(t, int) and not np.isfinite(a) and t == 0,
            "a NaN or infinite float id is cast to an integer and reads row 0",
        ),
        ("shifted", None, ""),
        (
            "ids_zeroed_row",
            lambda a, t: t == "zeros" and np.isfinite(a) and a == int(a) and 0 <= a < vocab,
            "a valid id gets a row of zeros instead of its own row (a row zeroed or kept for padding)",
        ),
        (
            "ids_zero_row",
            lambda a, t: t == "zeros" and not (np.isfinite(a) and a == int(a) and 0 <= a < vocab),
            "an id that indexes no row gives a row of zeros",
        ),
        ("ids_nan_row", lambda a, t: t == "nan", "an id that indexes no row gives a row of NaN"),
    ]
    shifts = {t - a for a, t in wrong if isinstance(t, int) and np.isfinite(a)}
    for family, rule, text in rules:  # the symptom's family, when every id follows the rule
        if rule is None:  # "shifted": one offset for every id, measured rather than tested
            if (
                len({a for a, _ in wrong}) > 1  # one offset said of every id needs two ids that show it
                and len(shifts) == 1
                and all(isinstance(t, int) for _, t in wrong)
                and (shift := next(iter(shifts))) != 0
            ):
                text = f"every id i reads row i {'+' if shift > 0 else '-'} {abs(int(shift))} (rows shifted by {int(shift)})"
                return [symptom(SymptomKey.of(IDS_SHIFTED, int(shift)), _mapping_text(wrong, text), title=text)]
            continue
        if all(rule(a, t) for a, t in wrong):
            both = {
                "ids_rounded": "a float id is rounded to the nearest integer",
                "ids_truncated": "a float id is truncated toward zero",
            }
            if family == "ids_wrapped_or_clamped":
                both = {
                    "ids_wrapped": "an id outside [0, V) wraps around (indexes from the end)",
                    "ids_clamped": "an id outside [0, V) is clamped to the nearest row",
                }
            return [
                symptom(
                    family,
                    _mapping_text(wrong, text),
                    "validate ids before indexing (EMB-IDX)" if case.expected_error else "",
                    alternatives=both if family in ("ids_rounded_or_truncated", "ids_wrapped_or_clamped") else None,
                    title=text,
                )
            ]
    return []


def _mapping_text(wrong: list[tuple[float, Any]], text: str) -> str:
    pairs = dict.fromkeys(
        f"id {shortest(a)} -> {'row ' + str(t) if isinstance(t, int) else 'a row of ' + t}" for a, t in wrong
    )
    shown = ", ".join(list(pairs)[:4])
    return f"{shown}: {text}"


def table_gradient_rows(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray
) -> list[Symptom]:
    """Which rows of a dense table gradient differ: repeated ids only, never-used rows, or every used row."""
    ids_name = "tokens" if name == "grad_token_weight" else "ids"
    ids = inputs.get(ids_name)
    if not isinstance(ids, np.ndarray) or want.ndim != 2 or name not in ("grad_weight", "grad_token_weight"):
        return []
    counts = np.bincount(ids.reshape(-1).astype(np.int64), minlength=want.shape[0])[: want.shape[0]]
    differs = ~np.all(np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=1e-6), axis=1)
    bad = set(np.flatnonzero(differs).tolist())
    unused = set(np.flatnonzero(counts == 0).tolist())
    repeated = set(np.flatnonzero(counts > 1).tolist())
    if bad and bad <= unused:
        return [
            symptom(
                SymptomKey.of(UNTOUCHED_ROWS, case.operation, name),
                f"only rows no id uses differ: rows {sorted(bad)[:6]} should be exactly zero and are not",
                "start the gradient from zeros on every call (EMB-BWD-2)",
                rows=sorted(bad)[:16],
            )
        ]
    if bad and bad <= repeated and set(np.flatnonzero(counts == 1).tolist()):
        return _repeated_rows(case, name, inputs, ids, got, sorted(bad))
    return []


def _repeated_rows(
    case: Case, name: str, inputs: Mapping[str, Any], ids: np.ndarray, got: np.ndarray, bad: list[int]
) -> list[Symptom]:
    """Only rows of repeated ids differ: what each of them holds instead of the sum, said only when measured."""
    rows = got.astype(np.float64)[bad]
    if not np.any(rows):
        return [
            symptom(
                "no_gradient_rows:token_table",
                f"rows {bad[:6]} get no gradient although their ids occur (only rows of repeated ids differ): "
                "a row left out of the backward",
                "add every occurrence's gradient to its row, whatever the id (EMB-BWD-2)",
                title="rows of ids that occur get no gradient: a row left out of the backward",
                rows=bad[:16],
            )
        ]
    grad = inputs.get("grad_output")
    flat_ids = ids.reshape(-1).astype(np.int64)
    if isinstance(grad, np.ndarray) and grad.shape[:-1] == ids.shape and grad.shape[-1] == got.shape[1]:
        occurrences = grad.reshape(-1, got.shape[1]).astype(np.float64)
        one = all(
            any(np.allclose(got[row], occurrences[i], rtol=1e-5, atol=1e-6) for i in np.flatnonzero(flat_ids == row))
            for row in bad
        )
        if one:
            return [
                symptom(
                    "repeated_rows:token_table",  # one mistake, whether the lookup's or the layer's backward shows it
                    f"only the rows of repeated ids differ (rows {bad[:6]}): each holds one occurrence's gradient, "
                    "not the sum of all: repeated ids do not accumulate",
                    "accumulate every occurrence: np.add.at (EMB-BWD-1)",
                    title="a repeated id's row holds one occurrence's gradient, not the sum: repeated ids do not accumulate",
                    rows=bad[:16],
                )
            ]
    return [
        symptom(
            "repeated_rows_differ:token_table",
            f"only the rows of repeated ids differ (rows {bad[:6]}), and not by one occurrence's gradient",
            title="only the rows of repeated ids differ in the table's gradient, and not by one occurrence's gradient",
            rows=bad[:16],
        )
    ]


def position_rows(case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> list[Symptom]:
    """Which table row each position received (actual - x), against start_pos + t."""
    table, x, start = inputs.get("table"), inputs.get("x"), inputs.get("start_pos", 0)
    if (
        not isinstance(table, np.ndarray)
        or not isinstance(x, np.ndarray)
        or got.shape != x.shape
        or x.ndim != 3
        or x.shape[1] == 0
    ):
        return []
    added = (got.astype(np.float64) - x.astype(np.float64))[0]
    taken = [_row_of(table, row) for row in added]
    found = [t for t in taken if t is not None]
    if len(found) != len(taken) or not isinstance(start, (int, np.integer)):
        return []
    taken_rows: list[int] = found
    wanted = list(range(int(start), int(start) + x.shape[1]))
    if len(set(taken_rows)) == 1 and len(wanted) > 1:
        return [
            symptom(
                "positions_one_row",
                f"every position received the same table row {taken_rows[0]} (one row for every token) instead of rows {wanted[0]}..{wanted[-1]}",
                "add table[start_pos + t] at position t: table[start_pos : start_pos + T]",
                row=taken_rows[0],
            )
        ]
    if len(wanted) > 1 and taken_rows == wanted[::-1]:
        return [
            symptom(
                "positions_reversed",
                f"the positions are in reverse order: position t received table row {wanted[-1]} - t (rows {wanted[-1]}..{wanted[0]})",
                "add table[start_pos + t] at position t: table[start_pos : start_pos + T], not reversed",
            )
        ]
    shifts = {t - w for t, w in zip(taken_rows, wanted)}
    if len(shifts) == 1:
        shift = shifts.pop()
        return [
            symptom(
                SymptomKey.of(POSITIONS_SHIFTED, shift),
                f"position t received table row start_pos + t {'+' if shift > 0 else '-'} {abs(shift)} (the slice is shifted by {shift})",
            )
        ]
    return []


def position_gradient(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray
) -> list[Symptom]:
    """The slice rows of grad_table against single sequences of grad_output."""
    grad, start = inputs.get("grad_output"), inputs.get("start_pos", 0)
    if (
        name != "grad_table"
        or not isinstance(grad, np.ndarray)
        or grad.ndim != 3
        or not isinstance(start, (int, np.integer))
    ):
        return []
    rows = got[int(start) : int(start) + grad.shape[1]].astype(np.float64)
    total = grad.astype(np.float64).sum(axis=(0, 1))
    nonzero = np.flatnonzero(np.any(got != 0, axis=1))
    if (
        grad.shape[1] > 1
        and nonzero.size == 1
        and np.allclose(got[nonzero[0]], total, rtol=1e-5, atol=1e-5 * max(float(np.abs(total).max()), 1e-3))
    ):
        return [
            symptom(
                "positions_one_row",
                f"the whole gradient (summed over batch and positions) lands in row {nonzero[0]}: one table row is used for every position",
                "add table[start_pos + t] at position t: table[start_pos : start_pos + T]",
                row=int(nonzero[0]),
            )
        ]
    for b, label in ((0, "first"), (grad.shape[0] - 1, "last")) if grad.shape[0] > 1 else ():
        if np.allclose(rows, grad[b].astype(np.float64), rtol=1e-6, atol=1e-7):
            return [
                symptom(
                    SymptomKey.of(POSITION_GRAD_SEQUENCE, label),
                    f"grad_table's slice rows are the {label} sequence's gradient (grad_output[{b}]) alone, not the sum over the batch of {grad.shape[0]}",
                    "sum grad_output over the batch axis (EMB-POS-4)",
                )
            ]
    return []


def _wrapped(a: float, t: Any, vocab: int) -> bool:
    """Row ``t`` is integral id ``a`` taken modulo V."""
    return isinstance(t, int) and bool(np.isfinite(a)) and a == int(a) and t == int(a) % vocab


def _clamped(a: float, t: Any, vocab: int) -> bool:
    """Row ``t`` is id ``a`` clamped into [0, V) (an infinite id to the end it points at; NaN has no nearest row)."""
    if not isinstance(t, int) or np.isnan(a):
        return False
    return t == int(np.clip(np.nan_to_num(a, posinf=vocab - 1, neginf=0), 0, vocab - 1))
