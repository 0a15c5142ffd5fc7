"""The one converter set between NumPy and the frameworks' tensors (torch, paddle, mlx, jax, tensorflow, tinygrad).

NumPy's bfloat16 is ml_dtypes', which no framework reads or writes: a bfloat16 array crosses as its uint16 bit
patterns, viewed as the framework's bfloat16 on the other side (and back). :func:`as_numpy` is no framework's: it
reads what a student's Tensor holds.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional, TypeVar

import numpy as np

from embconf.model.dtypes import numpy_dtype

T = TypeVar("T")
BITS_VIEWED = ("torch", "mlx")  # frameworks whose bfloat16 tensor is viewed as uint16 before it leaves


def to_numpy(value: Any) -> Any:
    """A framework tensor as a NumPy array of its own dtype (bfloat16 through its bit patterns); an ndarray or
    None as it is."""
    if value is None or isinstance(value, np.ndarray):
        return value
    module = type(value).__module__
    bfloat16 = str(getattr(value, "dtype", "")).endswith("bfloat16")
    if module.split(".")[0] == "torch":
        value, module = value.detach().cpu(), "torch"  # a torch.nn.Parameter's module is torch.nn.parameter
    if bfloat16 and module.split(".")[0] in BITS_VIEWED:
        bits = value.view(sys.modules[module].uint16)
        return np.array(bits.numpy() if hasattr(bits, "numpy") else bits).view(numpy_dtype("bfloat16"))
    array = np.asarray(value.numpy()) if callable(getattr(value, "numpy", None)) else np.asarray(value)
    return array.view(numpy_dtype("bfloat16")) if bfloat16 and array.dtype == np.uint16 else array


def from_numpy(
    array: Any, make: Callable[[np.ndarray], T], bfloat16: Optional[Callable[[T], T]] = None, copy: bool = False
) -> T:
    """``make`` applied to the C-contiguous array (a copy when ``copy``); a bfloat16 array is made from its uint16
    bit patterns and then viewed by ``bfloat16`` as the framework's own bfloat16."""
    array = np.asarray(array, order="C")
    if array.dtype.name == "bfloat16" and bfloat16 is not None:
        bits = array.view(np.uint16)
        return bfloat16(make(bits.copy() if copy else bits))
    return make(array.copy() if copy else array)


def torch_tensor(torch: Any, array: Any, copy: bool = False) -> Any:
    """A NumPy array as a torch tensor of the same dtype (sharing its memory unless ``copy``)."""
    return from_numpy(array, torch.from_numpy, lambda t: t.view(torch.bfloat16), copy)


def as_numpy(value: Any) -> Any:
    """An ndarray as is; a tensor-like object's ``.data`` array; anything else unchanged (to be judged)."""
    if value is None or isinstance(value, np.ndarray):
        return value
    data = getattr(value, "data", None)
    return data if isinstance(data, np.ndarray) else value
