"""A "Deep Learning from Scratch 2" Embedding layer whose backward is the MatMul layer's, pasted.

Inspired by: the book's ``common/layers.py`` Embedding (``out = W[idx]``, ``self.grads[0][...] = dW``) as copied
into public repositories, one of which (an RNN exercise) left the MatMul backward in the Embedding class:
``dW = np.matmul(self.x.T, dout); self.grads[0][...] = dW``. For ids of shape (N,) the product is one row,
sum_i id_i * dout_i, which the ``[...] =`` assignment broadcasts into every row of the gradient; for a batch of
ids (B, T) the matmul's shapes do not fit and NumPy raises ValueError. The forward reads ``W[idx]`` unchecked as
the book does: a negative id wraps to a row from the end, an id >= vocab_size raises IndexError.
"""

import numpy as np

MISTAKES = [
    {
        "phrase": ["matmul", "every row"],
        "mutants": [],
        "claims": ["symptom:untyped:ValueError:None"],
    },  # dW = ids.T @ dout broadcast into every row (1-D ids); ValueError in the matmul for a batch of ids
    {
        "phrase": "negative",
        "mutants": ["fwd.negative_wraps", "bwd.negative_wraps"],
        "claims": ["symptom:ids_wrapped", "symptom:ids_wrapped_or_clamped"],
    },  # W[-1] is the last row (the backward runs the forward)
    {
        "phrase": "IndexError",
        "mutants": [],
        "claims": ["symptom:untyped:IndexError:index_out_of_range"],
    },  # an id >= V is NumPy's IndexError, not index_out_of_range
]
FACTS = {"forward_ids": "none", "backward_ids": "none"}


class Embedding:
    def __init__(self, W):
        self.params = [W]
        self.grads = [np.zeros_like(W)]
        self.x = None

    def forward(self, x):
        (W,) = self.params
        self.x = x
        return W[x]

    def backward(self, dout):  # MatMul.backward, pasted
        dW = np.matmul(self.x.T, dout)
        self.grads[0][...] = dW
        return None


def embedding_forward(weight, ids):
    return Embedding(weight).forward(np.asarray(ids))


def embedding_backward(weight, ids, grad_output):
    layer = Embedding(weight)
    layer.forward(np.asarray(ids))
    layer.backward(grad_output)
    return layer.grads[0]
