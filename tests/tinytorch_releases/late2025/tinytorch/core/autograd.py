"""Module 06 (late 2025 shape): a ``Function`` node is built from its inputs (kept in ``saved_tensors``) and
``apply`` returns one gradient per input; nodes for ``+``, ``*``, slicing, reshaping and the embedding lookup
(``EmbeddingBackward(weight, indices)``); ``enable_autograd`` patches them into the Tensor with ``backward``."""

import numpy as np

from .tensor import Tensor


class Function:
    def __init__(self, *tensors):
        self.saved_tensors = tensors

    def apply(self, grad_output):
        raise NotImplementedError


def _tracked(value):
    return isinstance(value, Tensor) and value.requires_grad


class AddBackward(Function):
    def apply(self, grad_output):
        return tuple(grad_output if _tracked(t) else None for t in self.saved_tensors)


class MulBackward(Function):
    def apply(self, grad_output):
        a, b = self.saved_tensors
        return (grad_output * b.data if _tracked(a) else None, grad_output * a.data if _tracked(b) else None)


class SliceBackward(Function):
    def __init__(self, tensor, key):
        super().__init__(tensor)
        self.key = key

    def apply(self, grad_output):
        (tensor,) = self.saved_tensors
        grad = np.zeros_like(tensor.data)
        grad[self.key] = grad_output
        return (grad,)


class ReshapeBackward(Function):
    def apply(self, grad_output):
        (tensor,) = self.saved_tensors
        return (np.reshape(grad_output, tensor.shape),)


class EmbeddingBackward(Function):
    """Scatter-add of the output's gradient into the rows the lookup read (np.add.at: repeats accumulate)."""

    def __init__(self, weight, indices):
        super().__init__(weight)
        self.indices = indices

    def apply(self, grad_output):
        (weight,) = self.saved_tensors
        grad = np.zeros_like(weight.data)
        np.add.at(grad, self.indices.data.astype(int).ravel(), grad_output.reshape(-1, grad_output.shape[-1]))
        return (grad,)


def _unbroadcast(gradient, shape):
    while gradient.ndim > len(shape):
        gradient = gradient.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and gradient.shape[axis] != 1:
            gradient = gradient.sum(axis=axis, keepdims=True)
    return gradient


def enable_autograd():
    if getattr(Tensor, "_autograd_enabled", False):
        return
    plain = {name: getattr(Tensor, name) for name in ("__add__", "__mul__", "__getitem__", "reshape")}

    def record(out, node):
        out.requires_grad, out._grad_fn = True, node
        return out

    def add(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = plain["__add__"](self, other)
        return record(out, AddBackward(self, other)) if self.requires_grad or other.requires_grad else out

    def mul(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        out = plain["__mul__"](self, other)
        return record(out, MulBackward(self, other)) if self.requires_grad or other.requires_grad else out

    def getitem(self, key):
        out = plain["__getitem__"](self, key)
        return record(out, SliceBackward(self, key)) if self.requires_grad else out

    def reshape(self, *shape):
        out = plain["reshape"](self, *shape)
        return record(out, ReshapeBackward(self)) if self.requires_grad else out

    def backward(self, gradient=None):
        if not self.requires_grad:
            return
        if gradient is None:
            gradient = np.ones_like(self.data)
        gradient = _unbroadcast(np.asarray(gradient, dtype=np.float32), self.shape)
        self.grad = gradient if self.grad is None else self.grad + gradient
        if self._grad_fn is not None:
            for tensor, grad in zip(self._grad_fn.saved_tensors, self._grad_fn.apply(gradient)):
                if _tracked(tensor) and grad is not None:
                    tensor.backward(grad)

    Tensor.__add__, Tensor.__mul__, Tensor.__getitem__, Tensor.reshape = add, mul, getitem, reshape
    Tensor.backward = backward
    Tensor._autograd_enabled = True
