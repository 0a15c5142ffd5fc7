"""TinyTorch submission that scales through ``.data`` and checks only the upper end of the id range.

Inspired by: the TinyTorch module's comment on the scale, "Use Tensor multiplication to preserve gradients"
(harvard-edge/cs249r_book, tinytorch/src/11_embeddings), which exists because students write to ``.data`` instead:
``token_embeds.data *= scale`` changes the forward and leaves the backward unscaled; and the one-sided range check
``if np.any(indices.data >= self.vocab_size)`` that lets NumPy's negative indexing answer for ``-1``
(harvard-edge/cs249r_book PR #2066: "a negative index (must not silently wrap around via numpy's
negative-indexing semantics)").
"""

import math

import numpy as np
from _tt import Function, solution

PositionalEncoding, _compute_sinusoidal_table = solution.PositionalEncoding, solution._compute_sinusoidal_table
Tensor = solution.Tensor

MISTAKES = [
    {
        "phrase": "gradient",
        "mutants": ["layer.scale_missing_grad"],
        "claims": ["symptom:token_scale:1.0"],
    },  # .data *= sqrt(D): the backward is not scaled
    {
        "phrase": "negative",
        "mutants": ["fwd.negative_wraps", "bwd.negative_wraps", "layer.ids_unchecked"],
        "claims": ["symptom:ids_wrapped", "symptom:ids_wrapped_or_clamped"],
    },  # -1 reads and trains the last row
]
FACTS = {"forward_ids": "upper_only", "backward_ids": "upper_only"}


class EmbeddingFunction(Function):
    def forward(self, weight, indices):
        self.weight_shape, self.indices = weight.shape, indices
        return weight[indices]

    def backward(self, grad_output):
        grad_weight = np.zeros(self.weight_shape, dtype=np.float32)
        np.add.at(grad_weight, self.indices, grad_output)
        return (grad_weight,)


class Embedding(solution.Embedding):
    def forward(self, indices):
        data = indices.data
        if not np.all(np.isfinite(data)) or np.any(data != np.floor(data)):
            raise ValueError("Embedding token IDs must be finite integers")
        if np.any(data >= self.vocab_size):
            raise ValueError(f"Embedding index out of range for vocabulary size {self.vocab_size}")
        return EmbeddingFunction.apply(self.weight, indices=data.astype(np.int64))


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        super().__init__(vocab_size, embed_dim, max_seq_len, pos_encoding, scale_embeddings)
        self.token_embedding = Embedding(vocab_size, embed_dim)

    def forward(self, tokens, start_pos=0):
        start = solution._start_position(start_pos)
        solution._check_fits(start, tokens.shape[-1], self.max_seq_len)
        unbatched = tokens.ndim == 1
        if unbatched:
            tokens = tokens.reshape(1, -1)
        token_embeds = self.token_embedding(tokens)
        if self.scale_embeddings:
            token_embeds.data *= math.sqrt(self.embed_dim)
        x = self._add_positions(token_embeds, start)
        return x.reshape(x.shape[1:]) if unbatched else x
