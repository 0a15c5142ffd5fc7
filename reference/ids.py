"""The sorted distinct values of an id array, as ``np.unique`` gives them (same dtype), without the masked-array
module ``np.unique`` imports on its first call (a run that needs nothing else of it does not pay for it)."""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``values`` (flattened), in their own dtype."""
    flat = np.sort(np.asarray(values), axis=None)
    if flat.size < 2:
        return flat
    return flat[np.concatenate(([True], flat[1:] != flat[:-1]))]
