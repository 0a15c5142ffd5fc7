"""Module 05: reverse-mode automatic differentiation.

Each differentiable op is a ``Function`` subclass. ``Function.apply`` runs the
op's ``forward`` on numpy arrays and, when any input requires a gradient,
records the Function (and through it the input tensors) on the output. Calling
``Tensor.backward`` sorts that graph topologically and runs each Function's
``backward`` from the output towards the leaves.

Importing this module enables autograd: it replaces the value-only Tensor
operations with recording ones and installs ``Tensor.backward``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tinytorch.core.tensor import Tensor, as_tensor, normalize_shape

Axis = int | tuple[int, ...] | None


class Function:
    """Base class of a differentiable operation.

    Subclasses implement ``forward(*arrays, **options) -> ndarray`` and
    ``backward(grad_output) -> tuple`` with one gradient (or None) per
    Tensor input, in the order they were passed to ``apply``. State needed by
    ``backward`` is kept on ``self``.
    """

    def __init__(self) -> None:
        self.parents: tuple[Tensor, ...] = ()
        self.released = False

    @classmethod
    def apply(cls, *inputs: Tensor, **options: Any) -> Tensor:
        """Run the op on ``inputs`` (Tensors; arrays become constants) and record it when needed."""
        inputs = tuple(as_tensor(t) for t in inputs)
        fn = cls()
        out = Tensor(fn.forward(*(t.data for t in inputs), **options))
        if any(t.requires_grad for t in inputs):
            fn.parents = inputs
            out.requires_grad = True
            out._grad_fn = fn
        return out

    def forward(self, *arrays: np.ndarray, **options: Any) -> np.ndarray:
        raise NotImplementedError

    def backward(self, grad_output: np.ndarray) -> tuple[np.ndarray | None, ...]:
        raise NotImplementedError

    def release(self) -> None:
        """Drop references to inputs and saved state once backward has run."""
        self.__dict__ = {"parents": (), "released": True}


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the axes that broadcasting expanded to reach ``shape``."""
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad


