"""Module 11: embeddings.

Token lookup tables, learned and sinusoidal positional encodings, and the
layer that combines them at the input of a transformer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

try:
    from tinytorch.core.tensor import Tensor
except ModuleNotFoundError:  # loaded by file path: put the package root on sys.path
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tinytorch.core.tensor import Tensor

import tinytorch.core.autograd  # noqa: F401  (importing it enables autograd)
from tinytorch.core.autograd import Function

__all__ = [
    "Embedding",
    "EmbeddingFunction",
    "PositionalEncoding",
    "EmbeddingLayer",
    "create_sinusoidal_embeddings",
    "EmbeddingBag",
    "EmbeddingBagFunction",
]

POS_ENCODINGS = ("learned", "sinusoidal", None)


# ----- validation helpers ----------------------------------------------------

def _token_ids(indices: Any, vocab_size: int) -> np.ndarray:
    """Validate token ids and return them as an int64 array of the same shape.

    Ids arrive as float32 values (Tensor storage), so integrality is checked
    first: 0.5, nan and inf are rejected before any range check.
    """
    ids = np.asarray(indices.data if isinstance(indices, Tensor) else indices)
    if ids.dtype.kind not in "iu":
        ids = ids.astype(np.float64)
        bad = ~np.isfinite(ids) | (ids != np.trunc(ids))
        if bad.any():
            raise ValueError(f"token ids must be finite integers, got {ids[bad][0]!r}")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(
            f"token id out of range: got min={ids.min()}, max={ids.max()}, "
            f"valid ids are 0..{vocab_size - 1}"
        )
    return ids.astype(np.int64)


def _start_position(start_pos: Any) -> int:
    """Return ``start_pos`` as an int; it must be a non-negative integer (not a bool)."""
    if isinstance(start_pos, (bool, np.bool_)) or not isinstance(start_pos, (int, np.integer)):
        raise ValueError(f"start_pos must be an integer, got {start_pos!r}")
    if start_pos < 0:
        raise ValueError(f"start_pos must be non-negative, got {start_pos}")
    return int(start_pos)


def _check_fits(start_pos: int, seq_len: int, max_seq_len: int) -> None:
    if start_pos + seq_len > max_seq_len:
        raise ValueError(
            f"positions {start_pos}..{start_pos + seq_len - 1} exceed "
            f"max_seq_len={max_seq_len} (start_pos={start_pos}, seq_len={seq_len})"
        )


def _check_positive(**sizes: int) -> None:
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


# ----- token embeddings -------------------------------------------------------

class EmbeddingFunction(Function):
    """Row gather ``weight[indices]``; backward scatter-adds into the table.

    Usage: ``EmbeddingFunction.apply(weight, indices=int_array)``.
    """

    def forward(self, weight: np.ndarray, indices: Any) -> np.ndarray:
        if weight.ndim != 2:
            raise ValueError(f"weight must be 2-D (vocab_size, embed_dim), got shape {weight.shape}")
        self.weight_shape = weight.shape
        self.ids = _token_ids(indices, weight.shape[0])
        return np.take(weight, self.ids, axis=0)  # a copy, bit-exact rows

    def backward(self, grad_output: np.ndarray) -> tuple[np.ndarray]:
        grad_weight = np.zeros(self.weight_shape, dtype=np.float32)
        np.add.at(grad_weight, self.ids, grad_output)  # repeated ids accumulate
        return (grad_weight,)


class Embedding:
    """A learnable lookup table mapping token ids to dense vectors."""

    def __init__(self, vocab_size: int, embed_dim: int) -> None:
        _check_positive(vocab_size=vocab_size, embed_dim=embed_dim)
        self.vocab_size = int(vocab_size)
        self.embed_dim = int(embed_dim)
        limit = math.sqrt(6.0 / (self.vocab_size + self.embed_dim))  # Xavier uniform
        self.weight = Tensor(
            np.random.uniform(-limit, limit, (self.vocab_size, self.embed_dim)),
            requires_grad=True,
        )

    def forward(self, indices: Tensor) -> Tensor:
        """Look up rows: ids of any shape S give a Tensor of shape S + (embed_dim,)."""
        ids = _token_ids(indices, self.vocab_size)
        return EmbeddingFunction.apply(self.weight, indices=ids)

    def __call__(self, indices: Tensor) -> Tensor:
        return self.forward(indices)

    def parameters(self) -> list[Tensor]:
        return [self.weight]

    def __repr__(self) -> str:
        return f"Embedding(vocab_size={self.vocab_size}, embed_dim={self.embed_dim})"


# ----- positional encodings ---------------------------------------------------

class PositionalEncoding:
    """Learned positional embeddings: one trainable vector per position."""

    def __init__(self, max_seq_len: int, embed_dim: int) -> None:
        _check_positive(max_seq_len=max_seq_len, embed_dim=embed_dim)
        self.max_seq_len = int(max_seq_len)
        self.embed_dim = int(embed_dim)
        limit = math.sqrt(2.0 / self.embed_dim)
        self.position_embeddings = Tensor(
            np.random.uniform(-limit, limit, (self.max_seq_len, self.embed_dim)),
            requires_grad=True,
        )

    def forward(self, x: Tensor, start_pos: int = 0) -> Tensor:
        """Add positions ``start_pos .. start_pos+seq-1`` to x of shape (batch, seq, D)."""
        if x.ndim != 3:
            raise ValueError(f"expected x of shape (batch, seq, embed_dim), got {x.shape}")
        if x.shape[2] != self.embed_dim:
            raise ValueError(f"embed_dim mismatch: x has {x.shape[2]}, expected {self.embed_dim}")
        start = _start_position(start_pos)
        seq_len = x.shape[1]
        _check_fits(start, seq_len, self.max_seq_len)
        return x + self.position_embeddings[start:start + seq_len]  # broadcast over batch

    def __call__(self, x: Tensor, start_pos: int = 0) -> Tensor:
        return self.forward(x, start_pos)

    def parameters(self) -> list[Tensor]:
        return [self.position_embeddings]

    def __repr__(self) -> str:
        return f"PositionalEncoding(max_seq_len={self.max_seq_len}, embed_dim={self.embed_dim})"


def _compute_sinusoidal_table(max_len: int, embed_dim: int) -> np.ndarray:
    """Sinusoidal table (max_len, embed_dim): sin at even columns, cos at odd.

    Column 2i is sin(pos * w_i) and column 2i+1 is cos(pos * w_i), with
    w_i = exp(-(2i) * ln(10000) / embed_dim). An odd embed_dim has one more
    sine column than cosine columns. Computed in float64, returned as float32.
    """
    if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) or max_len < 0:
        raise ValueError(f"max_len must be a non-negative integer, got {max_len!r}")
    _check_positive(embed_dim=embed_dim)
    positions = np.arange(max_len, dtype=np.float64)[:, np.newaxis]
    two_i = np.arange(0, embed_dim, 2, dtype=np.float64)
    angles = positions * np.exp(-two_i * math.log(10000.0) / embed_dim)
    table = np.empty((max_len, embed_dim), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, : embed_dim // 2])
    return table.astype(np.float32)


def create_sinusoidal_embeddings(max_seq_len: int, embed_dim: int) -> Tensor:
    """The sinusoidal table as a constant Tensor (no trainable parameters)."""
    return Tensor(_compute_sinusoidal_table(max_seq_len, embed_dim), requires_grad=False)


# ----- the complete input layer ----------------------------------------------

class EmbeddingLayer:
    """Token embedding (optionally scaled by sqrt(D)) plus positional encoding."""

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int,
        max_seq_len: int = 512,
        pos_encoding: str | None = "learned",
        scale_embeddings: bool = False,
    ) -> None:
        if not (pos_encoding is None or (isinstance(pos_encoding, str) and pos_encoding in POS_ENCODINGS)):
            raise ValueError(
                f"pos_encoding must be 'learned', 'sinusoidal' or None, got {pos_encoding!r}"
            )
        _check_positive(max_seq_len=max_seq_len)
        self.vocab_size = int(vocab_size)
        self.embed_dim = int(embed_dim)
        self.max_seq_len = int(max_seq_len)
        self.scale_embeddings = bool(scale_embeddings)
        self.pos_encoding_type = pos_encoding
        self.token_embedding = Embedding(vocab_size, embed_dim)
        if pos_encoding == "learned":
            self.pos_encoding: PositionalEncoding | Tensor | None = PositionalEncoding(max_seq_len, embed_dim)
        elif pos_encoding == "sinusoidal":
            self.pos_encoding = create_sinusoidal_embeddings(max_seq_len, embed_dim)
        else:
            self.pos_encoding = None

    def forward(self, tokens: Tensor, start_pos: int = 0) -> Tensor:
        """tokens (seq,) or (batch, seq) -> embeddings (seq, D) or (batch, seq, D)."""
        if tokens.ndim not in (1, 2):
            raise ValueError(f"tokens must be 1-D (seq,) or 2-D (batch, seq), got shape {tokens.shape}")
        start = _start_position(start_pos)
        seq_len = tokens.shape[-1]
        _check_fits(start, seq_len, self.max_seq_len)

        unbatched = tokens.ndim == 1
        if unbatched:
            tokens = tokens.reshape(1, seq_len)
        x = self.token_embedding(tokens)  # reads token_embedding.weight now
        if self.scale_embeddings:
            x = x * math.sqrt(self.embed_dim)
        x = self._add_positions(x, start)
        return x.reshape(x.shape[1:]) if unbatched else x

    def _add_positions(self, x: Tensor, start: int) -> Tensor:
        if self.pos_encoding_type == "learned":
            return self.pos_encoding(x, start)
        if self.pos_encoding_type == "sinusoidal":
            rows = self.pos_encoding.data[start:start + x.shape[1]]
            return x + Tensor(rows)  # a fresh constant: the table never gets a gradient
        return x

    def __call__(self, tokens: Tensor, start_pos: int = 0) -> Tensor:
        return self.forward(tokens, start_pos)

    def parameters(self) -> list[Tensor]:
        params = [self.token_embedding.weight]
        if self.pos_encoding_type == "learned":
            params.append(self.pos_encoding.position_embeddings)
        return params

    def __repr__(self) -> str:
        return (
            f"EmbeddingLayer(vocab_size={self.vocab_size}, embed_dim={self.embed_dim}, "
            f"max_seq_len={self.max_seq_len}, pos_encoding={self.pos_encoding_type!r}, "
            f"scale_embeddings={self.scale_embeddings})"
        )


# ----- optional extension: bags -------------------------------------------------

def _bag_bounds(offsets: Any, n: int, include_last_offset: bool) -> np.ndarray:
    """Checked offsets as (start, end) per bag: start at 0, never decrease, never pass n; the last bag runs
    to n, or with ``include_last_offset`` the last offset is the end and must equal n. No offsets: no bag."""
    starts = _token_ids(offsets, n + 1)
    if starts.ndim == 1 and not starts.size and not include_last_offset:
        return np.zeros((0, 2), dtype=np.int64)  # no bag
    if starts.ndim != 1 or not starts.size or starts[0] != 0 or np.any(np.diff(starts) < 0):
        raise ValueError(f"offsets must be 1-D, start at 0 and never decrease, got {starts.tolist()}")
    if include_last_offset:
        if starts[-1] != n:
            raise ValueError(f"with include_last_offset the last offset must be {n}, got {starts.tolist()}")
        return np.stack([starts[:-1], starts[1:]], axis=1)
    return np.stack([starts, np.append(starts[1:], n)], axis=1)


class EmbeddingBagFunction(Function):
    """Each bag's rows ``weight[ids[start:end]]`` reduced to one row (sum, mean or max); padding rows are not
    counted and a bag with no counted row gives zeros. Computed in float64, rounded to float32 once.

    Usage: ``EmbeddingBagFunction.apply(weight, [per_sample_weights,] ids=..., bounds=..., mode=..., padding_idx=...)``.
    """

    def forward(self, weight: np.ndarray, *weights: np.ndarray, ids, bounds, mode, padding_idx=None) -> np.ndarray:
        self.weight_shape, self.ids, self.bounds, self.mode = weight.shape, ids, bounds, mode
        self.weighted = bool(weights)
        self.w = weights[0].astype(np.float64) if weights else np.ones(ids.shape)
        self.counted = ids != padding_idx if padding_idx is not None else np.ones(ids.shape, dtype=bool)
        self.rows = weight[ids].astype(np.float64)
        self.divisors = np.array([self.divisor(b, positions) for b, positions in enumerate(self._bags())])
        self.argmax: dict[int, np.ndarray] = {}
        self.out = np.zeros((len(bounds), weight.shape[1]))
        for b, positions in enumerate(self._bags()):
            self.out[b] = self.pool(b, positions)
        return self.out.astype(np.float32)

    def divisor(self, b: int, positions: np.ndarray) -> float:
        """What bag b's weighted sum is divided by: in mode mean the sum of its counted weights (the count
        without weights), else 1."""
        return float(self.w[positions].sum()) if self.mode == "mean" else 1.0

    def pool(self, b: int, positions: np.ndarray) -> np.ndarray:
        """Bag b's row (float64): zeros when nothing counts or its weights sum to zero."""
        if not positions.size or self.divisors[b] == 0:
            return np.zeros(self.weight_shape[1])
        if self.mode == "max":
            self.argmax[b] = positions[np.argmax(self.rows[positions], axis=0)]  # the first position holding it
            return self.rows[positions].max(axis=0)
        return self.w[positions] @ self.rows[positions] / self.divisors[b]

    def _bags(self) -> list[np.ndarray]:
        """The counted positions of each bag, in bag order."""
        return [start + np.flatnonzero(self.counted[start:end]) for start, end in self.bounds]

    def backward(self, grad_output: np.ndarray) -> tuple[np.ndarray, ...]:
        g = grad_output.astype(np.float64)
        grad_weight = np.zeros(self.weight_shape)
        grad_w = np.zeros(self.ids.shape)
        for b, positions in enumerate(self._bags()):
            if not positions.size or self.divisors[b] == 0:
                continue  # a constant zero row
            if self.mode == "max":
                np.add.at(grad_weight, (self.ids[self.argmax[b]], np.arange(g.shape[1])), g[b])
                continue
            scale = self.w[positions] / self.divisors[b]
            np.add.at(grad_weight, self.ids[positions], scale[:, None] * g[b])
            centred = self.rows[positions] - (self.out[b] if self.mode == "mean" else 0.0)
            grad_w[positions] = centred @ g[b] / self.divisors[b]
        grad_weight = grad_weight.astype(np.float32)
        return (grad_weight, grad_w.astype(np.float32)) if self.weighted else (grad_weight,)


