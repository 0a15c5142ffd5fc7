"""Hostile: returns things that are not arrays. embedding_forward a string, sinusoidal_table None,
embedding_backward a nested list (of the right numbers), learned_positions_forward a generator,
learned_positions_backward three values instead of two; embedding_backward_sparse is correct."""

from embconf.reference import embedding_backward as _backward
from embconf.reference import embedding_backward_sparse  # noqa: F401  (correct)

EMBCONF_FEATURES = ["row_sparse_grad"]


def embedding_forward(weight, ids):
    return "the output"


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    return None


def embedding_backward(weight, ids, grad_output):
    return _backward(weight, ids, grad_output).tolist()


def learned_positions_forward(table, x, start_pos=0):
    return (row for row in x)


def learned_positions_backward(table, x, start_pos, grad_output):
    return grad_output, table, x
