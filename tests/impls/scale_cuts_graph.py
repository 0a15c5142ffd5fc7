"""Wrong variant: the sqrt(D) scaling rebuilds the tensor from .data, which cuts the token table out of the graph
(it gets a gradient only when scale_embeddings is off)."""

import math

from _example import student_embeddings

solution = student_embeddings()
Tensor, Embedding, PositionalEncoding = solution.Tensor, solution.Embedding, solution.PositionalEncoding
_compute_sinusoidal_table, create_sinusoidal_embeddings = (
    solution._compute_sinusoidal_table,
    solution.create_sinusoidal_embeddings,
)


class EmbeddingLayer(solution.EmbeddingLayer):
    def forward(self, tokens, start_pos=0):
        start = solution._start_position(start_pos)
        solution._check_fits(start, tokens.shape[-1], self.max_seq_len)
        unbatched = tokens.ndim == 1
        if unbatched:
            tokens = tokens.reshape(1, tokens.shape[-1])
        x = self.token_embedding(tokens)
        if self.scale_embeddings:
            x = Tensor(x.data * math.sqrt(self.embed_dim))  # BUG: a new Tensor has no graph behind it
        x = self._add_positions(x, start)
        return x.reshape(x.shape[1:]) if unbatched else x
