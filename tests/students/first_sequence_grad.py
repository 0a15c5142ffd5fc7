"""Student: the position gradient takes only the first sequence of the batch (grad_output[0])."""

SYMPTOM = "first sequence"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import _tinytorch
import numpy as np
from _tinytorch import Embedding, Tensor, _compute_sinusoidal_table


class AddPositions(_tinytorch.AddPositions):
    def backward(self, grad_output):
        grad_table = np.zeros(self.table_shape, dtype=np.float32)
        grad_table[self.start : self.start + grad_output.shape[1]] = grad_output[0]
        return grad_output, grad_table


PositionalEncoding = _tinytorch.positional_encoding(AddPositions)
