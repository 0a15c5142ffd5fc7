"""Student: adds the position rows in reverse order (table[start + T - 1 - t] at position t)."""

SYMPTOM = "reverse"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

from _tinytorch import Embedding, Tensor, _compute_sinusoidal_table, checked_start, solution


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        start = checked_start(self, x, start_pos)
        rows = self.position_embeddings.data[start : start + x.shape[1]][::-1]
        return x + Tensor(rows.copy(), requires_grad=True)