class Add(Function):
    """a + b with numpy broadcasting."""

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        self.shapes = (a.shape, b.shape)
        return a + b

    def backward(self, grad_output: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return tuple(unbroadcast(grad_output, s) for s in self.shapes)


class Mul(Function):
    """a * b with numpy broadcasting."""

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        self.a, self.b = a, b
        return a * b

    def backward(self, grad_output: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (
            unbroadcast(grad_output * self.b, self.a.shape),
            unbroadcast(grad_output * self.a, self.b.shape),
        )


class Reshape(Function):
    def forward(self, a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        self.in_shape = a.shape
        return np.array(a.reshape(shape))

    def backward(self, grad_output: np.ndarray) -> tuple[np.ndarray]:
        return (grad_output.reshape(self.in_shape),)


class GetItem(Function):
    """a[key] for ints, slices, tuples, None, Ellipsis and integer arrays."""

    def forward(self, a: np.ndarray, key: Any) -> np.ndarray:
        self.in_shape, self.key = a.shape, key
        return np.array(a[key])

    def backward(self, grad_output: np.ndarray) -> tuple[np.ndarray]:
        grad = np.zeros(self.in_shape, dtype=np.float32)
        np.add.at(grad, self.key, grad_output)  # repeated indices accumulate
        return (grad,)


def _expand_reduced(grad: np.ndarray, in_shape: tuple[int, ...], axis: Axis, keepdims: bool) -> np.ndarray:
    """Broadcast the gradient of a reduction back to the input's shape."""
    if axis is not None and not keepdims:
        grad = np.expand_dims(grad, axis)
    return np.array(np.broadcast_to(grad, in_shape), dtype=np.float32)


class Sum(Function):
    def forward(self, a: np.ndarray, axis: Axis = None, keepdims: bool = False) -> np.ndarray:
        self.in_shape, self.axis, self.keepdims = a.shape, axis, keepdims
        return a.sum(axis=axis, keepdims=keepdims)

    def backward(self, grad_output: np.ndarray) -> tuple[np.ndarray]:
        return (_expand_reduced(grad_output, self.in_shape, self.axis, self.keepdims),)


class Mean(Function):
    def forward(self, a: np.ndarray, axis: Axis = None, keepdims: bool = False) -> np.ndarray:
        self.in_shape, self.axis, self.keepdims = a.shape, axis, keepdims
        return a.mean(axis=axis, keepdims=keepdims)

    def backward(self, grad_output: np.ndarray) -> tuple[np.ndarray]:
        if self.axis is None:
            count = math.prod(self.in_shape)
        else:
            axes = (self.axis,) if isinstance(self.axis, int) else self.axis
            count = math.prod(self.in_shape[ax] for ax in axes)
        grad = _expand_reduced(grad_output, self.in_shape, self.axis, self.keepdims)
        return (grad / np.float32(count) if grad.size else grad,)


def _topological_order(root: Tensor) -> list[Tensor]:
    """Tensors reachable from ``root``, each listed after every tensor that uses it."""
    order: list[Tensor] = []
    visited: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(root, False)]
    while stack:
        tensor, children_done = stack.pop()
        if children_done:
            order.append(tensor)
            continue
        if id(tensor) in visited:
            continue
        visited.add(id(tensor))
        stack.append((tensor, True))
        if tensor._grad_fn is not None:
            stack.extend((p, False) for p in tensor._grad_fn.parents if p.requires_grad)
    order.reverse()  # root first
    return order


def backward(self: Tensor, gradient: Any = None) -> None:
    """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf requiring grad.

    ``gradient`` (numpy array or Tensor, same shape as ``self``) is the upstream
    gradient; it may be omitted only for a one-element tensor. The graph is
    freed afterwards, so a second call through the same graph raises.
    """
    if not self.requires_grad:
        raise RuntimeError("backward() called on a tensor that does not require grad")
    if gradient is None:
        if self.data.size != 1:
            raise RuntimeError(
                "backward() without a gradient is only defined for one-element "
                f"tensors, got shape {self.shape}; pass gradient="
            )
        seed = np.ones(self.shape, dtype=np.float32)
    else:
        seed = np.array(as_tensor(gradient).data, dtype=np.float32)
        if seed.shape != self.shape:
            raise ValueError(f"gradient shape {seed.shape} does not match tensor shape {self.shape}")

    grads: dict[int, np.ndarray] = {id(self): seed}
    for tensor in _topological_order(self):
        grad = grads.pop(id(tensor), None)
        fn = tensor._grad_fn
        if fn is None:  # leaf
            if grad is not None:
                grad = np.array(grad, dtype=np.float32)
                tensor.grad = grad if tensor.grad is None else (tensor.grad + grad).astype(np.float32)
            continue
        if fn.released:
            raise RuntimeError("trying to backward through the graph a second time")
        if grad is not None:
            for parent, parent_grad in zip(fn.parents, fn.backward(grad)):
                if parent_grad is None or not parent.requires_grad:
                    continue
                parent_grad = np.asarray(parent_grad, dtype=np.float32)
                key = id(parent)
                grads[key] = parent_grad if key not in grads else grads[key] + parent_grad
        fn.release()


# ----- enable autograd on Tensor ---------------------------------------------

def _add(self: Tensor, other: Any) -> Tensor:
    return Add.apply(self, as_tensor(other))


def _radd(self: Tensor, other: Any) -> Tensor:
    return Add.apply(as_tensor(other), self)


def _mul(self: Tensor, other: Any) -> Tensor:
    return Mul.apply(self, as_tensor(other))


def _rmul(self: Tensor, other: Any) -> Tensor:
    return Mul.apply(as_tensor(other), self)


def _reshape(self: Tensor, *shape: Any) -> Tensor:
    return Reshape.apply(self, shape=normalize_shape(shape))


def _getitem(self: Tensor, key: Any) -> Tensor:
    return GetItem.apply(self, key=key)


def _sum(self: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    return Sum.apply(self, axis=axis, keepdims=keepdims)


def _mean(self: Tensor, axis: Axis = None, keepdims: bool = False) -> Tensor:
    return Mean.apply(self, axis=axis, keepdims=keepdims)


def enable_autograd() -> None:
    """Install the recording operations and ``backward`` on Tensor (idempotent)."""
    Tensor.__add__ = _add
    Tensor.__radd__ = _radd
    Tensor.__mul__ = _mul
    Tensor.__rmul__ = _rmul
    Tensor.reshape = _reshape
    Tensor.__getitem__ = _getitem
    Tensor.sum = _sum
    Tensor.mean = _mean
    Tensor.backward = backward


enable_autograd()
