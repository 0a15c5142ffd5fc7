"""A wrong implementation for CLI tests: clamps out-of-range ids instead of rejecting them (EMB-IDX-1/2)."""

import numpy as np


def embedding_forward(weight, ids):
    return weight[np.clip(np.asarray(ids, dtype=np.int64), 0, weight.shape[0] - 1)]
