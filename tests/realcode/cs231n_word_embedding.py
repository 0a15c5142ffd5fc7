"""CS231n's ``word_embedding_forward`` / ``word_embedding_backward`` (assignment 3, rnn_layers.py) as students
commonly write them: ``out = W[x]`` and ``np.add.at(dW, x, dout)``, with no range check anywhere.

Inspired by: the many public CS231n solutions of rnn_layers.py (``out, cache = W[x], (x, W)``; ``dW =
np.zeros_like(W); np.add.at(dW, x, dout)``): the accumulation is right, but an id >= V is NumPy's IndexError and a
negative id reads (and trains) a row counted from the end, in the forward and the backward alike.
"""

import numpy as np

MISTAKES = [
    {
        "phrase": ["negative", "wraps"],
        "mutants": ["fwd.negative_wraps", "bwd.negative_wraps"],
        "claims": ["symptom:ids_wrapped", "symptom:ids_wrapped_or_clamped"],
    },
    {"phrase": ["IndexError"], "mutants": [], "claims": ["symptom:untyped:IndexError:index_out_of_range"]},
]
FACTS = {"forward_ids": "none", "backward_ids": "none"}


def embedding_forward(weight, ids):
    return weight[ids]


def embedding_backward(weight, ids, grad_output):
    dW = np.zeros_like(weight)
    np.add.at(dW, ids, grad_output)
    return dW
