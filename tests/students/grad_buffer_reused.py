"""Student: keeps one gradient buffer per table shape and never zeroes it between backward calls."""

SYMPTOM = "earlier call"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import numpy as np
from _tinytorch import Function, solution

PositionalEncoding, _compute_sinusoidal_table, EmbeddingLayer = (
    solution.PositionalEncoding,
    solution._compute_sinusoidal_table,
    solution.EmbeddingLayer,
)
Tensor = solution.Tensor
_BUFFERS = {}


class EmbeddingFunction(Function):
    def forward(self, weight, indices):
        self.shape = weight.shape
        self.ids = solution._token_ids(indices, weight.shape[0])
        return weight[self.ids]

    def backward(self, grad_output):
        grad = _BUFFERS.setdefault(self.shape, np.zeros(self.shape, dtype=np.float32))  # reuse, saves memory
        np.add.at(grad, self.ids, grad_output)
        return (grad.copy(),)


class Embedding(solution.Embedding):
    def forward(self, indices):
        return EmbeddingFunction.apply(self.weight, indices=solution._token_ids(indices, self.vocab_size))
