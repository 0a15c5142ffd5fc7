"""Mistakes that evade the goldens by design: each misbehaves only at a combination of boundaries of its
operations' input domains (``reference/cases/domains.py``) that no golden of spec 2.2.0 is at, and is the
reference everywhere else. Each names those combinations (:attr:`~embconf.mutants.base.Mutant.evades`), so that
the catalogue's tests hold it to them (no golden at none of them kills it) and ``embconf explore`` is measured on
finding it; a golden at one of them kills it. Each is modelled on a mistake found in public code (``source``).
"""

from __future__ import annotations

import inspect
from typing import Any, Optional

import numpy as np

from embconf.model.dtypes import round_once
from embconf.mutants.base import Mutant, register
from embconf.reference import OPERATIONS
from embconf.reference.bag import bag_ranges
from embconf.reference.lookup import validate_ids
from embconf.reference.rope import per_row

UINT16_IDS = "https://github.com/huggingface/datatrove/issues/118"
EMPTY_MAX_BAG = "https://github.com/pytorch/pytorch/issues/4169"
CACHE_BOUNDS = "https://github.com/microsoft/onnxruntime/issues/28205"  # and vllm-project/vllm-ascend#1266


def _wrapped(weight: np.ndarray, ids: Any) -> np.ndarray:
    """The ids checked against V as the spec says, then held as uint16: an id of 2^16 or more wraps."""
    return validate_ids(ids, weight.shape[0]).astype(np.uint16).astype(np.int64)


def _uint16_forward(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return weight[_wrapped(weight, ids)]


def _uint16_backward(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    index = _wrapped(weight, ids)
    OPERATIONS["embedding_backward"](weight, ids, grad_output)  # the spec's checks of the gradient's shape
    total = np.zeros(weight.shape, dtype=np.float64)
    np.add.at(total, index.reshape(-1), np.asarray(grad_output, dtype=np.float64).reshape(-1, weight.shape[1]))
    return round_once(total, str(weight.dtype))


_LARGE_V = (("weight.rows", "large"), ("ids.range", "last_row"))
register(
    Mutant(
        "fwd.ids_uint16",
        "holds token ids as uint16 (a vocabulary taken to fit 16 bits): an id of 2^16 or more wraps to id - 2^16",
        "hold ids in a type as wide as V - 1 (int64, or int32 below 2^31): never uint16 for a vocabulary past 2^16",
        {"embedding_forward": _uint16_forward, "embedding_backward": _uint16_backward},
        source=UINT16_IDS,
        # the backward misbehaves too, but a table of 2^16 + 1 rows is a boundary of the forward lookups only
        # (reference/cases/domains_lookup.py: each golden at it holds the whole table)
        evades=(("embedding_forward", _LARGE_V),),
    )
)


def _empty_max_bags(*args: Any, **kwargs: Any) -> np.ndarray:
    """The spec's bags (its signature, its checks), but in mode max a bag with no id at all is the max's
    identity, -inf, unless padding_idx is given (its masking path is the one that writes zeros for a bag with
    nothing counted)."""
    reference = OPERATIONS["embedding_bag_forward"]
    out = reference(*args, **kwargs)
    call = inspect.signature(reference).bind(*args, **kwargs)
    call.apply_defaults()
    given = call.arguments
    if given["mode"] != "max" or given["padding_idx"] is not None:
        return out
    for b, (start, end) in enumerate(
        bag_ranges(np.asarray(given["ids"]), given["offsets"], given["include_last_offset"])
    ):
        if start == end:
            out[b] = -np.inf
    return out


_MAX = ("mode", "max")
_NO_PADDING = ("padding_idx", "absent")
register(
    Mutant(
        "bag.max_empty_unpadded",
        "in mode max, a bag with no ids is -inf (the max's identity) unless padding_idx is given",
        "every bag with nothing counted is zeros, in every mode, with or without padding_idx (EMB-BAG-6)",
        {"embedding_bag_forward": _empty_max_bags},
        source=EMPTY_MAX_BAG,
        evades=(
            ("embedding_bag_forward", (("offsets", "empty_bag"), _MAX, _NO_PADDING)),
            ("embedding_bag_forward", (("ids.count", "empty"), _MAX, _NO_PADDING)),
        ),
    )
)


def _past_the_cache(x: np.ndarray, position_ids: Any, scaling: Any) -> Optional[np.ndarray]:
    """Where the float16 kernel's cache ends, under dynamic scaling: True for each row of x whose position is at
    or past original_max_position_embeddings (broadcast against x's rows); None when no row is, or the call is not
    one the kernel runs (dynamic scaling, x in float16)."""
    if not isinstance(scaling, dict) or scaling.get("rope_type") != "dynamic" or np.dtype(x.dtype).name != "float16":
        return None
    original = scaling.get("original_max_position_embeddings")
    ids = np.asarray(position_ids)
    if not isinstance(original, int) or ids.dtype.kind not in "iu" or not np.any(ids >= original):
        return None
    return per_row((ids >= original)[..., None], x)


def _cache_forward(
    x: np.ndarray, position_ids: Any, rotary_dim: int, base: float, scaling: Any, pairing: str
) -> np.ndarray:
    out = OPERATIONS["rope_forward"](x, position_ids, rotary_dim, base, scaling, pairing)
    past = _past_the_cache(x, position_ids, scaling)
    return out if past is None else np.where(past, x, out)


def _cache_backward(
    x: np.ndarray, position_ids: Any, rotary_dim: int, base: float, scaling: Any, pairing: str, grad_output: np.ndarray
) -> np.ndarray:
    out = OPERATIONS["rope_backward"](x, position_ids, rotary_dim, base, scaling, pairing, grad_output)
    past = _past_the_cache(x, position_ids, scaling)
    return out if past is None else np.where(past, grad_output, out)


_PAST_IN_HALF = (("position_ids.span", "past_original"), ("scaling", "dynamic"), ("x.dtype", "float16"))
register(
    Mutant(
        "rope.past_cache_unrotated",
        "dynamic NTK in float16 (a fused kernel's path): the cos/sin cache holds the original context only, and "
        "a row whose position is past it is returned unrotated",
        "grow the cache (with dynamic NTK's new base) to the largest position of the call before rotating, in "
        "every dtype; never pass a row through because its position is past the cache",
        {"rope_forward": _cache_forward, "rope_backward": _cache_backward},
        source=CACHE_BOUNDS,
        evades=tuple((operation, _PAST_IN_HALF) for operation in ("rope_forward", "rope_backward")),
    )
)
