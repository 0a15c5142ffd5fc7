"""Student: adds the row of start_pos to every token instead of one row per position."""

SYMPTOM = "one row"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

from _tinytorch import Embedding, EmbeddingLayer, Tensor, _compute_sinusoidal_table, checked_start, solution


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        start = checked_start(self, x, start_pos)
        return x + self.position_embeddings[start : start + 1]  # the position vector, broadcast
