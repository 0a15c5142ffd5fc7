"""Gradients kept the way a PyTorch training loop keeps them: ``.grad`` lives on the parameter and accumulates, and
the sparse gradient is ``nn.Embedding(sparse=True)``'s uncoalesced one.

Inspired by: the classic missing ``optimizer.zero_grad()`` (PyTorch accumulates into ``param.grad`` on every
``backward()``; the PyTorch FAQ and countless forum threads), the same omission of ``dW[...] = 0`` in copies of
"Deep Learning from Scratch 2"'s Embedding layer, and ``torch.nn.Embedding(sparse=True)``, whose gradient holds
one (index, row) entry per occurrence until ``coalesce()`` is called (spec appendix A).
"""

import numpy as np
from _spec import check_grad_shape, check_ids

EMBCONF_FEATURES = ["row_sparse_grad"]
_GRAD = {}  # one .grad per table shape, as a parameter would hold it

MISTAKES = [
    {
        "phrase": "earlier",
        "mutants": [],
        "claims": ["symptom:stale_buffer:*", "symptom:untouched_rows:embedding_backward:grad_weight"],
    },  # .grad accumulates across backward calls, never zeroed
    {
        "phrase": "coalesce",
        "mutants": ["bwd.sparse_uncoalesced"],
        "claims": ["symptom:shape:embedding_backward_sparse:*"],
    },  # one sparse entry per occurrence, unsorted, repeated
]


def embedding_forward(weight, ids):
    return np.take(weight, check_ids(ids, weight.shape[0]), axis=0)


def embedding_backward(weight, ids, grad_output):
    rows = check_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, rows.shape + (weight.shape[1],))
    grad = _GRAD.setdefault((weight.shape, weight.dtype.str), np.zeros_like(weight))
    np.add.at(grad, rows.reshape(-1), grad_output.reshape(-1, weight.shape[1]))  # backward() adds into .grad
    return grad.copy()


def embedding_backward_sparse(weight, ids, grad_output):
    rows = check_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, rows.shape + (weight.shape[1],))
    return rows.reshape(-1).astype(np.int64), grad_output.reshape(-1, weight.shape[1]).astype(weight.dtype)
