"""Student: scales the token embeddings by int(math.sqrt(D)), a whole number, instead of sqrt(D)."""

SYMPTOM = "int(sqrt(D))"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import math

from _tinytorch import Embedding, PositionalEncoding, Tensor, _compute_sinusoidal_table, solution


class EmbeddingLayer(solution.EmbeddingLayer):
    def forward(self, tokens, start_pos=0):
        start = solution._start_position(start_pos)
        seq_len = tokens.shape[-1]
        solution._check_fits(start, seq_len, self.max_seq_len)
        unbatched = tokens.ndim == 1
        if unbatched:
            tokens = tokens.reshape(1, seq_len)
        x = self.token_embedding(tokens)
        if self.scale_embeddings:
            x = x * int(math.sqrt(self.embed_dim))  # scale factor
        x = self._add_positions(x, start)
        return x.reshape(x.shape[1:]) if unbatched else x
