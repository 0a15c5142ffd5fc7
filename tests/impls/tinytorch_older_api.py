"""Correct, on the older published TinyTorch API: PositionalEncoding.forward(x) and EmbeddingLayer.forward(tokens)
take no start_pos (positions always start at 0)."""

from _example import student_embeddings

solution = student_embeddings()
Tensor, Embedding = solution.Tensor, solution.Embedding
_compute_sinusoidal_table, create_sinusoidal_embeddings = (
    solution._compute_sinusoidal_table,
    solution.create_sinusoidal_embeddings,
)


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x):
        return super().forward(x, 0)

    def __call__(self, x, *_):
        return self.forward(x)


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        super().__init__(vocab_size, embed_dim, max_seq_len, pos_encoding, scale_embeddings)
        if pos_encoding == "learned":
            self.pos_encoding = PositionalEncoding(max_seq_len, embed_dim)

    def forward(self, tokens):
        return super().forward(tokens, 0)
