"""Student: rebuilds the position slice as a new Tensor (Tensor(table.data[...])), which cuts it out of the graph."""

SYMPTOM = "no gradient"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

from _tinytorch import Embedding, Tensor, _compute_sinusoidal_table, checked_start, solution


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        start = checked_start(self, x, start_pos)
        return x + Tensor(self.position_embeddings.data[start : start + x.shape[1]])