class EmbeddingBag:
    """Bags of ids, each reduced to one vector: PyTorch's ``nn.EmbeddingBag`` on this package's Tensor.

    ``forward(indices, offsets)``: 1-D ids with bag starts, or 2-D ids (one bag per row) without offsets;
    ``per_sample_weights`` (the ids' shape) scale each row in the modes of ``WEIGHTED_MODES``.
    """

    MODES = ("sum", "mean", "max")
    WEIGHTED_MODES = ("sum", "mean")  # mean divides by the bag's sum of weights

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int,
        mode: str = "mean",
        padding_idx: int | None = None,
        include_last_offset: bool = False,
    ) -> None:
        if not isinstance(mode, str) or mode not in self.MODES:
            raise ValueError(f"mode must be one of {self.MODES}, got {mode!r}")
        _check_positive(vocab_size=vocab_size, embed_dim=embed_dim)
        self.vocab_size, self.embed_dim, self.mode = int(vocab_size), int(embed_dim), mode
        limit = math.sqrt(6.0 / (self.vocab_size + self.embed_dim))  # Xavier uniform, as Embedding
        self.weight = Tensor(
            np.random.uniform(-limit, limit, (self.vocab_size, self.embed_dim)), requires_grad=True
        )
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, (int, np.integer)):
                raise ValueError(f"padding_idx must be an integer or None, got {padding_idx!r}")
            if not -self.vocab_size <= padding_idx < self.vocab_size:
                raise ValueError(f"padding_idx must be in [-{vocab_size}, {vocab_size}), got {padding_idx}")
            padding_idx = int(padding_idx) % self.vocab_size  # negative counts from the end
        if not isinstance(include_last_offset, (bool, np.bool_)):
            raise ValueError(f"include_last_offset must be True or False, got {include_last_offset!r}")
        self.padding_idx, self.include_last_offset = padding_idx, bool(include_last_offset)

    def forward(self, indices: Tensor, offsets: Any = None, per_sample_weights: Tensor | None = None) -> Tensor:
        """Bags -> a Tensor (bags, embed_dim); gradients reach ``weight`` and ``per_sample_weights``."""
        ids = _token_ids(indices, self.vocab_size)
        if (ids.ndim == 2) == (offsets is not None) or ids.ndim not in (1, 2):
            raise ValueError(f"give 1-D ids with offsets or 2-D ids without, got ids {ids.shape} and offsets {offsets is not None}")
        if ids.ndim == 2:  # one bag per row
            starts = np.arange(ids.shape[0]) * ids.shape[1]
            bounds = np.stack([starts, starts + ids.shape[1]], axis=1)
        else:
            bounds = _bag_bounds(offsets, ids.size, self.include_last_offset)
        inputs = [self.weight]
        if per_sample_weights is not None:
            if self.mode not in self.WEIGHTED_MODES or tuple(per_sample_weights.shape) != ids.shape:
                raise ValueError(f"per_sample_weights of shape {ids.shape} work in modes {self.WEIGHTED_MODES} only")
            inputs.append(per_sample_weights.reshape(ids.size))
        return self.reduce(inputs, ids.reshape(-1), bounds)

    def reduce(self, inputs: list[Tensor], ids: np.ndarray, bounds: np.ndarray) -> Tensor:
        """The bags of checked ids reduced by the differentiable op (weight and per-sample weights as inputs)."""
        return EmbeddingBagFunction.apply(*inputs, ids=ids, bounds=bounds, mode=self.mode, padding_idx=self.padding_idx)

    def __call__(self, indices: Tensor, offsets: Any = None, per_sample_weights: Tensor | None = None) -> Tensor:
        return self.forward(indices, offsets, per_sample_weights)

    def parameters(self) -> list[Tensor]:
        return [self.weight]
