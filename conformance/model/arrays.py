"""Type names for the operations' inputs, so that each implementation of an operation (reference, mutants,
adapters) spells the spec's signature alike and short."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

Array = np.ndarray
Config = Mapping[str, Any]  # a layer's constructor config, as a case gives it (spec section 10)
Table = Optional[np.ndarray]  # a layer's position table, None for a layer without one
