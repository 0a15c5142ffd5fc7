"""Mistakes of the memory arithmetic: units, dtypes, what is trainable, optimizer state, sparse gradients."""

from __future__ import annotations

from collections.abc import Mapping
from functools import wraps
from inspect import signature
from typing import Any, Callable

import numpy as np

from embconf.mutants.base import Mutant, mutant, register
from embconf.reference import adam_state_bytes as ref_adam
from embconf.reference import gradient_bytes as ref_gradient
from embconf.reference import parameter_count as ref_parameters
from embconf.reference import table_bytes as ref_table
from embconf.reference.layer import POS_ENCODINGS, resolve_config
from embconf.reference.memory import BYTES_PER_ELEMENT, MB, MIB, element_size

TABLE, PARAMS, GRAD, ADAM = "table_bytes", "parameter_count", "gradient_bytes", "adam_state_bytes"
UNITS = "MB = bytes / 10**6, MiB = bytes / 2**20, as floats (EMB-MEM-3)"


@mutant(
    "mem.mib_as_bytes",
    "reports the byte count as the MiB figure (forgot to divide by 2**20)",
    f"divide: {UNITS}",
    TABLE,
)
def _mib_as_bytes(num_rows: int, embed_dim: int, dtype: str) -> dict[str, Any]:
    result = ref_table(num_rows, embed_dim, dtype)
    return {**result, "mebibytes": float(result["bytes"])}


@mutant(
    "mem.mb_mib_swapped",
    "swaps MB and MiB: divides by 2**20 for MB and by 10**6 for MiB",
    f"MB is decimal and MiB binary: {UNITS}",
    TABLE,
)
def _mb_mib_swapped(num_rows: int, embed_dim: int, dtype: str) -> dict[str, Any]:
    result = ref_table(num_rows, embed_dim, dtype)
    return {**result, "megabytes": result["mebibytes"], "mebibytes": result["megabytes"]}


@mutant(
    "mem.mb_as_mib",
    "computes MB as bytes / 2**20 (1024**2): that is MiB; MB is bytes / 10**6",
    f"MB is decimal: {UNITS}",
    TABLE,
    source="cs249r_book tinytorch 11_embeddings: MB_TO_BYTES = 1024 * 1024, printed as MB",
)
def _mb_as_mib(num_rows: int, embed_dim: int, dtype: str) -> dict[str, Any]:
    result = ref_table(num_rows, embed_dim, dtype)
    return {**result, "megabytes": result["mebibytes"]}


