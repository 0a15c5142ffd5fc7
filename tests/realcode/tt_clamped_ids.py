"""TinyTorch submission that clamps ids "to be safe" and writes the position gradient sequence by sequence.

Inspired by: JAX-style indexing, which clamps out-of-range ids to the last row (dm-haiku ``hk.Embed`` ARRAY_INDEX
and Equinox, measured in /work/shared/docs/conventions.md) and the ``np.clip(ids, 0, vocab_size - 1)`` that
students copy from it to silence an IndexError; and a position backward written as a loop over the batch with
``grad_table[s:s + T] = grad_output[b]`` (assignment where ``+=`` was meant: the overwrite of
``dW[self.idx] = dout`` in Deep Learning from Scratch 2, moved to the positions).
"""

import numpy as np
from _tt import Function, solution

_compute_sinusoidal_table = solution._compute_sinusoidal_table
Tensor = solution.Tensor

MISTAKES = [
    {
        "phrase": "clamp",
        "mutants": ["fwd.clamped"],
        "claims": ["symptom:ids_clamped", "symptom:ids_wrapped_or_clamped"],
    },  # np.clip(ids, 0, V - 1) instead of rejecting
    {
        "phrase": "last",
        "mutants": ["pos.grad_last_batch"],
        "claims": ["symptom:position_grad_sequence:last"],
    },  # grad_table[s:s+T] = grad_output[b] for each b: the last wins
]
FACTS = {"forward_ids": "clamps", "backward_ids": "clamps"}


class Embedding(solution.Embedding):
    def forward(self, indices):
        data = indices.data
        if not np.all(np.isfinite(data)) or np.any(data != np.floor(data)):
            raise ValueError("Embedding token IDs must be finite integers")
        ids = np.clip(data, 0, self.vocab_size - 1).astype(np.int64)  # never index outside the table
        return solution.EmbeddingFunction.apply(self.weight, indices=ids)


class AddPositions(Function):
    def forward(self, x, table, start=0):
        self.table_shape, self.start = table.shape, start
        return x + table[start : start + x.shape[1]]

    def backward(self, grad_output):
        grad_table = np.zeros(self.table_shape, dtype=np.float32)
        for b in range(grad_output.shape[0]):
            grad_table[self.start : self.start + grad_output.shape[1]] = grad_output[b]
        return grad_output, grad_table


class PositionalEncoding(solution.PositionalEncoding):
    def forward(self, x, start_pos=0):
        if x.ndim != 3 or x.shape[2] != self.embed_dim:
            raise ValueError(f"Expected 3D input (batch, seq, {self.embed_dim}), got {x.shape}")
        start = solution._start_position(start_pos)
        solution._check_fits(start, x.shape[1], self.max_seq_len)
        return AddPositions.apply(x, self.position_embeddings, start=start)


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        super().__init__(vocab_size, embed_dim, max_seq_len, pos_encoding, scale_embeddings)
        self.token_embedding = Embedding(vocab_size, embed_dim)
        if pos_encoding == "learned":
            self.pos_encoding = PositionalEncoding(max_seq_len, embed_dim)
