"""Student: keeps one gradient buffer per table shape and never zeroes it between backward calls."""

SYMPTOM = "earlier call"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import numpy as np
from _tinytorch import EmbeddingLayer, PositionalEncoding, Tensor, _compute_sinusoidal_table, solution

_BUFFERS = {}


class EmbeddingFunction(solution.EmbeddingFunction):
    def backward(self, grad_output):
        grad = _BUFFERS.setdefault(
            self.weight_shape, np.zeros(self.weight_shape, dtype=np.float32)
        )  # reuse, saves memory
        np.add.at(grad, self.ids, grad_output)
        return (grad.copy(),)


class Embedding(solution.Embedding):
    def forward(self, indices):
        return EmbeddingFunction.apply(self.weight, indices=solution._token_ids(indices, self.vocab_size))
