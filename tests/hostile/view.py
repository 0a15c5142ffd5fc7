"""Hostile: when every id is the same, embedding_forward returns a broadcast view of that row of the
table (right values, but the caller's output aliases the weights); otherwise it gathers correctly."""
import numpy as np

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)
from embconf.reference import embedding_forward as _forward


def embedding_forward(weight, ids):
    ids = np.asarray(ids)
    if ids.size and (ids == ids.flat[0]).all():
        return np.broadcast_to(weight[int(ids.flat[0])], ids.shape + weight.shape[1:])
    return _forward(weight, ids)