@mutant(
    "mem.mb_floor",
    "uses integer division (bytes // 10**6), losing the fractional megabytes",
    f"use true division: {UNITS}",
    TABLE,
)
def _mb_floor(num_rows: int, embed_dim: int, dtype: str) -> dict[str, Any]:
    result = ref_table(num_rows, embed_dim, dtype)
    return {**result, "megabytes": result["bytes"] // MB, "mebibytes": result["bytes"] // MIB}


@mutant(
    "mem.bits",
    "counts bits per element (32 for float32) instead of bytes",
    "bytes per element: 4 for float32, 2 for float16/bfloat16, 8 for float64, 1 for int8 (EMB-MEM-2)",
    TABLE,
)
def _bits(num_rows: int, embed_dim: int, dtype: str) -> dict[str, Any]:
    size = num_rows * embed_dim * element_size(dtype) * 8
    return {"bytes": size, "megabytes": size / MB, "mebibytes": size / MIB}


def _retyped(fn: Callable[..., dict[str, Any]], choose: Callable[[str], str]) -> Callable[..., dict[str, Any]]:
    """``fn`` with its dtype argument replaced by ``choose(dtype)``."""

    @wraps(fn)
    def operation(*args: Any, **kwargs: Any) -> dict[str, Any]:
        bound = signature(fn).bind(*args, **kwargs)
        bound.arguments["dtype"] = choose(bound.arguments["dtype"])
        return fn(*bound.args, **bound.kwargs)

    return operation


def retyped(
    mutant_id: str,
    description: str,
    hint: str,
    choose: Callable[[str], str],
    *operations: Callable[..., dict[str, Any]],
    mistake: str = "",
) -> None:
    overrides = {op.__name__: _retyped(op, choose) for op in operations}
    register(Mutant(mutant_id, description, hint, overrides, mistake=mistake))


retyped(
    "mem.bfloat16_as_float32",
    "counts bfloat16 as 4 bytes per element (an unlisted dtype falling back to float32)",
    "bfloat16 has 2 bytes per element, like float16 (EMB-MEM-2)",
    lambda dtype: "float32" if dtype == "bfloat16" else dtype,
    ref_table,
    ref_gradient,
)
retyped(
    "mem.unknown_dtype_default",
    "treats an unknown dtype as 4 bytes per element instead of rejecting it",
    "look the dtype up in the spec's table and raise invalid_config for any other name (EMB-MEM-6)",
    lambda dtype: dtype if dtype in BYTES_PER_ELEMENT else "float32",
    ref_table,
    ref_adam,
)

retyped(
    "mem.every_dtype_float32",
    "counts 4 bytes per element whatever the dtype (a BYTES_PER_FLOAT32 constant): int8, float16 and float64 too",
    "look the element size up by dtype: 1 for int8, 2 for float16/bfloat16, 4 for float32, 8 for float64 (EMB-MEM-2)",
    lambda dtype: "float32",
    ref_table,
    ref_gradient,
    mistake="mem.every_dtype_float32",
)


@mutant(
    "mem.sinusoidal_trainable",
    "counts the sinusoidal table as trainable parameters",
    "a sinusoidal table is a constant: count it as non_trainable (stored) and only the token table as trainable (EMB-MEM-1)",
    PARAMS,
)
def _sinusoidal_trainable(config: Mapping[str, Any]) -> dict[str, int]:
    counts = ref_parameters(config)
    return {"trainable": counts["trainable"] + counts["non_trainable"], "non_trainable": 0}


@mutant(
    "mem.learned_not_counted",
    "forgets the learned position table in the trainable count",
    "a learned position table is trainable: add max_seq_len * embed_dim to the token table's count (EMB-MEM-1)",
    PARAMS,
)
def _learned_not_counted(config: Mapping[str, Any]) -> dict[str, int]:
    cfg = resolve_config(config)
    counts = ref_parameters(config)
    if cfg["pos_encoding"] == "learned":
        counts = {**counts, "trainable": cfg["vocab_size"] * cfg["embed_dim"]}
    return counts


@mutant(
    "mem.unknown_pos_as_none",
    "counts a layer of unknown pos_encoding ('rope') as one without positions instead of rejecting it",
    "validate pos_encoding first: anything but 'learned', 'sinusoidal' or 'none' is invalid_config (EMB-LAY-7)",
    PARAMS,
)
def _unknown_pos_as_none(config: Mapping[str, Any]) -> dict[str, int]:
    known = config.get("pos_encoding", "learned") in POS_ENCODINGS
    return ref_parameters(config if known else {**config, "pos_encoding": "none"})


@mutant(
    "mem.adam_single",
    "counts one Adam moment instead of two",
    "Adam keeps two tensors of the parameter's size (first and second moments): 2 * num_params * bytes (EMB-MEM-5)",
    ADAM,
)
def _adam_single(num_params: int, dtype: str) -> dict[str, int]:
    return {"bytes": ref_adam(num_params, dtype)["bytes"] // 2}


@mutant(
    "mem.adam_with_params",
    "counts three copies (the parameters and both moments) as Adam's state: the parameters are not optimizer state",
    "Adam's state is its two moments only: 2 * num_params * bytes (EMB-MEM-5)",
    ADAM,
)
def _adam_with_params(num_params: int, dtype: str) -> dict[str, int]:
    return {"bytes": ref_adam(num_params, dtype)["bytes"] // 2 * 3}


@mutant(
    "mem.adam_float32_moments",
    "counts Adam's moments as float32 whatever the parameter's dtype",
    "the spec counts the moments in the parameter's dtype: 2 * num_params * element size of dtype (EMB-MEM-5)",
    ADAM,
    mistake="mem.every_dtype_float32",
)
def _adam_float32_moments(num_params: int, dtype: str) -> dict[str, int]:
    element_size(dtype)
    return ref_adam(num_params, "float32")


@mutant(
    "mem.sparse_as_dense",
    "reports the dense gradient's bytes for the row-sparse gradient too",
    "a row-sparse gradient stores only the touched rows: unique ids * (D * bytes + 8 for the int64 id) (EMB-MEM-4)",
    GRAD,
)
def _sparse_as_dense(vocab_size: int, embed_dim: int, dtype: str, ids: np.ndarray) -> dict[str, int]:
    result = ref_gradient(vocab_size, embed_dim, dtype, ids)
    return {**result, "row_sparse": result["dense"]}


@mutant(
    "mem.sparse_no_index",
    "forgets the int64 id stored with each row of a row-sparse gradient",
    "each stored row also carries its id: unique ids * (D * bytes + 8) (EMB-MEM-4)",
    GRAD,
)
def _sparse_no_index(vocab_size: int, embed_dim: int, dtype: str, ids: np.ndarray) -> dict[str, int]:
    result = ref_gradient(vocab_size, embed_dim, dtype, ids)
    return {**result, "row_sparse": int(np.unique(np.asarray(ids)).size) * embed_dim * element_size(dtype)}


@mutant(
    "mem.sparse_counts_duplicates",
    "counts a row for every id occurrence instead of every distinct id (an uncoalesced gradient)",
    "count distinct ids: np.unique(ids).size rows (EMB-MEM-4)",
    GRAD,
)
def _sparse_counts_duplicates(vocab_size: int, embed_dim: int, dtype: str, ids: np.ndarray) -> dict[str, int]:
    result = ref_gradient(vocab_size, embed_dim, dtype, ids)
    return {**result, "row_sparse": int(np.asarray(ids).size) * (embed_dim * element_size(dtype) + 8)}
