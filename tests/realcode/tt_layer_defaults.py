"""TinyTorch submission whose EmbeddingLayer is forgiving: any pos_encoding string, sinusoids of any length, GPT-2's 1024.

Inspired by: fairseq's SinusoidalPositionalEmbedding ("This module produces sinusoidal positional embeddings of any
length": it recomputes a longer table when a sequence runs past it), layer factories that lower-case their option
and fall through to "no positions" for anything they do not know, and GPT-2's ``n_positions = 1024`` (Hugging
Face GPT2Config, nanoGPT's block_size) used as the default instead of the module's 512.
"""

import math

from _tt import Tensor, solution

Embedding, PositionalEncoding = solution.Embedding, solution.PositionalEncoding
_compute_sinusoidal_table, create_sinusoidal_embeddings = (
    solution._compute_sinusoidal_table,
    solution.create_sinusoidal_embeddings,
)

MISTAKES = [
    {
        "phrase": "pos_encoding",
        "mutants": ["mem.unknown_pos_as_none"],
        "claims": ["symptom:position_scale:0"],
    },  # "rope" means no positions, "Learned" means learned
    {
        "phrase": "max_seq_len",
        "mutants": ["layer.table_extended"],
    },  # a longer sinusoid table instead of sequence_too_long
    {"phrase": ["default", "1024"], "mutants": []},  # max_seq_len defaults to 1024, not 512
]


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=1024, pos_encoding="learned", scale_embeddings=False):
        kind = pos_encoding.lower() if isinstance(pos_encoding, str) else pos_encoding
        kind = kind if kind in ("learned", "sinusoidal") else None  # anything else: no positions
        super().__init__(vocab_size, embed_dim, max_seq_len, kind, scale_embeddings)

    def forward(self, tokens, start_pos=0):
        start = solution._start_position(start_pos)
        seq_len = tokens.shape[-1]
        if self.pos_encoding_type == "learned":
            solution._check_fits(start, seq_len, self.max_seq_len)
        unbatched = tokens.ndim == 1
        if unbatched:
            tokens = tokens.reshape(1, seq_len)
        x = self.token_embedding(tokens)
        if self.scale_embeddings:
            x = x * math.sqrt(self.embed_dim)
        if self.pos_encoding_type == "learned":
            x = self.pos_encoding(x, start)
        elif self.pos_encoding_type == "sinusoidal":
            if start + seq_len > self.pos_encoding.shape[0]:  # recompute/expand embeddings if needed
                self.pos_encoding = create_sinusoidal_embeddings(start + seq_len, self.embed_dim)
            x = x + Tensor(self.pos_encoding.data[start : start + seq_len])
        return x.reshape(x.shape[1:]) if unbatched else x
