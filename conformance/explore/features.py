"""The optional features a drawn case needs, read off its inputs as the goldens' builders assign them by hand
(``embconf list features``): so that an implementation without one finds the case not applicable, as it finds
the golden of the same inputs, and never fails it. ``tests/explore`` holds it to every golden's features."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

import numpy as np

from embconf.model import bag, rope
from embconf.model.family import operations_of
from embconf.model.vocabulary import optional_inputs
from embconf.reference.cases.quantized import implied_features as quantized_features

HALF_AND_WIDE = ("float64", "float16", "bfloat16")  # float32 is required of every implementation (EMB-FWD-3)
IDS = ("ids", "tokens")
LARGE_PARAMETERS = (
    1 << 20
)  # (V + L) * D of a layer whose tables an implementation that allocates them cannot hold lightly
LAYER_OPERATIONS = ("embedding_layer_forward", "embedding_layer_backward", "embedding_layer_own_backward")
DTYPE_NAMED = ("sinusoidal_table", "rope_tables")  # operations whose "dtype" input is an array's dtype


def needed_features(
    operation: str, inputs: Mapping[str, Any], error: Optional[str], carried: Iterable[str] = ()
) -> tuple[str, ...]:
    """``carried`` (the features its boundaries carry: a convention's, a rope layer's) and those its inputs need."""
    found = list(dict.fromkeys(carried))
    conventions = {f for f in found if f.startswith("bag-") or f.startswith("rope-")}
    more = _dtypes(operation, inputs) | _ids(inputs) | _layer(operation, inputs, error, set(found))
    more |= {feature for name, feature in optional_inputs(operation).items() if inputs.get(name) is not None}
    more |= {"row_sparse_grad"} if operation == "embedding_backward_sparse" else set()
    more |= {"max_norm"} if operation == "embedding_forward_max_norm" else set()
    more |= rope.implied_features(operation, inputs, error) | _positions(operation, inputs, error)
    more |= bag.implied_features(operation, inputs, error, conventions & set(_bag_conventions()))
    if operation in operations_of("quantized"):  # its format's, a half output's, weights', canonical markers
        more |= set(quantized_features(operation, dict(inputs), tuple(found)))
    return tuple(found + sorted(more - set(found)))


def _bag_conventions() -> frozenset[str]:
    from embconf.model.bag_conventions import KIND

    return frozenset(KIND.features)


def _dtypes(operation: str, inputs: Mapping[str, Any]) -> set[str]:
    dtypes = {str(value.dtype) for value in inputs.values() if isinstance(value, np.ndarray)}
    if operation in DTYPE_NAMED and isinstance(inputs.get("dtype"), str):
        dtypes.add(inputs["dtype"])
    return dtypes & set(HALF_AND_WIDE)


def _ids(inputs: Mapping[str, Any]) -> set[str]:
    kinds = {np.asarray(inputs[name]).dtype for name in IDS if isinstance(inputs.get(name), np.ndarray)}
    return {"int32_ids" for d in kinds if d == np.int32} | {"float_ids" for d in kinds if d.kind == "f"}


def _layer(operation: str, inputs: Mapping[str, Any], error: Optional[str], carried: set[str]) -> set[str]:
    """A layer's (and its parameter count's) features: padding, a rope layer's pairing or its refusal, the
    sinusoid table stored, a model-size table."""
    config = inputs.get("config")
    if not isinstance(config, Mapping) or (operation not in LAYER_OPERATIONS and operation != "parameter_count"):
        return set()
    found: set[str] = set()
    if config.get("padding_idx") is not None and operation in LAYER_OPERATIONS:
        found.add("padding_idx")
    if config.get("pos_encoding") == "rope":
        if "rope-layer" not in carried:
            found.add("rope-layer-refused")
        elif operation in LAYER_OPERATIONS and error is None:
            pairing = config.get("rope_pairing", "half_split")
            found |= {rope.Pairing(pairing).feature} if pairing in {p.value for p in rope.Pairing} else set()
    if operation == "parameter_count":
        if config.get("pos_encoding") == "sinusoidal" and "sinusoid_computed" not in carried:
            found.add("sinusoid_stored")
        vocab, dim, length = (config.get(k) for k in ("vocab_size", "embed_dim", "max_seq_len"))
        rows = sum(n for n in (vocab, length) if isinstance(n, int) and not isinstance(n, bool))
        if isinstance(dim, int) and rows * dim >= LARGE_PARAMETERS:
            found.add("large_tables")
    return found


def _positions(operation: str, inputs: Mapping[str, Any], error: Optional[str]) -> set[str]:
    """rope-positions: position_ids whose rows are not each one contiguous run p0, p0+1, ..."""
    ids = inputs.get("position_ids")
    if operation not in ("rope_forward", "rope_backward", "rope_tables") or not isinstance(ids, np.ndarray):
        return set()
    if ids.dtype.kind not in "iu" or ids.size == 0 or ids.shape[-1] < 2:
        return set()
    return set() if bool(np.all(np.diff(ids.astype(np.int64), axis=-1) == 1)) else {rope.POSITIONS_FEATURE}
