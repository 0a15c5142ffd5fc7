"""TinyTorch module 11 submission: an indexed ``+=`` backward, a ``>`` range check and the unguarded odd-D cosine.

Inspired by: the TinyTorch module itself (harvard-edge/cs249r_book, tinytorch/src/11_embeddings/11_embeddings.py),
which warns that "naive indexing assignment ``grad_weight[indices] += grad_output`` fails silently" on repeated
ids; harvard-edge/cs249r_book PR #2066, whose hand mutation "an off-by-one in the out-of-range check (``>``
instead of ``>=``)" lets id V reach NumPy's indexing; and the ``pe[:, 1::2] = cos(position * div_term)`` line that
breaks on odd widths (codertimo/BERT-pytorch #78), which the module's own solution guards with ``div_term[:-1]``.
"""

import math

import numpy as np
from _tt import Function, Tensor, solution

PositionalEncoding = solution.PositionalEncoding

MISTAKES = [
    {
        "phrase": "accumulat",
        "mutants": ["bwd.overwrite"],
        "claims": ["symptom:repeated_rows:token_table", "symptom:repeated_rows_differ:token_table"],
    },  # grad_weight[indices] += grad_output
    {
        "phrase": [">=", "index_out_of_range"],
        "mutants": ["fwd.range_check_off_by_one", "layer.ids_unchecked"],
    },  # indices > vocab_size: id V reaches weight[V]
    {"phrase": "odd", "mutants": []},  # cos(position * div_term) into floor(D/2) columns: a ValueError for odd D
]
FACTS = {"forward_ids": "off_by_one", "backward_ids": "off_by_one"}


class EmbeddingFunction(Function):
    def forward(self, weight, indices):
        self.weight_shape = weight.shape
        self.indices = indices
        return weight[indices]

    def backward(self, grad_output):
        grad_weight = np.zeros(self.weight_shape, dtype=np.float32)
        grad_weight[self.indices] += grad_output
        return (grad_weight,)


class Embedding(solution.Embedding):
    def forward(self, indices):
        data = indices.data
        if not np.all(np.isfinite(data)) or np.any(data != np.floor(data)):
            raise ValueError("Embedding token IDs must be finite integers")
        if np.any(data > self.vocab_size) or np.any(data < 0):
            raise ValueError(f"Embedding index out of range for vocabulary size {self.vocab_size}")
        return EmbeddingFunction.apply(self.weight, indices=data.astype(int))


def _compute_sinusoidal_table(max_len, embed_dim):
    position = np.arange(max_len, dtype=np.float32)[:, np.newaxis]
    div_term = np.exp(np.arange(0, embed_dim, 2, dtype=np.float32) * -(math.log(10000.0) / embed_dim))
    pe = np.zeros((max_len, embed_dim), dtype=np.float32)
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe


def create_sinusoidal_embeddings(max_seq_len, embed_dim):
    return Tensor(_compute_sinusoidal_table(max_seq_len, embed_dim))


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        super().__init__(vocab_size, embed_dim, max_seq_len, pos_encoding, scale_embeddings)
        self.token_embedding = Embedding(vocab_size, embed_dim)
        if pos_encoding == "sinusoidal":
            self.pos_encoding = create_sinusoidal_embeddings(max_seq_len, embed_dim)
