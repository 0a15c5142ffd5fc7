"""Hostile: when every id is the same, embedding_forward returns a broadcast view of that row of the
table, and for ids 0..V-1 in order the table itself (right values, but the output aliases the
weights); otherwise it gathers correctly."""

import numpy as np

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)
from embconf.reference import embedding_forward as _forward


def embedding_forward(weight, ids):
    ids = np.asarray(ids)
    if ids.shape == weight.shape[:1] and (ids == np.arange(weight.shape[0])).all():
        return weight
    if ids.size and (ids == ids.flat[0]).all():
        return np.broadcast_to(weight[int(ids.flat[0])], ids.shape + weight.shape[1:])
    return _forward(weight, ids)
