"""Mistakes of the token lookup (forward gather) and of its gradient (backward scatter-add)."""

from __future__ import annotations

import numpy as np

from embconf.mutants.base import mutant
from embconf.reference import embedding_backward as ref_backward
from embconf.reference import embedding_backward_sparse as ref_sparse
from embconf.reference import embedding_forward as ref_forward
from embconf.reference.errors import EmbeddingError
from embconf.reference.lookup import check_grad_shape, validate_ids

FWD, BWD, SPARSE = "embedding_forward", "embedding_backward", "embedding_backward_sparse"


def _ids_no_range_check(ids: np.ndarray) -> np.ndarray:
    """int64 ids after the integrality check only (EMB-IDX-4): the range check is what these mutants get wrong."""
    ids = np.asarray(ids)
    if ids.dtype.kind == "f" and not np.all(np.isfinite(ids) & (ids == np.floor(ids))):
        raise EmbeddingError("invalid_index", "token ids must be finite integers")
    return ids.astype(np.int64)


def _scatter(weight: np.ndarray, index: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    """Per-row float64 sums of the upstream rows (the correct accumulation, before rounding)."""
    total = np.zeros(weight.shape, dtype=np.float64)
    np.add.at(total, index.reshape(-1), grad_output.reshape(-1, weight.shape[1]).astype(np.float64))
    return total


def _counts(weight: np.ndarray, index: np.ndarray) -> np.ndarray:
    """How often each row is used, as a (V, 1) column."""
    return np.bincount(index.reshape(-1), minlength=weight.shape[0])[:, None]


def _checked(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    """The int64 ids, after the reference's checks of a backward call."""
    index = validate_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, index.shape + weight.shape[1:])
    return index


# ----- forward ---------------------------------------------------------------------------------------------


@mutant(
    "fwd.transposed",
    "gathers columns instead of rows (a (D, V) table, or weight[:, ids])",
    "index the first axis: weight[ids] gives one D-wide row per id, shape ids.shape + (D,)",
    FWD,
)
def _transposed(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return np.moveaxis(weight[:, validate_ids(ids, weight.shape[0])], 0, -1)


@mutant(
    "fwd.off_by_one",
    "treats ids as 1-based (weight[ids - 1]): id 0 wraps to the last row",
    "token ids are 0-based: id i selects row i; do not shift them",
    FWD,
)
def _off_by_one(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return weight[validate_ids(ids, weight.shape[0]) - 1]


@mutant(
    "fwd.negative_wraps",
    "lets negative ids index from the end (-1 is the last row), as Python and Flax do",
    "reject ids < 0 with index_out_of_range (EMB-IDX-2) before indexing",
    FWD,
    mistake="fwd.negative_wraps",
)
def _negative_wraps(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    index = _ids_no_range_check(ids)
    if index.size and index.max() >= weight.shape[0]:
        raise EmbeddingError("index_out_of_range", "id too large")
    return weight[index]


@mutant(
    "fwd.clamped",
    "clamps out-of-range ids to [0, V-1] instead of rejecting them",
    "raise index_out_of_range for any id < 0 or >= vocab_size (EMB-IDX-1); clamping hides tokenizer/vocabulary mismatches",
    FWD,
    mistake="fwd.clamped",
)
def _clamped(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return weight[np.clip(_ids_no_range_check(ids), 0, weight.shape[0] - 1)]


@mutant(
    "fwd.nan_fill",
    "returns a NaN row for an out-of-range id (jnp.take's fill mode) instead of an error",
    "check 0 <= id < vocab_size and raise index_out_of_range (EMB-IDX-1/2) instead of filling",
    FWD,
)
def _nan_fill(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    index = _ids_no_range_check(ids)
    bad = (index < 0) | (index >= weight.shape[0])
    out = weight[np.where(bad, 0, index)].copy()
    out[bad] = np.nan
    return out


@mutant(
    "fwd.float_truncated",
    "casts float ids with astype(int), so 0.5 and 2.7 are truncated to rows 0 and 2",
    "before casting, check that float ids are finite integers (ids == floor(ids)) and raise invalid_index (EMB-IDX-4)",
    FWD,
    mistake="fwd.float_truncated",
)
def _float_truncated(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return ref_forward(weight, np.asarray(ids).astype(np.int64))


@mutant(
    "fwd.int32_wrap",
    "narrows ids to int32 before the range check, so 2^32 wraps to row 0",
    "check the range on the ids as given (int64), then narrow; an id >= vocab_size is index_out_of_range (EMB-IDX-1)",
    FWD,
)
def _int32_wrap(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    ids = np.asarray(ids)
    return ref_forward(weight, ids.astype(np.int32) if ids.dtype.kind in "iu" else ids)


@mutant(
    "fwd.id0_zero_row",
    "returns zeros for id 0, as if it were a padding id (padding_idx=0 / mask_zero)",
    "id 0 is an ordinary token: return its stored row; a padding row is a choice of the caller, not of the lookup",
    FWD,
    source="https://github.com/ibalazevic/TuckER/issues/17",
)
def _id0_zero_row(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    out = ref_forward(weight, ids)
    out[validate_ids(ids, weight.shape[0]) == 0] = 0
    return out


@mutant(
    "fwd.max_norm",
    "renormalises rows of norm > 1 to norm 1 before gathering (nn.Embedding max_norm=1)",
    "return the stored rows unchanged; max_norm is an optional renormalisation, not part of the lookup",
    FWD,
    source="https://github.com/pytorch/pytorch/issues/26596",
)
def _max_norm(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    rows = ref_forward(weight, ids).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        norms = np.linalg.norm(rows, axis=-1, keepdims=True)
        scale = np.where(norms > 1.0, 1.0 / (norms + 1e-7), 1.0)
    return (rows * scale).astype(weight.dtype)


@mutant(
    "fwd.float_ids_rejected",
    "rejects every float id container, even integer-valued float32 ids",
    "accept float ids whose values are finite integers (TinyTorch stores ids as float32, EMB-IDX-3); reject only 0.5, nan, inf",
    FWD,
)
def _float_ids_rejected(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    if np.asarray(ids).dtype.kind == "f":
        raise EmbeddingError("invalid_index", "token ids must be integers")
    return ref_forward(weight, ids)


@mutant(
    "fwd.negative_wrong_kind",
    "rejects a negative id as invalid_index instead of index_out_of_range",
    "a negative integer id is out of range: raise index_out_of_range (EMB-IDX-2); invalid_index is for non-integers",
    FWD,
)
def _negative_wrong_kind(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    try:
        return ref_forward(weight, ids)
    except EmbeddingError as exc:
        if exc.kind == "index_out_of_range" and (np.asarray(ids) < 0).any():
            raise EmbeddingError("invalid_index", "negative token id") from None
        raise


@mutant(
    "fwd.range_check_off_by_one",
    "checks id > vocab_size instead of id >= vocab_size, so id V reaches the indexing and crashes",
    "valid ids are 0 .. vocab_size - 1: reject id >= vocab_size with index_out_of_range (EMB-IDX-1)",
    FWD,
)
def _range_check_off_by_one(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    index = validate_ids(ids, weight.shape[0] + 1)
    return weight[index]


# ----- backward --------------------------------------------------------------------------------------------


@mutant(
    "bwd.overwrite",
    "indexed assignment (grad[ids] = g, or grad[ids] += g) instead of accumulation",
    "use np.add.at(grad, ids, g): indexed assignment keeps only one of a repeated id's gradients",
    BWD,
)
def _overwrite(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    grad = np.zeros(weight.shape, dtype=weight.dtype)
    grad[_checked(weight, ids, grad_output).reshape(-1)] = grad_output.reshape(-1, weight.shape[1])
    return grad


@mutant(
    "bwd.untouched_ones",
    "starts the gradient from np.ones_like(weight): untouched rows are 1, not 0",
    "start from np.zeros_like(weight): a row no id selects gets exactly zero gradient (EMB-BWD-3)",
    BWD,
)
def _untouched_ones(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    index = _checked(weight, ids, grad_output)
    return (_scatter(weight, index, grad_output) + (_counts(weight, index) == 0)).astype(weight.dtype)


@mutant(
    "bwd.starts_from_weight",
    "accumulates into a copy of the table (weight.copy(), or np.empty_like holding stale values) instead of zeros",
    "allocate the gradient with np.zeros_like(weight), never empty_like or a copy of the weights (EMB-BWD-3)",
    BWD,
)
def _starts_from_weight(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    return (weight.astype(np.float64) + _scatter(weight, _checked(weight, ids, grad_output), grad_output)).astype(
        weight.dtype
    )


@mutant(
    "bwd.mean_duplicates",
    "averages the gradients of a repeated id instead of summing them",
    "sum every occurrence (np.add.at); the gradient of a row used k times is the sum of its k upstream rows (EMB-BWD-2)",
    BWD,
    equivalent=("bwd.scale_by_freq",),
)
def _mean_duplicates(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    index = _checked(weight, ids, grad_output)
    return (_scatter(weight, index, grad_output) / np.maximum(_counts(weight, index), 1)).astype(weight.dtype)


@mutant(
    "bwd.scale_by_freq",
    "applies scale_grad_by_freq: each row's gradient divided by its id's count in the batch",
    "scale_grad_by_freq is an option, off by default: the plain gradient is the unscaled sum over occurrences (EMB-BWD-2)",
    BWD,
    equivalent=("bwd.mean_duplicates",),
)
def _scale_by_freq(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    return _mean_duplicates(weight, ids, grad_output)


@mutant(
    "bwd.divided_by_count",
    "divides the whole gradient by the number of ids (a mean reduction over tokens)",
    "do not normalise: the table's gradient is the plain sum of upstream rows; a mean belongs to the loss, not the lookup",
    BWD,
)
def _divided_by_count(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    index = _checked(weight, ids, grad_output)
    return (_scatter(weight, index, grad_output) / max(index.size, 1)).astype(weight.dtype)


@mutant(
    "bwd.float64_dtype",
    "returns the float64 accumulator instead of a gradient of the table's dtype",
    "cast the result back: grad.astype(weight.dtype); the gradient has the table's dtype (EMB-BWD-1)",
    BWD,
)
def _float64_dtype(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    return _scatter(weight, _checked(weight, ids, grad_output), grad_output)


@mutant(
    "bwd.padding_row_zeroed",
    "forces row 0's gradient to zero, as if id 0 were padding_idx",
    "only zero a padding row when padding is asked for; by default id 0 gets its summed gradient like any row",
    BWD,
    source="https://github.com/ibalazevic/TuckER/issues/17",
)
def _padding_row_zeroed(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    grad = ref_backward(weight, ids, grad_output)
    grad[:1] = 0
    return grad


@mutant(
    "bwd.negative_wraps",
    "the backward skips the id check, so a negative id scatters into a row counted from the end",
    "validate ids in the backward too: id < 0 or >= V is index_out_of_range (EMB-IDX-1/2)",
    BWD,
    mistake="fwd.negative_wraps",
)
def _bwd_negative_wraps(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    index = _ids_no_range_check(ids)
    if index.size and index.max() >= weight.shape[0]:
        raise EmbeddingError("index_out_of_range", f"token id {index.max()} out of range")
    check_grad_shape(grad_output, index.shape + weight.shape[1:])
    return _scatter(weight, np.where(index < 0, index + weight.shape[0], index), grad_output).astype(weight.dtype)


@mutant(
    "bwd.clamped",
    "clamps out-of-range ids to [0, V-1] in the backward: their gradient lands on row 0 or row V-1 instead of an error",
    "raise index_out_of_range for any id < 0 or >= vocab_size in the backward too (EMB-IDX-1/2); never clamp",
    BWD,
    mistake="fwd.clamped",
)
def _bwd_clamped(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    index = np.clip(_ids_no_range_check(ids), 0, weight.shape[0] - 1)
    check_grad_shape(grad_output, index.shape + weight.shape[1:])
    return _scatter(weight, index, grad_output).astype(weight.dtype)


@mutant(
    "bwd.grad_shape_unchecked",
    "reshapes grad_output to (-1, D) without checking its shape, so a transposed upstream gradient goes unnoticed",
    "check grad_output.shape == ids.shape + (D,) and raise shape_mismatch otherwise (EMB-BWD-1); reshape(-1, D) hides the mistake",
    BWD,
)
def _grad_shape_unchecked(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    return _scatter(weight, validate_ids(ids, weight.shape[0]), grad_output).astype(weight.dtype)


@mutant(
    "bwd.sparse_uncoalesced",
    "returns the uncoalesced sparse gradient: one entry per occurrence, as torch's sparse=True does",
    "coalesce: np.unique(ids) as indices (sorted, unique) and the summed row of each (EMB-BWD-5)",
    SPARSE,
)
def _sparse_uncoalesced(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return _checked(weight, ids, grad_output).reshape(-1), grad_output.reshape(-1, weight.shape[1]).copy()


@mutant(
    "bwd.sparse_first_seen",
    "lists row-sparse indices in order of first appearance instead of sorted",
    "use np.unique(ids), which returns the indices sorted ascending (EMB-BWD-5)",
    SPARSE,
)
def _sparse_first_seen(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    flat = _checked(weight, ids, grad_output).reshape(-1)
    _, first = np.unique(flat, return_index=True)
    indices = flat[np.sort(first)]
    return indices, ref_backward(weight, ids, grad_output)[indices]


@mutant(
    "bwd.sparse_ids_dtype",
    "returns the row-sparse indices in the ids' own dtype (np.unique keeps int32 or float32)",
    "cast the indices: np.unique(ids).astype(np.int64), whatever the dtype of ids (EMB-BWD-5)",
    SPARSE,
)
def _sparse_ids_dtype(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    indices, values = ref_sparse(weight, ids, grad_output)
    return indices.astype(np.asarray(ids).dtype), values
