"""What the bag adapters share (spec section 16): the bag operations' signature, the declared bag features, and
the glue that turns a case's ``offsets`` into the jagged rows a framework without offsets takes.

PyTorch (``torch_bag``) and TorchRec take the case's offsets as they are. TensorFlow's ``embedding_lookup_sparse``
takes a ``SparseTensor`` and Keras-RS's ``EmbedReduce`` a ``RaggedTensor``: their adapters read each bag's
``[start, end)`` off the offsets with :func:`bag_bounds`, by the spec's rules (EMB-BAG-1, 8, 13), so a refused
offset there is the glue's verdict (``decided_by: glue``), never the framework's.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from embconf.adapters.frameworks import glue_checks
from embconf.model.bag import BAG_OPERATIONS
from embconf.model.errors import Decline
from embconf.reference.bag import _bounds as spec_bounds  # the spec's offset rules (EMB-BAG-1, 8, 13)
from embconf.reference.errors import EmbeddingError

OPERATIONS = frozenset(BAG_OPERATIONS)


def bag_bounds(ids: np.ndarray, offsets: Optional[np.ndarray], include_last_offset: bool = False) -> list[range]:
    """Each bag's positions in the flattened ids: the rows of 2-D ids, or the offsets' bags (glue checks)."""
    with glue_checks():
        if ids.ndim == 2:
            if offsets is not None:
                raise EmbeddingError("shape_mismatch", f"2-D ids {ids.shape} are fixed-length bags: no offsets")
            return [range(b * ids.shape[1], (b + 1) * ids.shape[1]) for b in range(ids.shape[0])]
        if ids.ndim != 1 or offsets is None:
            raise EmbeddingError("shape_mismatch", f"ids of shape {ids.shape} need 1-D offsets (or 2-D ids)")
        return [range(start, end) for start, end in spec_bounds(offsets, ids.shape[0], bool(include_last_offset))]


def check_weights_shape(per_sample_weights: Optional[np.ndarray], ids: np.ndarray) -> None:
    """Per-sample weights of another shape than the ids, refused by the glue that pairs them with the ids."""
    if per_sample_weights is not None and np.shape(per_sample_weights) != ids.shape:
        with glue_checks():
            raise EmbeddingError(
                "shape_mismatch", f"per_sample_weights has shape {np.shape(per_sample_weights)}, the ids {ids.shape}"
            )


def jagged_positions(bounds: list[range]) -> tuple[np.ndarray, np.ndarray]:
    """(bag, place in its bag) of every position, bag after bag: a SparseTensor's indices (row-major)."""
    rows = np.array([b for b, bag in enumerate(bounds) for _ in bag], dtype=np.int64)
    places = np.array([j for bag in bounds for j in range(len(bag))], dtype=np.int64)
    return rows, places


def decline_absent(framework: str, padding_idx: Any = None, include_last_offset: Any = False) -> None:
    """Decline an option the framework has no argument for (its feature is not declared, so this is a guard)."""
    if padding_idx is not None:
        raise Decline(f"{framework} has no padding_idx")
    if include_last_offset:
        raise Decline(f"{framework} takes no offsets with a last one")
