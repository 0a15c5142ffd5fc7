"""TinyTorch submission built from two pieces of published model code: BART's old sinusoid init and DiffPoseTalk's
PositionalEncoding.

Inspired by: huggingface/transformers PR #8226 ("[bart] 2 SinusoidalPositionalEmbedding fixes"): the old
``_init_weight`` wrote ``out[:, 0:dim // 2] = sin(position_enc[:, 0::2])`` and ``out[:, dim // 2:] =
cos(position_enc[:, 1::2])`` ([sin | cos] blocks, "This line breaks for odd n_pos"), and DiffPoseTalk/DiffPoseTalk
#20 ("Critical bug in the implementation of the PositionalEncoding class"): ``x + self.pe[:, x.shape[1], :]``
indexes one row where a slice was meant (explosion/curated-transformers #254 fixed the same "embedding of a
single position").
"""

import numpy as np
from _tt import Tensor, solution

Embedding = solution.Embedding

MISTAKES = [
    {
        "phrase": ["[sin | cos]", "concatenat"],
        "mutants": ["sin.concatenated"],
        "claims": ["symptom:sinusoid:layout [[]sin | cos[]] instead of interleaved (sin at 2k, cos at 2k+1);"],
    },  # [sin | cos] blocks instead of interleaved columns
    {"phrase": "odd", "mutants": []},  # ceil(D/2) sines into a D//2-wide block: ValueError for odd D
    {
        "phrase": "one row",
        "mutants": [],
        "claims": ["symptom:positions_one_row"],
    },  # table[start_pos + T] (an index, not a slice) added at every position
]


def _compute_sinusoidal_table(max_len, embed_dim):
    position_enc = np.arange(max_len)[:, None] / np.power(10000, 2 * (np.arange(embed_dim) // 2) / embed_dim)
    out = np.zeros((max_len, embed_dim), dtype=np.float32)
    out[:, 0 : embed_dim // 2] = np.sin(position_enc[:, 0::2])  # This line breaks for odd n_pos
    out[:, embed_dim // 2 :] = np.cos(position_enc[:, 1::2])
    return out


def create_sinusoidal_embeddings(max_seq_len, embed_dim):
    return Tensor(_compute_sinusoidal_table(max_seq_len, embed_dim))


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        if x.ndim != 3 or x.shape[2] != self.embed_dim:
            raise ValueError(f"Expected 3D input (batch, seq, {self.embed_dim}), got {x.shape}")
        start = solution._start_position(start_pos)
        solution._check_fits(start, x.shape[1], self.max_seq_len)
        return x + self.position_embeddings[start + x.shape[1]]


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        super().__init__(vocab_size, embed_dim, max_seq_len, pos_encoding, scale_embeddings)
        if pos_encoding == "learned":
            self.pos_encoding = PositionalEncoding(max_seq_len, embed_dim)
        elif pos_encoding == "sinusoidal":
            self.pos_encoding = create_sinusoidal_embeddings(max_seq_len, embed_dim)
