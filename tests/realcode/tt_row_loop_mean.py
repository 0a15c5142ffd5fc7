"""TinyTorch module 11 submission: a per-sequence loop backward, a batch-mean position gradient, positions left out
of parameters().

Inspired by: karpathy/nn-zero-to-hero #57 (``dC[Xb[k]] += demb[k]``: one fancy ``+=`` per sequence) and the
Deep Learning from Scratch 2 loop ``for i, word_id in enumerate(self.idx): dW[word_id] += dout[i]`` run on
batched ids; the "dense across positions, summed over the batch" route of the TinyTorch module
("Structured sum across batch dimension (grad.sum(axis=0))") taken as a mean, the way a mean loss is often
back-propagated; and ``parameters()`` returning only the token table (the positional table never gets trained).
"""

import numpy as np
from _tt import Function, solution

_compute_sinusoidal_table = solution._compute_sinusoidal_table
Tensor = solution.Tensor

MISTAKES = [
    {
        "phrase": "repeated",
        "mutants": [],
        "claims": ["symptom:repeated_rows:token_table", "symptom:repeated_rows_differ:token_table"],
    },  # grad[row] += g[i] per sequence: an id repeated in a sequence counts once
    {
        "phrase": ["averag", "1/B"],
        "mutants": ["pos.grad_averaged"],
        "claims": [
            "symptom:factor:gradient:position_table:1/B",
            "symptom:factor:gradient:position_table:1/sqrt(D)",
            "symptom:factor:gradient:position_table:sqrt(2/D)",
        ],
    },  # grad_table rows = grad_output.mean(axis=0); with B = 2 the factor 1/B is 1/sqrt(D) or sqrt(2/D) too, and the sentence says both
    {"phrase": "trainable", "mutants": ["mem.learned_not_counted"]},  # parameters() leaves out the position table
]


class EmbeddingFunction(Function):
    def forward(self, weight, indices):
        self.weight_shape = weight.shape
        self.indices = indices
        return weight[indices]

    def backward(self, grad_output):
        grad_weight = np.zeros(self.weight_shape, dtype=np.float32)
        batch = np.atleast_2d(self.indices)
        grads = grad_output.reshape(batch.shape + (self.weight_shape[1],))
        for i, sequence in enumerate(batch):
            grad_weight[sequence] += grads[i]
        return (grad_weight,)


class Embedding(solution.Embedding):
    def forward(self, indices):
        ids = solution._token_ids(indices, self.vocab_size)
        return EmbeddingFunction.apply(self.weight, indices=ids)


class AddPositions(Function):
    def forward(self, x, table, start=0):
        self.table_shape, self.start = table.shape, start
        return x + table[start : start + x.shape[1]]

    def backward(self, grad_output):
        grad_table = np.zeros(self.table_shape, dtype=np.float32)
        grad_table[self.start : self.start + grad_output.shape[1]] = grad_output.mean(axis=0)
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

    def parameters(self):
        return [self.token_embedding.weight]
