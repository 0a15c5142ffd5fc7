"""Mistakes of the spec 1.1 options (padding_idx, max_norm, scale_grad_by_freq) and of half precision.

Each mutant takes the reference's signature, optional inputs included, and gets one
rule of spec sections 12 and 13 wrong; everything else is the reference's.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from embconf.model.dtypes import numpy_dtype
from embconf.mutants.base import Mutant, mutant, register
from embconf.reference import embedding_backward as ref_backward
from embconf.reference import embedding_forward as ref_forward
from embconf.reference.lookup import check_grad_shape, validate_ids
from embconf.reference.options import (
    RENORM_EPSILON,
    apply_options,
    check_flag,
    check_renorm_args,
    renormed,
    resolve_padding_idx,
    row_norms,
)
from embconf.reference.sinusoid import BASE

FWD, BWD, NRM, SIN = "embedding_forward", "embedding_backward", "embedding_forward_max_norm", "sinusoidal_table"


def _scatter(weight: np.ndarray, index: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    total = np.zeros(weight.shape, dtype=np.float64)
    np.add.at(total, index.reshape(-1), grad_output.reshape(-1, weight.shape[1]).astype(np.float64))
    return total


def _checked(
    weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray, padding_idx: Any, scale_grad_by_freq: Any
) -> tuple[np.ndarray, Optional[int], bool]:
    """(int64 ids, padding row, frequency flag) after the reference's checks of a backward call."""
    padding_row = resolve_padding_idx(padding_idx, weight.shape[0])
    by_freq = check_flag("scale_grad_by_freq", scale_grad_by_freq)
    index = validate_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, index.shape + weight.shape[1:])
    return index, padding_row, by_freq


# ----- padding_idx ------------------------------------------------------------------------------------------


@mutant(
    "opt.padding_grad_kept",
    "accepts padding_idx but still accumulates the padding row's gradient",
    "zero the padding row of the gradient after the scatter-add, however often the padding id occurs (EMB-PAD-2)",
    BWD,
)
def _padding_grad_kept(
    weight: np.ndarray,
    ids: np.ndarray,
    grad_output: np.ndarray,
    padding_idx: Any = None,
    scale_grad_by_freq: bool = False,
) -> np.ndarray:
    resolve_padding_idx(padding_idx, weight.shape[0])
    return ref_backward(weight, ids, grad_output, scale_grad_by_freq=scale_grad_by_freq)


def _in_range(padding_idx: Any, vocab: int) -> Any:
    """``padding_idx`` when it lies in [-V, V), else None (dropped without a word)."""
    return padding_idx if isinstance(padding_idx, int) and -vocab <= padding_idx < vocab else None


def _padding_range_unchecked_forward(
    weight: np.ndarray, ids: np.ndarray, padding_idx: Any = None, scale_grad_by_freq: bool = False
) -> np.ndarray:
    return ref_forward(weight, ids, _in_range(padding_idx, weight.shape[0]), scale_grad_by_freq)


def _padding_range_unchecked_backward(
    weight: np.ndarray,
    ids: np.ndarray,
    grad_output: np.ndarray,
    padding_idx: Any = None,
    scale_grad_by_freq: bool = False,
) -> np.ndarray:
    return ref_backward(weight, ids, grad_output, _in_range(padding_idx, weight.shape[0]), scale_grad_by_freq)


register(
    Mutant(
        "opt.padding_range_unchecked",
        "does not check that padding_idx lies in [-V, V): an out-of-range padding_idx is accepted, and pads nothing",
        "raise invalid_config for padding_idx outside [-V, V) (EMB-PAD-4)",
        {FWD: _padding_range_unchecked_forward, BWD: _padding_range_unchecked_backward},
        source="PaddlePaddle's embedding drops a padding_idx below -V silently (the paddle column of docs/matrix.md, EMB-PAD-4)",
    )
)


@mutant(
    "opt.padding_zeroed_forward",
    "returns zeros for the padding id in the forward (masking) instead of the stored row",
    "the forward returns the padding row as stored; padding_idx only stops its gradient (EMB-PAD-1)",
    FWD,
)
def _padding_zeroed_forward(
    weight: np.ndarray, ids: np.ndarray, padding_idx: Any = None, scale_grad_by_freq: bool = False
) -> np.ndarray:
    out = ref_forward(weight, ids, padding_idx, scale_grad_by_freq)
    row = resolve_padding_idx(padding_idx, weight.shape[0])
    if row is not None:
        out[validate_ids(ids, weight.shape[0]) == row] = 0
    return out


