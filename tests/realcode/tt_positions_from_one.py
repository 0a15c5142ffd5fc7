"""TinyTorch submission whose sinusoid counts positions from 1 and computes its exponent with integer division.

Inspired by: sinusoid helpers documented as "Create sinusoidal positional embeddings for positions 1 to N"
(``position = torch.arange(1, N + 1)``, found with the code search for sinusoidal_embedding) and the 1-based
position ids of jadore801120/attention-is-all-you-need-pytorch, together with Python-2-era exponents
``2 * (i // 2) // d_model`` / ``torch.arange(0, d, 2) // d`` whose floor division makes every exponent 0, so
every frequency is 1 (old PyTorch divided integer tensors the same way).
"""

import numpy as np
from _tt import Tensor, solution

Embedding, PositionalEncoding = solution.Embedding, solution.PositionalEncoding

MISTAKES = [
    {
        "phrase": "from 1",
        "mutants": ["sin.positions_from_1"],
        "claims": ["symptom:sinusoid:positions counted from 1 instead of 0;"],
    },  # position = arange(1, max_len + 1)
    {
        "phrase": "frequency 1",
        "mutants": [],
        "claims": ["symptom:sinusoid:every pair has frequency 1 (the exponent evaluates to 0*"],
    },  # (2 * k) // embed_dim == 0: 10000 ** 0 for every pair
]


def _compute_sinusoidal_table(max_len, embed_dim):
    position = np.arange(1, max_len + 1, dtype=np.float32)[:, np.newaxis]  # positions 1 to N
    exponent = (2 * np.arange(0, (embed_dim + 1) // 2)) // embed_dim
    div_term = (1.0 / np.power(10000, exponent)).astype(np.float32)
    pe = np.zeros((max_len, embed_dim), dtype=np.float32)
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term[: embed_dim // 2])
    return pe


def create_sinusoidal_embeddings(max_seq_len, embed_dim):
    return Tensor(_compute_sinusoidal_table(max_seq_len, embed_dim))


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        super().__init__(vocab_size, embed_dim, max_seq_len, pos_encoding, scale_embeddings)
        if pos_encoding == "sinusoidal":
            self.pos_encoding = create_sinusoidal_embeddings(max_seq_len, embed_dim)
