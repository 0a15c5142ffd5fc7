"""A TinyTorch EmbeddingBag (module 11's optional extension) with a hand-written backward.

Inspired by: pytorch/pytorch #49237's review of ``padding_idx`` in EmbeddingBag (a negative ``padding_idx`` must be
turned into ``V + padding_idx`` before ids are compared with it: here it is range-checked and then compared as
given, so -1 never matches an id); Theano/Theano #5404 (a max's gradient sent to every row equal to the max,
``rows == out`` as a mask); and flagos-ai/FlagGems PR #3900's review (the mean's backward kernel called with scale
1: each counted row gets g[b] whole instead of g[b] / count).
"""

import numpy as np
from _tt import solution

Tensor = solution.Tensor
Embedding, PositionalEncoding, EmbeddingLayer = solution.Embedding, solution.PositionalEncoding, solution.EmbeddingLayer
_compute_sinusoidal_table = solution._compute_sinusoidal_table

MISTAKES = [
    {
        "phrase": ["negative padding", "padding_idx", "-1"],
        "mutants": [],
        "claims": ["symptom:padding_counted:bag"],
    },  # padding_idx -1 is never resolved to V - 1: the padding id is counted like any id
    {
        "phrase": ["every tied", "every counted position holding the maximum", "tie"],
        "mutants": ["bag.max_gradient_to_every_tie"],
    },  # max backward: g to every counted row equal to the max in that column
    {
        "phrase": ["not divide", "undivided", "divisor"],
        "mutants": ["bag.mean_backward_undivided"],
    },  # mean backward: g[b] * w_i, not divided by the bag's count (or weight sum)
]


class EmbeddingBagFunction(solution.EmbeddingBagFunction):
    def backward(self, grad_output):
        g = grad_output.astype(np.float64)
        grad_weight = np.zeros(self.weight_shape)
        grad_w = np.zeros(self.ids.shape)
        for b, positions in enumerate(self._bags()):
            if not positions.size or self.divisors[b] == 0:
                continue
            if self.mode == "max":
                tied = self.rows[positions] == self.out[b]
                np.add.at(grad_weight, self.ids[positions], tied * g[b])
                continue
            np.add.at(grad_weight, self.ids[positions], self.w[positions][:, None] * g[b])
            centred = self.rows[positions] - (self.out[b] if self.mode == "mean" else 0.0)
            grad_w[positions] = centred @ g[b] / self.divisors[b]
        grad_weight = grad_weight.astype(np.float32)
        return (grad_weight, grad_w.astype(np.float32)) if self.weighted else (grad_weight,)


class EmbeddingBag(solution.EmbeddingBag):
    def __init__(self, vocab_size, embed_dim, mode="mean", padding_idx=None, include_last_offset=False):
        super().__init__(vocab_size, embed_dim, mode, padding_idx, include_last_offset)
        if padding_idx is not None:
            self.padding_idx = int(padding_idx)  # checked in range above, but kept as given

    def reduce(self, inputs, ids, bounds):
        return EmbeddingBagFunction.apply(*inputs, ids=ids, bounds=bounds, mode=self.mode, padding_idx=self.padding_idx)
