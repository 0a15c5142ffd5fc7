"""Correct but slow (for embconf bench's tests): the backward as a Python loop over the ids, one row
added at a time. The forward and the validation are numpy_functions'."""

import numpy as np
from numpy_functions import SpecError, _rows, embedding_forward  # noqa: F401


def embedding_backward(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    rows = _rows(ids, weight.shape[0]).reshape(-1)
    if grad_output.shape != np.shape(ids) + (weight.shape[1],):
        raise SpecError("shape_mismatch", f"grad_output shape {grad_output.shape}")
    upstream = grad_output.reshape(rows.size, weight.shape[1])
    total = np.zeros(weight.shape)
    for position, row in enumerate(rows.tolist()):
        for column in range(total.shape[1]):
            total[row, column] += float(upstream[position, column])
    return total.astype(weight.dtype)
