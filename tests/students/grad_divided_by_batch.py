"""Student: divides the table gradient by the batch size (ids.shape[0]), as if the loss were a mean over it."""

SYMPTOM = "1/B"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

from _tinytorch import EmbeddingLayer, PositionalEncoding, Tensor, _compute_sinusoidal_table, solution


class EmbeddingFunction(solution.EmbeddingFunction):
    def backward(self, grad_output):
        (grad,) = super().backward(grad_output)
        batch = self.ids.shape[0] if self.ids.ndim > 1 else 1
        return (grad / batch,)


class Embedding(solution.Embedding):
    def forward(self, indices):
        return EmbeddingFunction.apply(self.weight, indices=solution._token_ids(indices, self.vocab_size))
