"""Student: checks start_pos + seq_len >= max_seq_len, so the window that ends exactly at the table's end is refused."""

SYMPTOM = "= max_seq_len"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

from _tinytorch import Embedding, Tensor, _compute_sinusoidal_table, solution


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        if x.ndim != 3 or x.shape[2] != self.embed_dim:
            raise ValueError(f"bad x shape {x.shape}")
        start = solution._start_position(start_pos)
        if start + x.shape[1] >= self.max_seq_len:
            raise ValueError("sequence too long")
        return x + self.position_embeddings[start : start + x.shape[1]]


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.pos_encoding_type == "learned":
            self.pos_encoding = PositionalEncoding(self.max_seq_len, self.embed_dim)
