"""Module 11 as the late-2025 release exported it (written for this suite, modelled on that release's API):
every step is a tracked Tensor operation, so gradients reach both tables; ``forward`` still takes no
``start_pos``; ids are checked for range only, then cast with ``astype(int)``; the sinusoidal table's cell was
not exported, so ``create_sinusoidal_embeddings`` is missing here while ``EmbeddingLayer`` calls it."""

__all__ = ["Embedding", "PositionalEncoding", "EmbeddingLayer"]

import math

import numpy as np

from ..core.autograd import EmbeddingBackward
from ..core.tensor import Tensor


class Embedding:
    def __init__(self, vocab_size, embed_dim):
        self.vocab_size, self.embed_dim = vocab_size, embed_dim
        limit = math.sqrt(6.0 / (vocab_size + embed_dim))
        self.weight = Tensor(np.random.uniform(-limit, limit, (vocab_size, embed_dim)), requires_grad=True)

    def forward(self, indices):
        if np.any(indices.data >= self.vocab_size) or np.any(indices.data < 0):
            raise ValueError(f"Index out of range for a vocabulary of {self.vocab_size}")
        result = Tensor(self.weight.data[indices.data.astype(int)], requires_grad=self.weight.requires_grad)
        if result.requires_grad:
            result._grad_fn = EmbeddingBackward(self.weight, indices)
        return result

    def __call__(self, indices):
        return self.forward(indices)

    def parameters(self):
        return [self.weight]


class PositionalEncoding:
    def __init__(self, max_seq_len, embed_dim):
        self.max_seq_len, self.embed_dim = max_seq_len, embed_dim
        limit = math.sqrt(2.0 / embed_dim)
        self.position_embeddings = Tensor(
            np.random.uniform(-limit, limit, (max_seq_len, embed_dim)), requires_grad=True
        )

    def forward(self, x):
        if len(x.shape) != 3:
            raise ValueError(f"Expected 3D input (batch, seq, embed), got shape {x.shape}")
        seq_len, embed_dim = x.shape[1], x.shape[2]
        if seq_len > self.max_seq_len:
            raise ValueError(f"Sequence length {seq_len} exceeds maximum {self.max_seq_len}")
        if embed_dim != self.embed_dim:
            raise ValueError(f"Embedding dimension mismatch: expected {self.embed_dim}, got {embed_dim}")
        return x + self.position_embeddings[:seq_len].reshape(1, seq_len, embed_dim)

    def __call__(self, x):
        return self.forward(x)

    def parameters(self):
        return [self.position_embeddings]


class EmbeddingLayer:
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        self.vocab_size, self.embed_dim, self.max_seq_len = vocab_size, embed_dim, max_seq_len
        self.pos_encoding_type, self.scale_embeddings = pos_encoding, scale_embeddings
        self.token_embedding = Embedding(vocab_size, embed_dim)
        if pos_encoding == "learned":
            self.pos_encoding = PositionalEncoding(max_seq_len, embed_dim)
        elif pos_encoding == "sinusoidal":
            self.pos_encoding = create_sinusoidal_embeddings(max_seq_len, embed_dim)
        elif pos_encoding is None:
            self.pos_encoding = None
        else:
            raise ValueError(f"Unknown pos_encoding: {pos_encoding}. Use 'learned', 'sinusoidal', or None")

    def forward(self, tokens):
        squeeze = len(tokens.shape) == 1
        if squeeze:
            tokens = tokens.reshape(1, -1)
        out = self.token_embedding.forward(tokens)
        if self.scale_embeddings:
            out = out * math.sqrt(self.embed_dim)
        if self.pos_encoding_type == "learned":
            out = self.pos_encoding.forward(out)
        elif self.pos_encoding_type == "sinusoidal":
            out = out + Tensor(self.pos_encoding.data[np.newaxis, : out.shape[1]])
        return out[0] if squeeze else out

    def __call__(self, tokens):
        return self.forward(tokens)

    def parameters(self):
        params = self.token_embedding.parameters()
        if self.pos_encoding_type == "learned":
            params.extend(self.pos_encoding.parameters())
        return params
