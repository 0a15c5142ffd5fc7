"""Deviations measured in real frameworks (issue 10), each a mutant with the framework and behaviour it comes from."""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.model.arrays import Array, Config, Table
from embconf.mutants.base import Mutant, mutant, register
from embconf.mutants.compose import BASE as PARTS
from embconf.mutants.compose import layer_forward
from embconf.mutants.lookup import _ids_no_range_check, _scatter
from embconf.mutants.sinusoid import sinusoid
from embconf.reference import learned_positions_forward as ref_positions
from embconf.reference.errors import EmbeddingError
from embconf.reference.layer import resolve_config, token_scale
from embconf.reference.lookup import check_grad_shape, validate_ids
from embconf.reference.positions import check_positions_input, check_start_pos
from embconf.reference.sinusoid import BASE

FWD, BWD, POS, LAYER = "embedding_forward", "embedding_backward", "learned_positions_forward", "embedding_layer_forward"
RANGE = "raise index_out_of_range for any id < 0 or >= vocab_size, before indexing (EMB-IDX-1/2)"
INT64 = np.iinfo(np.int64)


@mutant(
    "fwd.missing_id_zero_row",
    "gives an all-zero row for an id that indexes no row (a masked sum over a one-hot of the ids)",
    RANGE,
    FWD,
    source="tinygrad nn.Embedding: (one_hot(ids) * weight).sum() matches no row for an id outside [0, V)",
)
def _missing_id_zero_row(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    index = _ids_no_range_check(ids)
    inside = (index >= 0) & (index < weight.shape[0])
    out = weight[np.where(inside, index, 0)]
    out[~inside] = 0
    return out


@mutant(
    "bwd.drops_missing_ids",
    "silently drops the gradient of an id that indexes no row instead of raising",
    RANGE + "; the backward checks the ids too",
    BWD,
    source="JAX/Flax: the scatter behind jnp.take's gradient drops out-of-bounds updates (mode='fill' / 'drop')",
)
def _drops_missing_ids(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    index = _ids_no_range_check(ids)
    check_grad_shape(grad_output, index.shape + weight.shape[1:])
    flat, grad = index.reshape(-1), grad_output.reshape(-1, weight.shape[1]).astype(np.float64)
    keep = (flat >= 0) & (flat < weight.shape[0])
    total = np.zeros(weight.shape, dtype=np.float64)
    np.add.at(total, flat[keep], grad[keep])
    return total.astype(weight.dtype)


def _saturated(ids: np.ndarray) -> np.ndarray:
    """A saturating float-to-int cast: NaN -> 0, +-inf -> INT64 max/min, fractions truncated."""
    ids = np.asarray(ids)
    if ids.dtype.kind != "f":
        return ids
    with np.errstate(invalid="ignore"):
        return np.trunc(
            np.nan_to_num(ids.astype(np.float64), nan=0.0, posinf=float(INT64.max), neginf=float(INT64.min))
        ).astype(np.int64)


@mutant(
    "fwd.saturating_cast",
    "casts float ids with a saturating conversion (NaN -> row 0, +-inf -> INT_MAX/INT_MIN, 2.7 -> 2) before the range check",
    "check float ids are finite integers first and raise invalid_index (EMB-IDX-4); only then cast",
    FWD,
    source="XLA's convert (jnp.asarray(ids, int32) in Flax/Keras-JAX) saturates NaN and infinities instead of failing",
)
def _saturating_cast(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return weight[validate_ids(_saturated(ids), weight.shape[0])]


@mutant(
    "bwd.float_truncated",
    "the backward casts float ids with astype(int): 0.5 and 1.5 scatter into rows 0 and 1",
    "the backward checks float ids as the forward does: finite integers only, else invalid_index (EMB-IDX-4)",
    BWD,
    source="Keras layers.Embedding: inputs cast with ops.cast(inputs, 'int32'), which truncates float ids",
    mistake="fwd.float_truncated",
)
def _backward_float_truncated(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.dtype.kind == "f" and np.isfinite(ids).all():
        ids = np.trunc(ids).astype(np.int64)
    index = validate_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, index.shape + weight.shape[1:])
    return _scatter(weight, index, grad_output).astype(weight.dtype)


def _dynamic_start(start_pos: Any, seq_len: int, max_len: int, wrap_negative: bool) -> int:
    """lax.dynamic_slice's start: clamped into [0, L - T] (a negative start counted from the end first)."""
    if isinstance(start_pos, bool) or not isinstance(start_pos, (int, np.integer)):
        return check_start_pos(start_pos, seq_len, max_len)
    start = int(start_pos) + (max_len if wrap_negative and start_pos < 0 else 0)
    if seq_len > max_len:
        raise EmbeddingError("sequence_too_long", f"sequence length {seq_len} exceeds max_seq_len {max_len}")
    return min(max(start, 0), max_len - seq_len)


def _positions_window(wrap_negative: bool):
    """learned_positions_forward with dynamic_slice's window: clamped into the table, not rejected."""

    def forward(table: np.ndarray, x: np.ndarray, start_pos: Any = 0) -> np.ndarray:
        integral = isinstance(start_pos, (int, np.integer)) and not isinstance(start_pos, bool)
        if not integral or (start_pos < 0 and not wrap_negative):
            return ref_positions(table, x, start_pos)  # the reference's checks raise
        check_positions_input(table, x, 0)
        return ref_positions(table, x, _dynamic_start(start_pos, x.shape[1], table.shape[0], wrap_negative))

    return forward


register(
    Mutant(
        "pos.window_shifted_back",
        "shifts the window back to fit when start_pos + T overruns the table (rows L-T .. L-1) instead of raising",
        "raise sequence_too_long when start_pos + T > max_seq_len (EMB-POS-6); never move the window",
        {POS: _positions_window(wrap_negative=False)},
        source="jax.lax.dynamic_slice (Flax position embeddings): an out-of-bounds start is clamped to L - T",
    )
)
register(
    Mutant(
        "pos.negative_start_from_end",
        "counts a negative start_pos from the end of the table (then clamps the window into it) instead of raising",
        "reject start_pos < 0 with invalid_start_pos (EMB-POS-7)",
        {POS: _positions_window(wrap_negative=True)},
        source="jax.lax.dynamic_slice / NumPy-style indexing: a negative start indexes from the end",
    )
)


@mutant(
    "layer.fractional_start",
    "accepts a fractional start_pos and computes sinusoid positions start_pos + t as fractions",
    "check that start_pos is an integer (not bool, not float) and raise invalid_start_pos (EMB-POS-7, EMB-LAY-9)",
    LAYER,
    source="keras_hub SinusoidalPositionEncoding and HF sinusoid helpers: positions = start_index + arange(T) in floating point",
)
def _fractional_start(
    config: Config, token_weight: Array, position_table: Table, tokens: Array, start_pos: Any = 0
) -> np.ndarray:
    cfg = resolve_config(config)
    if isinstance(start_pos, float) and cfg["pos_encoding"] == "sinusoidal" and start_pos >= 0:
        seq = tokens.shape[-1]
        batched = tokens if tokens.ndim == 2 else tokens[None]
        rows = token_weight.astype(np.float64)[validate_ids(batched, cfg["vocab_size"])] * token_scale(
            cfg["embed_dim"], cfg["scale_embeddings"]
        )
        out = (rows + _fractional_sinusoid(start_pos, seq, cfg["embed_dim"])[None]).astype(token_weight.dtype)
        return out if tokens.ndim == 2 else out[0]
    return layer_forward(PARTS, config, token_weight, position_table, tokens, start_pos)


def _fractional_sinusoid(start: float, seq_len: int, dim: int) -> np.ndarray:
    pairs = np.arange((dim + 1) // 2, dtype=np.float64)
    angles = (start + np.arange(seq_len, dtype=np.float64))[:, None] * BASE ** (-2.0 * pairs / dim)
    table = np.empty((seq_len, dim))
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles[:, : dim // 2])
    return table


@mutant(
    "layer.ids_unchecked",
    "the layer indexes its table with the tokens unchecked: a negative token wraps to a row from the end, one >= V fails inside numpy",
    "check the tokens as the lookup does and raise index_out_of_range (EMB-IDX-1/2, EMB-LAY-7)",
    LAYER,
    source="Keras / keras_hub TokenAndPositionEmbedding on the JAX backend: ops.take on the raw ids",
)
def _layer_ids_unchecked(
    config: Config, token_weight: Array, position_table: Table, tokens: Array, start_pos: Any = 0
) -> np.ndarray:
    ids = np.asarray(tokens)
    if ids.dtype.kind in "iu" and ids.size:
        ids = np.where(ids < 0, ids + token_weight.shape[0], ids)  # Python's negative indexing
        token_weight[ids]  # an id >= V raises numpy's IndexError here, untyped
    return layer_forward(PARTS, config, token_weight, position_table, ids, start_pos)


def _float32_angles(max_len: int, dim: int) -> np.ndarray:
    """The canonical formula evaluated in float32 throughout (then widened)."""
    f32 = np.float32
    pairs = np.arange((dim + 1) // 2, dtype=f32)
    angles = np.arange(max_len, dtype=f32)[:, None] * np.power(f32(BASE), f32(-2.0) * pairs / f32(dim))
    table = np.empty((max_len, dim), dtype=f32)
    table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles[:, : dim // 2])
    return table.astype(np.float64)


def _tensor2tensor_unguarded(max_len: int, dim: int) -> np.ndarray:
    """tensor2tensor's timing signal with log(base) / (h - 1) unguarded: NaN and inf for D = 2 or 3."""
    half = dim // 2
    with np.errstate(divide="ignore", invalid="ignore"):
        increment = np.log(BASE) / np.float64(half - 1) if half != 1 else np.float64(np.inf)
        angles = np.arange(max_len, dtype=np.float64)[:, None] * np.exp(-np.arange(half, dtype=np.float64) * increment)
    blocks = [np.sin(angles), np.cos(angles)] + ([np.zeros((max_len, 1))] if dim % 2 else [])
    return np.concatenate(blocks, axis=1)


def _cos_sin(max_len: int, dim: int) -> np.ndarray:
    """[cos block | sin block] with the canonical frequencies; the cos block has ceil(D/2) columns."""
    pairs = np.arange((dim + 1) // 2, dtype=np.float64)
    angles = np.arange(max_len, dtype=np.float64)[:, None] * BASE ** (-2.0 * pairs / dim)
    return np.concatenate([np.cos(angles), np.sin(angles[:, : dim // 2])], axis=1)


sinusoid(
    "sin.float32_precision",
    "computes a float64 table's angles in float32: the float64 table carries float32 errors",
    "compute positions, frequencies and angles in float64 and round once to the requested dtype (EMB-SIN-5)",
    _float32_angles,
    source="keras_hub SinusoidalPositionEncoding and HF helpers build the table in the compute dtype (float32) whatever the output dtype",
    family={"precision": "float32"},
)
sinusoid(
    "sin.small_dim_nan",
    "divides log(10000) by h - 1 with h = D // 2 unguarded: D = 2 or 3 gives a table of NaN",
    "guard h - 1 = 0 (tensor2tensor uses max(h - 1, 1)), or use the spec's 10000^(-2k/D) (EMB-SIN-2, EMB-SIN-3)",
    _tensor2tensor_unguarded,
    source="fairseq SinusoidalPositionalEmbedding / HF get_timing_signal: math.log(10000) / (half_dim - 1) with half_dim = 1",
)
sinusoid(
    "sin.cos_sin",
    "concatenates a cosine block and a sine block ([cos | sin]) instead of interleaving sin and cos",
    "interleave: sin at column 2k, cos at 2k+1 (EMB-SIN-2)",
    _cos_sin,
    source="HF Musicgen MusicgenSinusoidalPositionalEmbedding: torch.cat([cos, sin], dim=1)",
    family={"layout": "[cos | sin]"},
)