@mutant(
    "opt.padding_negative_unnormalised",
    "compares ids with a negative padding_idx as given, so -1 matches no id and row V-1 keeps its gradient",
    "normalise a negative padding_idx to padding_idx + V before use (EMB-PAD-3)",
    BWD,
)
def _padding_negative_unnormalised(
    weight: np.ndarray,
    ids: np.ndarray,
    grad_output: np.ndarray,
    padding_idx: Any = None,
    scale_grad_by_freq: bool = False,
) -> np.ndarray:
    index, _, by_freq = _checked(weight, ids, grad_output, padding_idx, scale_grad_by_freq)
    grad = apply_options(_scatter(weight, index, grad_output), index, None, by_freq)
    if padding_idx is not None and 0 <= padding_idx < weight.shape[0]:
        grad[padding_idx] = 0.0
    return grad.astype(weight.dtype)


# ----- max_norm ---------------------------------------------------------------------------------------------


@mutant(
    "opt.max_norm_every_row",
    "renormalises every row of the table over max_norm, not only the rows the ids reference",
    "rescale only the rows referenced by ids (torch.embedding_renorm_ takes the ids); leave the others untouched (EMB-NRM-3)",
    NRM,
)
def _max_norm_every_row(
    weight: np.ndarray, ids: np.ndarray, max_norm: float, norm_type: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    max_norm, norm_type = check_renorm_args(max_norm, norm_type)
    index = validate_ids(ids, weight.shape[0])
    after = renormed(weight, np.arange(weight.shape[0]), max_norm, norm_type)
    return after[index], after


@mutant(
    "opt.max_norm_after_lookup",
    "renormalises the gathered rows (a copy) after the lookup, so the table itself is never updated",
    "renormalise the referenced rows of the table in place before the lookup; the table after the call is an output (EMB-NRM-3)",
    NRM,
)
def _max_norm_after_lookup(
    weight: np.ndarray, ids: np.ndarray, max_norm: float, norm_type: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    max_norm, norm_type = check_renorm_args(max_norm, norm_type)
    index = validate_ids(ids, weight.shape[0])
    return renormed(weight, index, max_norm, norm_type)[index], weight.copy()


@mutant(
    "opt.max_norm_inclusive",
    "rescales rows whose norm equals max_norm too (norm >= max_norm)",
    "rescale only rows whose norm exceeds max_norm strictly (EMB-NRM-2)",
    NRM,
)
def _max_norm_inclusive(
    weight: np.ndarray, ids: np.ndarray, max_norm: float, norm_type: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    max_norm, norm_type = check_renorm_args(max_norm, norm_type)
    index = validate_ids(ids, weight.shape[0])
    after, rows = weight.copy(), np.unique(index)
    if rows.size:
        norms = row_norms(weight[rows], norm_type)
        over = norms >= max_norm
        after[rows[over]] = (
            weight[rows[over]].astype(np.float64) * (max_norm / (norms[over] + RENORM_EPSILON))[:, None]
        ).astype(weight.dtype)
    return after[index], after


@mutant(
    "opt.max_norm_always_l2",
    "ignores norm_type: measures every row's norm as the L2 norm (as tf.clip_by_norm does)",
    "measure the norm with the given norm_type p: (sum |x|^p)^(1/p) (EMB-NRM-4)",
    NRM,
    source="tf.nn.embedding_lookup(max_norm=...): clip_ops.clip_by_norm, always L2",
)
def _max_norm_always_l2(
    weight: np.ndarray, ids: np.ndarray, max_norm: float, norm_type: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    max_norm, _ = check_renorm_args(max_norm, norm_type)
    index = validate_ids(ids, weight.shape[0])
    after = renormed(weight, index, max_norm, 2.0)
    return after[index], after


@mutant(
    "opt.max_norm_unchecked",
    "accepts max_norm <= 0 instead of raising: the referenced rows are scaled by max_norm / norm (to zero for max_norm 0)",
    "check max_norm is a finite number > 0 and raise invalid_config otherwise (EMB-NRM-4)",
    NRM,
)
def _max_norm_unchecked(
    weight: np.ndarray, ids: np.ndarray, max_norm: float, norm_type: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    _, norm_type = check_renorm_args(1.0, norm_type)
    if not isinstance(max_norm, (int, float, np.integer, np.floating)) or isinstance(max_norm, bool):
        check_renorm_args(max_norm, norm_type)
    index = validate_ids(ids, weight.shape[0])
    after, rows = weight.copy(), np.unique(index)
    if rows.size:
        norms = row_norms(weight[rows], norm_type)
        over = norms > max_norm
        with np.errstate(all="ignore"):
            scale = float(max_norm) / (norms[over] + RENORM_EPSILON)
        after[rows[over]] = (weight[rows[over]].astype(np.float64) * scale[:, None]).astype(weight.dtype)
    return after[index], after


# ----- scale_grad_by_freq -----------------------------------------------------------------------------------


@mutant(
    "opt.freq_per_sequence",
    "counts each id's frequency within its own sequence instead of the whole batch",
    "count occurrences over all of ids (every sequence together) before dividing (EMB-FRQ-1)",
    BWD,
)
def _freq_per_sequence(
    weight: np.ndarray,
    ids: np.ndarray,
    grad_output: np.ndarray,
    padding_idx: Any = None,
    scale_grad_by_freq: bool = False,
) -> np.ndarray:
    index, padding_row, by_freq = _checked(weight, ids, grad_output, padding_idx, scale_grad_by_freq)
    if not by_freq or index.ndim < 2:
        return ref_backward(weight, ids, grad_output, padding_idx, scale_grad_by_freq)
    rows = index.reshape(-1, index.shape[-1])
    grads = grad_output.reshape(rows.shape + (weight.shape[1],)).astype(np.float64)
    total = np.zeros(weight.shape, dtype=np.float64)
    for seq, g in zip(rows, grads):
        counts = np.bincount(seq, minlength=weight.shape[0])
        np.add.at(total, seq, g / counts[seq][:, None])
    return apply_options(total, index, padding_row, False).astype(weight.dtype)


@mutant(
    "opt.freq_in_forward",
    "applies scale_grad_by_freq in the forward: repeated ids return rows divided by their count",
    "frequency scaling changes only the gradient; the forward copies rows unchanged (EMB-FRQ-2)",
    FWD,
)
def _freq_in_forward(
    weight: np.ndarray, ids: np.ndarray, padding_idx: Any = None, scale_grad_by_freq: bool = False
) -> np.ndarray:
    out = ref_forward(weight, ids, padding_idx, scale_grad_by_freq)
    if scale_grad_by_freq:
        index = validate_ids(ids, weight.shape[0])
        counts = np.bincount(index.reshape(-1), minlength=weight.shape[0])
        out = (out.astype(np.float64) / counts[index][..., None]).astype(weight.dtype)
    return out


# ----- half precision ---------------------------------------------------------------------------------------


@mutant(
    "half.sequential_accumulation",
    "accumulates repeated ids' gradients in the table's own dtype, one term after another (as PyTorch's CPU backward does in bfloat16)",
    "accumulate repeated ids in float32 or wider and round once; a bfloat16 running sum stops growing at 256 (EMB-HLF-3)",
    BWD,
)
def _sequential_accumulation(
    weight: np.ndarray,
    ids: np.ndarray,
    grad_output: np.ndarray,
    padding_idx: Any = None,
    scale_grad_by_freq: bool = False,
) -> np.ndarray:
    index, padding_row, by_freq = _checked(weight, ids, grad_output, padding_idx, scale_grad_by_freq)
    total = np.zeros(weight.shape, dtype=weight.dtype)
    for row, g in zip(index.reshape(-1), grad_output.reshape(-1, weight.shape[1])):
        total[row] = total[row] + g  # rounded to the dtype at every step
    return apply_options(total.astype(np.float64), index, padding_row, by_freq).astype(weight.dtype)


@mutant(
    "half.positions_in_dtype",
    "builds positions in the requested dtype (arange(max_len, dtype)): float16 positions stop increasing at 2048, bfloat16 ones at 256",
    "compute positions and angles in float32 or wider and round the table once (EMB-HLF-4)",
    SIN,
)
def _positions_in_dtype(max_len: int, embed_dim: int, dtype: str = "float32") -> np.ndarray:
    positions = np.arange(max_len, dtype=np.float64).astype(numpy_dtype(dtype)).astype(np.float64)
    table = np.empty((max_len, embed_dim))
    pairs = np.arange((embed_dim + 1) // 2, dtype=np.float64)
    angles = positions[:, None] * BASE ** (-2.0 * pairs / embed_dim)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, : embed_dim // 2])
    return table.astype(numpy_dtype(dtype))
