"""An embedding kernel in the style of C/C++ inference code: rows read from one flat buffer by offset, unchecked.

Inspired by: the flat-buffer row reads of C embedding kernels (``data + id * row_stride``, as in llama.cpp/ggml's
get_rows) and the reports of garbage embeddings or crashes for out-of-vocabulary token ids that led such
kernels to add bounds asserts; the buffer after the table holds other data (here: integer token bits), so an id
past the end returns denormal floats such as 1.4e-45 instead of an error. The backward is the common
``grad[ids] += g``, which NumPy applies once per distinct id.
"""

import numpy as np
from _spec import SpecError, check_ids

MISTAKES = [
    {
        "phrase": ["no row of the table", "outside the table"],
        "mutants": [],
        "claims": ["symptom:ids_read_outside_table"],
    },  # an id outside [0, V) reads whatever lies past the table (no range check)
    {
        "phrase": "accumulat",
        "mutants": ["bwd.overwrite"],
        "claims": ["symptom:repeated_rows:token_table"],
    },  # grad[ids] += g: a repeated id adds one gradient
]
FACTS = {"forward_ids": "none"}

SCRATCH = 4096  # elements of other data that follow the table in the buffer


def _integral(ids):
    ids = np.asarray(ids)
    if ids.dtype.kind == "f":
        if not np.isfinite(ids).all() or (ids != np.trunc(ids)).any():
            raise SpecError("invalid_index", "ids must be finite integers")
    return ids.astype(np.int64)


def embedding_forward(weight, ids):
    index = _integral(ids)
    dim = weight.shape[1]
    bits = np.arange(1, SCRATCH + 1, dtype=f"int{weight.dtype.itemsize * 8}")  # token ids stored after the table
    buffer = np.concatenate([weight.ravel(), bits.view(weight.dtype)])
    offsets = index[..., None] * dim + np.arange(dim)
    return buffer.take(offsets, mode="wrap")  # data + id * dim, no bounds check


def embedding_backward(weight, ids, grad_output):
    index = check_ids(ids, weight.shape[0])
    if grad_output.shape != index.shape + weight.shape[1:]:
        raise SpecError("shape_mismatch", f"grad_output has shape {grad_output.shape}")
    grad = np.zeros(weight.shape, dtype=np.float64)
    grad[index.reshape(-1)] += grad_output.reshape(-1, weight.shape[1])
    return grad.astype(weight.dtype)
