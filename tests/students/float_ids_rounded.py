"""Student: rounds float ids to the nearest integer (np.round) instead of rejecting non-integer ids."""

SYMPTOM = "rounded"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import numpy as np
from _tinytorch import EmbeddingLayer, PositionalEncoding, Tensor, _compute_sinusoidal_table, solution


class Embedding(solution.Embedding):
    def forward(self, indices):
        ids = np.round(np.asarray(indices.data)).astype(np.int64)
        return solution.EmbeddingFunction.apply(self.weight, indices=solution._token_ids(ids, self.vocab_size))
