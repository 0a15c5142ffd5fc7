"""Module 11 as the autumn-2025 release exported it (written for this suite, modelled on that release's API):
``forward`` takes no ``start_pos``; the lookup records an ``EmbeddingBackward`` node; learned positions, the
sqrt(D) scale and the 1-D squeeze compute on ``.data`` (no gradient passes them); the sinusoidal table's cell
was not exported, so ``create_sinusoidal_embeddings`` is missing here."""

__all__ = ["Embedding", "PositionalEncoding", "EmbeddingLayer"]

import math

import numpy as np

from ..core.tensor import Tensor


class Embedding:
    def __init__(self, vocab_size, embed_dim):
        self.vocab_size = vocab_size
        self.embed_dim = embed_dim
        bound = math.sqrt(6.0 / (vocab_size + embed_dim))
        self.weight = Tensor(np.random.uniform(-bound, bound, (vocab_size, embed_dim)), requires_grad=True)

    def forward(self, indices):
        ids = indices.data
        if np.any(ids < 0) or np.any(ids >= self.vocab_size):
            raise ValueError(f"Index out of range: ids must lie in [0, {self.vocab_size})")
        out = Tensor(self.weight.data[ids.astype(int)], requires_grad=self.weight.requires_grad)
        if self.weight.requires_grad:
            from tinytorch.core.autograd import EmbeddingBackward

            out._grad_fn = EmbeddingBackward()
            out._grad_fn.saved_tensors = (self.weight, indices)
        return out

    def __call__(self, indices):
        return self.forward(indices)

    def parameters(self):
        return [self.weight]


class PositionalEncoding:
    def __init__(self, max_seq_len, embed_dim):
        self.max_seq_len = max_seq_len
        self.embed_dim = embed_dim
        bound = math.sqrt(2.0 / embed_dim)
        self.position_embeddings = Tensor(
            np.random.uniform(-bound, bound, (max_seq_len, embed_dim)), requires_grad=True
        )

    def forward(self, x):
        if len(x.shape) != 3:
            raise ValueError(f"Expected (batch, seq, embed) input, got {x.shape}")
        _, seq_len, embed_dim = x.shape
        if seq_len > self.max_seq_len:
            raise ValueError(f"Sequence length {seq_len} exceeds maximum {self.max_seq_len}")
        if embed_dim != self.embed_dim:
            raise ValueError(f"Embedding dimension mismatch: {embed_dim} != {self.embed_dim}")
        return Tensor(x.data + self.position_embeddings.data[:seq_len][np.newaxis])

    def __call__(self, x):
        return self.forward(x)

    def parameters(self):
        return [self.position_embeddings]


class EmbeddingLayer:
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        self.vocab_size = vocab_size
        self.embed_dim = embed_dim
        self.max_seq_len = max_seq_len
        self.pos_encoding_type = pos_encoding
        self.scale_embeddings = scale_embeddings
        self.token_embedding = Embedding(vocab_size, embed_dim)
        if pos_encoding == "learned":
            self.pos_encoding = PositionalEncoding(max_seq_len, embed_dim)
        elif pos_encoding == "sinusoidal":
            self.pos_encoding = create_sinusoidal_embeddings(max_seq_len, embed_dim)
        elif pos_encoding is None:
            self.pos_encoding = None
        else:
            raise ValueError(f"Unknown pos_encoding {pos_encoding!r}: use 'learned', 'sinusoidal' or None")

    def forward(self, tokens):
        squeeze = len(tokens.shape) == 1
        if squeeze:
            tokens = Tensor(tokens.data[np.newaxis])
        out = self.token_embedding.forward(tokens)
        if self.scale_embeddings:
            out = Tensor(out.data * math.sqrt(self.embed_dim))
        if self.pos_encoding_type == "learned":
            out = self.pos_encoding.forward(out)
        elif self.pos_encoding_type == "sinusoidal":
            out = Tensor(out.data + self.pos_encoding.data[: out.shape[1]][np.newaxis])
        return Tensor(out.data[0]) if squeeze else out

    def __call__(self, tokens):
        return self.forward(tokens)

    def parameters(self):
        params = self.token_embedding.parameters()
        if self.pos_encoding_type == "learned":
            params.extend(self.pos_encoding.parameters())
        return params
