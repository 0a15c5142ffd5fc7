"""Student: adds the position rows in reverse order (table[start + T - 1 - t] at position t)."""

SYMPTOM = "reverse"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

from _tinytorch import solution

Embedding, _compute_sinusoidal_table = solution.Embedding, solution._compute_sinusoidal_table
Tensor = solution.Tensor


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        if x.ndim != 3 or x.shape[2] != self.embed_dim:
            raise ValueError(f"bad x shape {x.shape}")
        start = solution._start_position(start_pos)
        solution._check_fits(start, x.shape[1], self.max_seq_len)
        rows = self.position_embeddings.data[start : start + x.shape[1]][::-1]
        return x + Tensor(rows.copy(), requires_grad=True)
