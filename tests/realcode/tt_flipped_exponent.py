"""TinyTorch module 11 submission: the exponent's minus sign dropped, the sinusoid sliced from 0, the table in parameters().

Inspired by: the module's hint "Use np.exp with negative log(10000) scaling" (harvard-edge/cs249r_book,
tinytorch/src/11_embeddings) and the sign that students drop from it (SamLynnEvans/Transformer #25 and
intro-llm/intro-llm.github.io #34 are exponent mix-ups in widely read code); the module's datapath table
"Positional Slicing P[0:T, :]" copied into the sinusoidal branch without start_pos; and ``parameters()`` written
as "every table of the layer", the sinusoid included (Informer2020 #668 is a fixed table that was meant to be
excluded from training).
"""

import math

import numpy as np
from _tt import Tensor, solution

Embedding, PositionalEncoding = solution.Embedding, solution.PositionalEncoding

MISTAKES = [
    {
        "phrase": "sign",
        "mutants": ["sin.exponent_sign"],
        "claims": [
            "symptom:sinusoid:the exponent's sign flipped (base^(+s_k): frequencies grow with k);",
            "symptom:sinusoid:the exponent's sign flipped (base^(+s_k): frequencies grow with k);computed in float32",
        ],
    },  # exp(+2k ln(10000) / D)
    {
        "phrase": ["ignores start_pos", "rows 0..T-1", "start at 0"],
        "mutants": ["layer.start_pos_ignored"],
    },  # sinusoid: table[:T]
    {"phrase": "trainable", "mutants": ["mem.sinusoidal_trainable"]},  # parameters() lists the sinusoid table
]
FACTS = {"length_check": "ignores_start"}


def _compute_sinusoidal_table(max_len, embed_dim):
    position = np.arange(max_len, dtype=np.float32)[:, np.newaxis]
    div_term = np.exp(np.arange(0, embed_dim, 2, dtype=np.float32) * (math.log(10000.0) / embed_dim))
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

    def forward(self, tokens, start_pos=0):
        unbatched = tokens.ndim == 1
        if unbatched:
            tokens = tokens.reshape(1, -1)
        x = self.token_embedding(tokens)
        if self.scale_embeddings:
            x = x * math.sqrt(self.embed_dim)
        seq_len = x.shape[1]
        if self.pos_encoding_type == "learned":
            x = self.pos_encoding(x, start_pos)
        elif self.pos_encoding_type == "sinusoidal":
            if seq_len > self.max_seq_len:
                raise ValueError("Sequence runs past the sinusoidal position table")
            x = x + Tensor(self.pos_encoding.data[:seq_len][np.newaxis])
        return x.reshape(x.shape[1:]) if unbatched else x

    def parameters(self):
        params = [self.token_embedding.weight]
        if self.pos_encoding_type == "learned":
            params.append(self.pos_encoding.position_embeddings)
        elif self.pos_encoding_type == "sinusoidal":
            params.append(self.pos_encoding)
        return params
