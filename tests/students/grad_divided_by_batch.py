"""Student: divides the table gradient by the batch size (ids.shape[0]), as if the loss were a mean over it."""

SYMPTOM = "1/B"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import numpy as np
from _tinytorch import Function, solution

PositionalEncoding, _compute_sinusoidal_table, EmbeddingLayer = (
    solution.PositionalEncoding,
    solution._compute_sinusoidal_table,
    solution.EmbeddingLayer,
)
Tensor = solution.Tensor


class EmbeddingFunction(Function):
    def forward(self, weight, indices):
        self.shape = weight.shape
        self.ids = solution._token_ids(indices, weight.shape[0])
        return weight[self.ids]

    def backward(self, grad_output):
        grad = np.zeros(self.shape, dtype=np.float32)
        np.add.at(grad, self.ids, grad_output)
        batch = self.ids.shape[0] if self.ids.ndim > 1 else 1
        return (grad / batch,)


class Embedding(solution.Embedding):
    def forward(self, indices):
        return EmbeddingFunction.apply(self.weight, indices=solution._token_ids(indices, self.vocab_size))
