"""Module 05 (autumn 2025 shape): ``Function`` nodes keep their inputs in ``saved_tensors`` and turn the output's
gradient into one gradient per input in ``apply``; ``enable_autograd`` patches the Tensor's operators to record
them as ``_grad_fn`` and adds a recursive ``backward``."""

import numpy as np

from .tensor import Tensor


class Function:
    def __init__(self, *tensors):
        self.saved_tensors = tensors

    def apply(self, grad_output):
        raise NotImplementedError


def _wants_grad(value):
    return isinstance(value, Tensor) and value.requires_grad


class AddBackward(Function):
    def apply(self, grad_output):
        return tuple(grad_output if _wants_grad(t) else None for t in self.saved_tensors)


class MulBackward(Function):
    def apply(self, grad_output):
        left, right = self.saved_tensors
        left_value = left.data if isinstance(left, Tensor) else left
        right_value = right.data if isinstance(right, Tensor) else right
        return (
            grad_output * right_value if _wants_grad(left) else None,
            grad_output * left_value if _wants_grad(right) else None,
        )


class EmbeddingBackward(Function):
    """The lookup's backward: each output row's gradient is added to its table row (np.add.at accumulates)."""

    def apply(self, grad_output):
        weight, indices = self.saved_tensors
        grad = np.zeros_like(weight.data)
        rows = indices.data.astype(int).reshape(-1)
        np.add.at(grad, rows, np.asarray(grad_output).reshape(len(rows), weight.data.shape[-1]))
        return grad, None


def _fit(gradient, shape):
    """Sum a broadcast gradient back to ``shape``."""
    while gradient.ndim > len(shape):
        gradient = gradient.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and gradient.shape[axis] != 1:
            gradient = gradient.sum(axis=axis, keepdims=True)
    return gradient


def enable_autograd():
    if getattr(Tensor, "_autograd_enabled", False):
        return
    plain_add, plain_mul = Tensor.__add__, Tensor.__mul__

    def tracked(plain, node):
        def operator(self, other):
            other = other if isinstance(other, Tensor) else Tensor(other)
            out = plain(self, other)
            if self.requires_grad or other.requires_grad:
                out.requires_grad = True
                out._grad_fn = node(self, other)
            return out

        return operator

    def backward(self, gradient=None):
        if not self.requires_grad:
            return
        if gradient is None:
            if self.data.size != 1:
                raise ValueError("backward() needs a gradient for a non-scalar output")
            gradient = np.ones_like(self.data)
        gradient = _fit(np.asarray(gradient, dtype=np.float32), self.data.shape)
        self.grad = gradient if self.grad is None else self.grad + gradient
        if self._grad_fn is not None:
            for tensor, grad in zip(self._grad_fn.saved_tensors, self._grad_fn.apply(gradient)):
                if _wants_grad(tensor) and grad is not None:
                    tensor.backward(grad)

    Tensor.__add__ = tracked(plain_add, AddBackward)
    Tensor.__mul__ = tracked(plain_mul, MulBackward)
    Tensor.backward = backward
    Tensor._autograd_enabled = True
