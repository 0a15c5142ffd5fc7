"""Wrong variant: the embedding backward overwrites the rows of repeated ids instead of accumulating."""

import numpy as np
from _example import student_embeddings

student = student_embeddings()


def overwriting_backward(self, grad_output: np.ndarray) -> tuple[np.ndarray]:
    grad_weight = np.zeros(self.weight_shape, dtype=np.float32)
    grad_weight[self.ids] = grad_output  # BUG: a repeated id keeps only its last upstream row
    return (grad_weight,)


student.EmbeddingFunction.backward = overwriting_backward

from tinytorch.core.embeddings import *  # noqa: E402,F401,F403
from tinytorch.core.embeddings import Tensor, _compute_sinusoidal_table  # noqa: E402,F401
