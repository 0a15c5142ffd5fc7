"""SamLynnEvans/Transformer's ``PositionalEncoder`` written into a TinyTorch submission.

Inspired by: SamLynnEvans/Transformer Embed.py (the "How to code The Transformer in PyTorch" tutorial, copied into
intro-llm/intro-llm.github.io, see its issue #34): the table loop ``for i in range(0, d_model, 2)`` writes
``sin(pos / 10000 ** ((2 * i) / d_model))`` and ``cos(pos / 10000 ** ((2 * (i + 1)) / d_model))`` (i is already
the even column, so the exponent is doubled, and the cosine gets another frequency: issue #25), writes column
``i + 1`` even when it does not exist, and ``forward`` does ``x = x * math.sqrt(self.d_model)`` before adding the
positions (issue #10 asks why the scale lives there).
"""

import math

import numpy as np
from _tt import Tensor, solution

Embedding = solution.Embedding

MISTAKES = [
    {
        "phrase": ["exponent", "frequenc"],
        "mutants": ["sin.column_exponent"],
    },  # sin uses 2i/D with i the even column (4k/D), cos uses 2(i+1)/D
    {"phrase": "odd", "mutants": []},  # pe[pos, i + 1] is out of bounds for odd D: IndexError
    {
        "phrase": ["sqrt(D) times", "scaled by D instead"],
        "mutants": [],
        "claims": [
            "symptom:factor:gradient:token_table:sqrt(D)",
            "symptom:factor:gradient:grad_x:sqrt(D)",
            "symptom:token_scale:D",
            "symptom:token_scale:sqrt(D)",
        ],
    },  # the positional encoder multiplies x by sqrt(D) before adding positions
]


def _compute_sinusoidal_table(max_len, embed_dim):
    pe = np.zeros((max_len, embed_dim), dtype=np.float32)
    for pos in range(max_len):
        for i in range(0, embed_dim, 2):
            pe[pos, i] = math.sin(pos / (10000 ** ((2 * i) / embed_dim)))
            pe[pos, i + 1] = math.cos(pos / (10000 ** ((2 * (i + 1)) / embed_dim)))
    return pe


def create_sinusoidal_embeddings(max_seq_len, embed_dim):
    return Tensor(_compute_sinusoidal_table(max_seq_len, embed_dim))


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        if x.ndim != 3 or x.shape[2] != self.embed_dim:
            raise ValueError(f"Expected 3D input (batch, seq, {self.embed_dim}), got {x.shape}")
        start = solution._start_position(start_pos)
        solution._check_fits(start, x.shape[1], self.max_seq_len)
        x = x * math.sqrt(self.embed_dim)  # make embeddings relatively larger
        return x + self.position_embeddings[start : start + x.shape[1]]


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        super().__init__(vocab_size, embed_dim, max_seq_len, pos_encoding, scale_embeddings)
        if pos_encoding == "learned":
            self.pos_encoding = PositionalEncoding(max_seq_len, embed_dim)
        elif pos_encoding == "sinusoidal":
            self.pos_encoding = create_sinusoidal_embeddings(max_seq_len, embed_dim)
