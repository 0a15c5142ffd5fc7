"""Module 01 (autumn 2025 shape): a float32 Tensor whose operations compute values only; ``enable_autograd``
(module 05) makes them record a ``_grad_fn`` and gives the Tensor ``backward``."""

import numpy as np


def _raw(value):
    return value.data if isinstance(value, Tensor) else value


class Tensor:
    def __init__(self, data, requires_grad=False):
        self.data = np.array(data, dtype=np.float32)
        self.requires_grad = requires_grad
        self.grad = None
        self._grad_fn = None

    @property
    def shape(self):
        return self.data.shape

    def __add__(self, other):
        return Tensor(self.data + _raw(other))

    def __mul__(self, other):
        return Tensor(self.data * _raw(other))

    def reshape(self, *shape):
        return Tensor(self.data.reshape(*shape))

    def backward(self, gradient=None):
        raise RuntimeError("call enable_autograd() first")
