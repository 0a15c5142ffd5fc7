"""Student: adds the row of start_pos to every token instead of one row per position."""

SYMPTOM = "one row"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

from _tinytorch import solution

Embedding, _compute_sinusoidal_table, EmbeddingLayer = (
    solution.Embedding,
    solution._compute_sinusoidal_table,
    solution.EmbeddingLayer,
)
Tensor = solution.Tensor


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        if x.ndim != 3 or x.shape[2] != self.embed_dim:
            raise ValueError(f"bad x shape {x.shape}")
        start = solution._start_position(start_pos)
        solution._check_fits(start, x.shape[1], self.max_seq_len)
        return x + self.position_embeddings[start : start + 1]  # the position vector, broadcast
