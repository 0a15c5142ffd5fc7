"""Module 01: a minimal Tensor backed by a float32 numpy array.

Operations here compute values only. Importing ``tinytorch.core.autograd``
replaces them with versions that also record the computation graph, and
enables ``backward``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Tensor:
    """An n-dimensional float32 array with optional gradient tracking."""

    # Make numpy defer to our reflected operators (``array + tensor``).
    __array_ufunc__ = None

    def __init__(self, data: Any, requires_grad: bool = False) -> None:
        self.data: np.ndarray = np.asarray(data, dtype=np.float32)
        self.requires_grad: bool = bool(requires_grad)
        self.grad: np.ndarray | None = None
        self._grad_fn = None  # the autograd Function that produced this tensor

    # ----- introspection -------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        return self.data.size

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    def numpy(self) -> np.ndarray:
        """The underlying array (shared, not copied)."""
        return self.data

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy:
            return np.array(self.data, dtype=dtype, copy=True)
        return self.data if dtype is None else self.data.astype(dtype, copy=False)

    def __repr__(self) -> str:
        flag = ", requires_grad=True" if self.requires_grad else ""
        return f"Tensor({self.data!r}{flag})"

    # ----- arithmetic (value only until autograd is imported) -----------
    def __add__(self, other: Any) -> Tensor:
        return Tensor(self.data + as_tensor(other).data)

    def __radd__(self, other: Any) -> Tensor:
        return as_tensor(other) + self

    def __mul__(self, other: Any) -> Tensor:
        return Tensor(self.data * as_tensor(other).data)

    def __rmul__(self, other: Any) -> Tensor:
        return as_tensor(other) * self

    # ----- shape and reductions -----------------------------------------
    def reshape(self, *shape: Any) -> Tensor:
        """Reshape; accepts ``reshape(2, 3)`` or ``reshape((2, 3))``."""
        return Tensor(np.array(self.data.reshape(normalize_shape(shape))))

    def __getitem__(self, key: Any) -> Tensor:
        return Tensor(np.array(self.data[key]))

    def sum(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        return Tensor(self.data.sum(axis=axis, keepdims=keepdims))

    def mean(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        return Tensor(self.data.mean(axis=axis, keepdims=keepdims))

    # ----- gradients -----------------------------------------------------
    def backward(self, gradient: Any = None) -> None:
        raise NotImplementedError(
            "autograd is not enabled: import tinytorch.core.autograd first"
        )


def as_tensor(value: Any) -> Tensor:
    """Return ``value`` if it is a Tensor, else a constant float32 Tensor of it.

    Python scalars become float32, which matches numpy 2's rule for a
    float32 array combined with a Python scalar.
    """
    return value if isinstance(value, Tensor) else Tensor(value)


def normalize_shape(shape: tuple[Any, ...]) -> tuple[int, ...]:
    """Accept ``(2, 3)`` or ``((2, 3),)`` as passed to ``reshape``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)
