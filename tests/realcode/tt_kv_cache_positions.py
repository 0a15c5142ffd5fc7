"""TinyTorch module 11 submission written before start_pos existed, patched for the KV cache in a hurry.

Inspired by: the start index that TinyTorch added for Module 18's KV cache ("start_pos is 0 except during cached
generation") and the many positional encodings that only slice ``pe[:, :x.size(1)]`` (OpenNMT/OpenNMT-tf #498 fixed
the same forgotten offset for decoding from context); the module's ordering "lookup, scale by sqrt(D), then add
positions" done the other way round (khirotaka/SAnD #3 scales inside the positional step); and its hint "Remember to
squeeze the batch dim for 1D inputs at the end", forgotten.
"""

import math

from _tt import Tensor, solution

Embedding, _compute_sinusoidal_table = solution.Embedding, solution._compute_sinusoidal_table

MISTAKES = [
    {
        "phrase": ["ignores start_pos", "rows 0..T-1", "start at 0"],
        "mutants": ["pos.start_ignored", "pos.grad_start_ignored"],
        "claims": ["symptom:positions_shifted:-*"],
    },  # learned positions: always rows 0..T-1
    {
        "phrase": "positions",
        "mutants": ["layer.scale_sum"],
        "claims": ["symptom:position_scale:sqrt(D)", "symptom:factor:gradient:position_table:sqrt(D)"],
    },  # (tokens + positions) * sqrt(D)
    {
        "phrase": "squeez",
        "mutants": ["layer.no_squeeze"],
        "claims": [
            "symptom:shape:embedding_layer_forward:an extra leading axis of length N (a batch of one was not squeezed)"
        ],
    },  # 1-D tokens give (1, T, D): the batch axis is never squeezed
]
FACTS = {"length_check": "ignores_start"}


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        if x.ndim != 3 or x.shape[2] != self.embed_dim:
            raise ValueError(f"Expected 3D input (batch, seq, {self.embed_dim}), got {x.shape}")
        seq_len = x.shape[1]
        if seq_len > self.max_seq_len:
            raise ValueError(f"Sequence length {seq_len} exceeds max_seq_len={self.max_seq_len}")
        return x + self.position_embeddings[:seq_len]


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        super().__init__(vocab_size, embed_dim, max_seq_len, pos_encoding, scale_embeddings)
        if pos_encoding == "learned":
            self.pos_encoding = PositionalEncoding(max_seq_len, embed_dim)

    def forward(self, tokens, start_pos=0):
        if tokens.ndim == 1:
            tokens = tokens.reshape(1, -1)
        x = self.token_embedding(tokens)
        start = solution._start_position(start_pos)
        if self.pos_encoding_type == "learned":
            x = self.pos_encoding(x, start)
        elif self.pos_encoding_type == "sinusoidal":
            solution._check_fits(start, x.shape[1], self.max_seq_len)
            x = x + Tensor(self.pos_encoding.data[start : start + x.shape[1]])
        if self.scale_embeddings:
            x = x * math.sqrt(self.embed_dim)
        return x
