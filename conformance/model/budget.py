"""How long one call may take: a floor (``--case-timeout``, default 10 s) plus an allowance for the work the
case holds, so that a correct but slow implementation (pure JavaScript, pure-Python loops) passes the large
cases at the defaults on a loaded machine, while a hang on a small case still costs only the floor.

The work of a call is the cost of the slowest correct way to answer it: for a lookup (a table and ids) the
one-hot matrix product, V*N*D multiply-adds (TensorFlow.js's CPU gather gradient is such a sum: ~11 s for
``lookup.backward.large_table``, V*N*D = 32.8 M, on a loaded 2-core machine); for a sinusoid table its
L*D values; otherwise the elements of its input arrays. Every unit of work is allowed SECONDS_PER_UNIT,
counted in whole seconds (a small case's budget is exactly the floor).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from embconf.model.encoding import is_array

SECONDS_PER_UNIT = 0.5e-6  # 2 M units a second: TensorFlow.js's large backward (11 s measured) gets 16 s more
TABLES = ("weight", "token_weight")  # the inputs that are an embedding table (V, D)
IDS = ("ids", "tokens")


def case_work(operation: str, inputs: Mapping[str, Any]) -> int:
    """The units of work of one call (see the module's docstring); its arrays as arrays or as their encoding."""
    shapes = {name: shape for name, value in inputs.items() if (shape := _shape(value)) is not None}
    work = sum(math.prod(shape) for shape in shapes.values())
    table = next((shapes[name] for name in TABLES if name in shapes), None)
    ids = next((shapes[name] for name in IDS if name in shapes), None)
    if table is not None and ids is not None and len(table) == 2:
        work = max(work, math.prod(table) * math.prod(ids))  # V*D*N: a one-hot product
    if operation == "sinusoidal_table":
        length, dim = inputs.get("max_len"), inputs.get("embed_dim")
        if isinstance(length, int) and isinstance(dim, int):
            work = max(work, max(length, 0) * max(dim, 0))
    return work


def _shape(value: Any) -> tuple[int, ...] | None:
    """The shape of an array, or of an encoded one (``{dtype, shape, ...}``, embconf.model.encoding)."""
    if isinstance(value, np.ndarray):
        return tuple(value.shape)
    if is_array(value) and isinstance(value["shape"], list):
        return tuple(int(n) for n in value["shape"])
    return None


def case_budget(floor: float, operation: str, inputs: Mapping[str, Any]) -> float:
    """Seconds one call may take: ``floor`` plus the allowance for its work, in whole seconds."""
    return floor + math.floor(case_work(operation, inputs) * SECONDS_PER_UNIT)
