"""Student: never validates start_pos, so a fractional start_pos reaches the slice and raises TypeError there."""

SYMPTOM = "TypeError"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

from _tinytorch import Embedding, Tensor, _compute_sinusoidal_table, solution


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        if x.ndim != 3 or x.shape[2] != self.embed_dim:
            raise ValueError(f"bad x shape {x.shape}")
        if start_pos + x.shape[1] > self.max_seq_len:
            raise ValueError("sequence too long")
        return x + self.position_embeddings[start_pos : start_pos + x.shape[1]]
