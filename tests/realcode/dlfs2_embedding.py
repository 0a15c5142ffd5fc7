"""A NumPy Embedding layer in the style of "Deep Learning from Scratch 2" (chapter 4), ported to the spec's functions.

Inspired by: the book's Embedding layer (oreilly-japan/deep-learning-from-scratch-2, common/layers.py) and the
many reader copies that keep its first, "bad example" backward ``dW[self.idx] = dout`` (e.g. the copies found
with the string "dW[self.idx] = dout"); the forward is ``W[idx]`` and nothing checks the ids or the upstream
gradient's shape.
"""

import numpy as np

MISTAKES = [
    {
        "phrase": "accumulat",
        "mutants": ["bwd.overwrite"],
        "claims": ["symptom:repeated_rows:token_table"],
    },  # dW[idx] = dout: a repeated id keeps one gradient
    {
        "phrase": "negative",
        "mutants": ["fwd.negative_wraps", "bwd.negative_wraps"],
        "claims": ["symptom:ids_wrapped", "symptom:ids_wrapped_or_clamped"],
    },  # W[-1] is the last row
    {
        "phrase": "IndexError",
        "mutants": [],
        "claims": ["symptom:untyped:IndexError:index_out_of_range"],
    },  # an id >= V is NumPy's IndexError, not index_out_of_range
    {
        "phrase": "shape",
        "mutants": [],
        "claims": ["symptom:untyped:ValueError:shape_mismatch"],
    },  # grad_output's shape is never checked: a wrong one is NumPy's ValueError
]
FACTS = {"forward_ids": "none", "backward_ids": "none"}


def embedding_forward(weight, ids):
    return weight[ids]


def embedding_backward(weight, ids, grad_output):
    dW = np.zeros_like(weight)
    dW[ids] = grad_output
    return dW
