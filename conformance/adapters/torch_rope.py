"""The rope operations of a PyTorch rotary embedding (transformers, rotary-embedding-torch, torchtune, x-transformers,
Megatron-Core):
:class:`TorchRope` is :class:`~embconf.adapters.rope_operations.RopeOperations` on torch tensors.

A torch part supplies ``rotate(x, rotation)`` on a torch tensor; the forward runs it under ``no_grad``, the backward
is torch autograd through it. Autograd's refusal of a grad_output of another shape than x's is shape_mismatch
(:func:`torch_shape_errors`, which also covers tables that do not broadcast against x); a part maps its forward's
own refusals by overriding :meth:`TorchRope.errors`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any, Callable

import numpy as np

from embconf.adapters.convert import to_numpy, torch_tensor
from embconf.adapters.frameworks import refusals
from embconf.adapters.rope_operations import RopeCall, RopeOperations

TORCH_SHAPES = ("must match the size of tensor", "Mismatch in shape: grad_output")


class TorchRope(RopeOperations):
    """Rope operations over ``rotate`` on torch tensors."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch

    def rotate(self, x: Any, rotation: RopeCall) -> Any:
        """The torch tensor x rotated by the framework (differentiable)."""
        raise NotImplementedError

    def errors(self) -> AbstractContextManager[None]:
        """The forward's error mapping: none unless the part has one."""
        return nullcontext()

    def tensor(self, array: np.ndarray) -> Any:
        """A fresh torch tensor holding the array (a copy: the framework may write to it)."""
        return torch_tensor(self.torch, array, copy=True)

    def rotated(self, x: np.ndarray, rotation: RopeCall) -> Any:
        with self.torch.no_grad(), self.errors():
            return to_numpy(self.rotate(self.tensor(x), rotation))

    def gradient(self, x: np.ndarray, rotation: RopeCall, grad_output: np.ndarray) -> Any:
        return self.autograd(lambda xt: self.rotate(xt, rotation), x, grad_output)

    def autograd(self, function: Callable[[Any], Any], x: np.ndarray, grad_output: np.ndarray) -> Any:
        """The gradient of ``function`` (torch tensor -> torch tensor) at x for ``grad_output``, by autograd."""
        xt = self.tensor(x).requires_grad_(True)
        with torch_shape_errors():
            function(xt).backward(self.tensor(grad_output))
        return to_numpy(xt.grad)


def torch_shape_errors() -> AbstractContextManager[None]:
    """torch's refusal of tables or a grad_output of another shape than x's, as shape_mismatch."""
    return refusals(RuntimeError, (TORCH_SHAPES, "shape_mismatch"))
