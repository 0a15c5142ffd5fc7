"""Student: the position gradient takes only the first sequence of the batch (grad_output[0])."""

SYMPTOM = "first sequence"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import numpy as np
from _tinytorch import Function, Tensor, solution

Embedding, _compute_sinusoidal_table = solution.Embedding, solution._compute_sinusoidal_table


class AddPositions(Function):
    def forward(self, x, table, start=0):
        self.table_shape, self.start = table.shape, start
        return x + table[start : start + x.shape[1]]

    def backward(self, grad_output):
        grad_table = np.zeros(self.table_shape, dtype=np.float32)
        grad_table[self.start : self.start + grad_output.shape[1]] = grad_output[0]
        return grad_output, grad_table


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        if x.ndim != 3 or x.shape[2] != self.embed_dim:
            raise ValueError(f"bad x shape {x.shape}")
        start = solution._start_position(start_pos)
        solution._check_fits(start, x.shape[1], self.max_seq_len)
        return AddPositions.apply(x, self.position_embeddings, start=start)
