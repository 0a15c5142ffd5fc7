"""Module 01 (late 2025 shape): a float32 Tensor; slicing and reshaping compute values until module 06's
``enable_autograd`` makes them (and ``+``, ``*``) record ``Function`` nodes."""

import numpy as np


class Tensor:
    def __init__(self, data, requires_grad=False):
        self.data = np.array(data, dtype=np.float32)
        self.requires_grad = requires_grad
        self.grad = None
        self._grad_fn = None

    @property
    def shape(self):
        return self.data.shape

    def _other(self, value):
        return value.data if isinstance(value, Tensor) else np.float32(value)

    def __add__(self, other):
        return Tensor(self.data + self._other(other))

    def __mul__(self, other):
        return Tensor(self.data * self._other(other))

    def __getitem__(self, key):
        return Tensor(self.data[key])

    def reshape(self, *shape):
        return Tensor(self.data.reshape(*shape))

    def backward(self, gradient=None):
        raise RuntimeError("autograd is off: call tinytorch.core.autograd.enable_autograd()")
