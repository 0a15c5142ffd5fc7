"""Student: the position layer's backward passes 2 * grad_output to x (it adds the gradient of both operands)."""

SYMPTOM = "2 times"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import _tinytorch
import numpy as np
from _tinytorch import Embedding, Tensor, _compute_sinusoidal_table


class AddPositions(_tinytorch.AddPositions):
    def backward(self, grad_output):
        grad_table = np.zeros(self.table_shape, dtype=np.float32)
        grad_table[self.start : self.start + grad_output.shape[1]] = grad_output.sum(axis=0)
        return grad_output + grad_output, grad_table


PositionalEncoding = _tinytorch.positional_encoding(AddPositions)
