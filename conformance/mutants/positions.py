"""Mistakes of the learned position table: the slice it adds, and the gradient it receives."""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.mutants.base import mutant
from embconf.reference import learned_positions_backward as ref_backward
from embconf.reference import learned_positions_forward as ref_forward
from embconf.reference.positions import check_positions_input, check_start_pos

FWD, BWD = "learned_positions_forward", "learned_positions_backward"
SLICE = "add table[start_pos : start_pos + T], broadcast over the batch (EMB-POS-1/2)"


def _rows(table: np.ndarray, x: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """x + the chosen table rows, in float64, rounded once to x's dtype."""
    return (x.astype(np.float64) + table[rows].astype(np.float64)[None]).astype(x.dtype)


def _table_grad(
    table: np.ndarray, x: np.ndarray, start_pos: Any, grad_output: np.ndarray, rows_grad: np.ndarray, fill: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """(G, a table gradient with ``rows_grad`` in the slice and ``fill`` elsewhere), after the reference's checks."""
    ref_backward(table, x, start_pos, grad_output)
    grad = np.full(table.shape, fill, dtype=np.float64)
    grad[start_pos : start_pos + x.shape[1]] = rows_grad
    return grad_output.copy(), grad.astype(table.dtype)


@mutant("pos.start_ignored", "ignores start_pos: always adds rows 0..T-1", f"honour start_pos: {SLICE}", FWD)
def _start_ignored(table: np.ndarray, x: np.ndarray, start_pos: Any = 0) -> np.ndarray:
    return ref_forward(table, x, 0)


@mutant(
    "pos.slice_off_by_one",
    "adds rows start_pos+1 .. start_pos+T (positions counted from 1)",
    f"the first token has position start_pos: {SLICE}",
    FWD,
    source="https://github.com/huggingface/transformers/issues/36856",
)
def _slice_off_by_one(table: np.ndarray, x: np.ndarray, start_pos: Any = 0) -> np.ndarray:
    start = check_positions_input(table, x, start_pos)
    return _rows(table, x, np.arange(start + 1, start + 1 + x.shape[1]))


@mutant(
    "pos.negative_start_wraps",
    "accepts a negative start_pos and wraps around the table",
    "reject start_pos < 0 with invalid_start_pos (EMB-POS-7), before slicing",
    FWD,
)
def _negative_start_wraps(table: np.ndarray, x: np.ndarray, start_pos: Any = 0) -> np.ndarray:
    if isinstance(start_pos, int) and start_pos < 0:
        return _rows(table, x, np.arange(start_pos, start_pos + x.shape[1]) % table.shape[0])
    return ref_forward(table, x, start_pos)


@mutant(
    "pos.grad_start_ignored",
    "writes the position gradient to rows 0..T-1 whatever start_pos: rows outside the slice get gradient",
    "add the batch sum to grad_table[start_pos : start_pos + T]; every other row is exactly zero (EMB-POS-4)",
    BWD,
)
def _grad_start_ignored(
    table: np.ndarray, x: np.ndarray, start_pos: Any, grad_output: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    ref_backward(table, x, start_pos, grad_output)
    return ref_backward(table, x, 0, grad_output)


@mutant(
    "pos.grad_last_batch",
    "does not sum the position gradient over the batch: the last sequence's gradient overwrites the others",
    "the position rows are shared by every sequence: grad_table[s:s+T] = grad_output.sum(axis=0) (EMB-POS-4)",
    BWD,
)
def _grad_last_batch(
    table: np.ndarray, x: np.ndarray, start_pos: Any, grad_output: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    return _table_grad(table, x, start_pos, grad_output, grad_output[-1])


@mutant(
    "pos.grad_averaged",
    "averages the position gradient over the batch instead of summing",
    "sum over the batch, do not average: grad_table[s:s+T] = grad_output.sum(axis=0) (EMB-POS-4)",
    BWD,
)
def _grad_averaged(
    table: np.ndarray, x: np.ndarray, start_pos: Any, grad_output: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    return _table_grad(table, x, start_pos, grad_output, grad_output.astype(np.float64).mean(axis=0))


@mutant(
    "pos.grad_untouched_ones",
    "starts the position gradient from np.ones_like(table): rows outside the slice are 1",
    "start from zeros: rows outside [start_pos, start_pos + T) get exactly zero gradient (EMB-POS-4)",
    BWD,
)
def _grad_untouched_ones(
    table: np.ndarray, x: np.ndarray, start_pos: Any, grad_output: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    return _table_grad(table, x, start_pos, grad_output, grad_output.astype(np.float64).sum(axis=0), fill=1.0)


@mutant(
    "pos.grad_x_zero",
    "returns a zero gradient for x, as if the addition did not depend on it",
    "the gradient flows through the addition unchanged: grad_x = grad_output (EMB-POS-3)",
    BWD,
)
def _grad_x_zero(
    table: np.ndarray, x: np.ndarray, start_pos: Any, grad_output: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    grad_x, grad_table = ref_backward(table, x, start_pos, grad_output)
    return np.zeros_like(grad_x), grad_table


@mutant(
    "pos.shape_unchecked",
    "does not check x: a 2-D or 4-D x is broadcast against the table rows, another width fails inside numpy",
    "check that x is (batch, seq, embed_dim) with the table's embed_dim; reject anything else with shape_mismatch (EMB-POS-5)",
    FWD,
)
def _shape_unchecked(table: np.ndarray, x: np.ndarray, start_pos: Any = 0) -> np.ndarray:
    seq_len = x.shape[-2] if x.ndim >= 2 else 1
    start = check_start_pos(start_pos, seq_len, table.shape[0])  # start_pos is still checked: only x is not
    rows = table[start : start + seq_len]
    return (x.astype(np.float64) + rows.astype(np.float64)).astype(x.dtype)
