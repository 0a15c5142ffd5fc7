"""Memory arithmetic of embedding tables (EMB-MEM). Bytes are exact integers."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from embconf.reference.errors import EmbeddingError
from embconf.reference.ids import distinct
from embconf.reference.layer import resolve_config

BYTES_PER_ELEMENT: dict[str, int] = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}
MB = 10**6  # decimal megabyte
MIB = 2**20  # binary mebibyte
INDEX_BYTES = 8  # a row-sparse gradient stores each touched row's id as int64


def element_size(dtype: str) -> int:
    if dtype not in BYTES_PER_ELEMENT:
        raise EmbeddingError("invalid_config", f"unknown dtype {dtype!r}; expected one of {sorted(BYTES_PER_ELEMENT)}")
    return BYTES_PER_ELEMENT[dtype]


def parameter_count(config: Mapping[str, Any], storage: str = "stored", rope_layer: bool = False) -> dict[str, int]:
    """Trainable parameters (token table, plus a learned table) and stored non-trainable values (a sinusoidal table).

    ``storage`` is the implementation's declared capability (EMB-MEM-1): "stored" keeps the L x D sinusoid
    (a constant, a frozen weight or a buffer), "computed" stores nothing and computes positions on every call.
    A rope layer (``rope_layer``: the feature rope-layer) stores no table (EMB-LAY-10); without it 'rope' is
    invalid_config (EMB-LAY-7).
    """
    cfg = resolve_config(config, rope_layer)
    token = cfg["vocab_size"] * cfg["embed_dim"]
    positions = cfg["max_seq_len"] * cfg["embed_dim"]
    if cfg["pos_encoding"] == "learned":
        return {"trainable": token + positions, "non_trainable": 0}
    if cfg["pos_encoding"] == "sinusoidal":
        return {"trainable": token, "non_trainable": positions if storage == "stored" else 0}
    return {"trainable": token, "non_trainable": 0}


def table_bytes(num_rows: int, embed_dim: int, dtype: str) -> dict[str, Any]:
    """Exact bytes of a (num_rows, embed_dim) table, and the same in MB (10^6) and MiB (2^20)."""
    size = num_rows * embed_dim * element_size(dtype)
    return {"bytes": size, "megabytes": size / MB, "mebibytes": size / MIB}


def gradient_bytes(vocab_size: int, embed_dim: int, dtype: str, ids: np.ndarray) -> dict[str, int]:
    """Dense gradient (V*D elements) against the row-sparse form (unique rows plus an int64 id each)."""
    size = element_size(dtype)
    unique = int(distinct(ids).size)
    return {"dense": vocab_size * embed_dim * size, "row_sparse": unique * (embed_dim * size + INDEX_BYTES)}


def adam_state_bytes(num_params: int, dtype: str) -> dict[str, int]:
    """Adam keeps two more tensors (first and second moments) of the parameter's size."""
    return {"bytes": 2 * num_params * element_size(dtype)}
