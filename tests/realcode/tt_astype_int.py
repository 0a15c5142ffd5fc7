"""TinyTorch module 11 submission: ids cast with ``astype(int)``, positions re-wrapped from ``.data``, a trainable sinusoid.

Inspired by: the TinyTorch module's own hints and warnings (harvard-edge/cs249r_book,
tinytorch/src/11_embeddings/11_embeddings.py): its hint ``EmbeddingFunction.apply(self.weight,
indices=indices.data.astype(int))`` (followed without the "finite integers" check, 0.5 becomes row 0), its warning
"Do NOT write Tensor(pos_embeddings.data[np.newaxis]) ... the gradient silently never reaches the parameter", and
its note that the sinusoidal table is "deliberately a fresh constant tensor" (here it is marked trainable and
sliced inside the graph, as Informer2020 #668's ``require_grad`` typo shows people get wrong).
"""

import numpy as np
from _tt import Tensor, solution

_compute_sinusoidal_table = solution._compute_sinusoidal_table

MISTAKES = [
    {
        "phrase": "truncat",
        "mutants": ["fwd.float_truncated", "bwd.float_truncated", "fwd.saturating_cast"],
        "claims": ["symptom:ids_rounded_or_truncated", "symptom:ids_truncated"],
    },  # 0.5 -> row 0, 2.7 -> row 2
    {
        "phrase": "no gradient",
        "mutants": ["layer.untracked_positions"],  # its own table, too, gets none (EMB-LAY-12)
        "claims": ["symptom:no_gradient:*"],
    },  # Tensor(table.data[...]) cuts the learned positions out of the graph
    {"phrase": "sinusoid", "mutants": ["layer.sinusoid_grad"]},  # the sinusoid table requires grad and receives one
]


class Embedding(solution.Embedding):
    def forward(self, indices):
        if np.any(indices.data >= self.vocab_size) or np.any(indices.data < 0):
            raise ValueError(f"Embedding index out of range for vocabulary size {self.vocab_size}")
        return solution.EmbeddingFunction.apply(self.weight, indices=indices.data.astype(int))


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        if x.ndim != 3 or x.shape[2] != self.embed_dim:
            raise ValueError(f"Expected 3D input (batch, seq, {self.embed_dim}), got {x.shape}")
        start = solution._start_position(start_pos)
        solution._check_fits(start, x.shape[1], self.max_seq_len)
        pos_embeddings = self.position_embeddings.data[start : start + x.shape[1]]
        return x + Tensor(pos_embeddings[np.newaxis])


def create_sinusoidal_embeddings(max_seq_len, embed_dim):
    return Tensor(_compute_sinusoidal_table(max_seq_len, embed_dim), requires_grad=True)


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        super().__init__(vocab_size, embed_dim, max_seq_len, pos_encoding, scale_embeddings)
        self.token_embedding = Embedding(vocab_size, embed_dim)
        if pos_encoding == "learned":
            self.pos_encoding = PositionalEncoding(max_seq_len, embed_dim)
        elif pos_encoding == "sinusoidal":
            self.pos_encoding = create_sinusoidal_embeddings(max_seq_len, embed_dim)

    def _add_positions(self, x, start):
        if self.pos_encoding_type == "sinusoidal":
            return x + self.pos_encoding[start : start + x.shape[1]]
        return super()._add_positions(x, start)
