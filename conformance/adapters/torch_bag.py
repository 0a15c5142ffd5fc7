"""``torch_bag`` / ``torch_bag:functional``: PyTorch's ``nn.EmbeddingBag`` (the module, its weight the case's
table) or ``F.embedding_bag`` (on a trainable tensor), with autograd, against the spec's bags (section 16).

What is PyTorch's and what is the adapter's:

- The module is ``nn.EmbeddingBag(V, D, mode=..., padding_idx=..., include_last_offset=..., _weight=table)``
  called as ``bag(ids, offsets, per_sample_weights=...)``; the function is ``F.embedding_bag(ids, table,
  offsets, mode=..., per_sample_weights=..., padding_idx=..., include_last_offset=...)``. The case's arrays go in
  as they are (2-D ids with no offsets included); the backward is ``output.backward(grad_output)``, read from the
  table's ``.grad`` and the weights' ``.grad``. No check is added.
- Declared: modes sum, mean and max, 2-D ids, per-sample weights (PyTorch takes them in mode sum only: its
  ``NotImplementedError`` for mean is why ``bag-weighted-mean`` is not declared), ``padding_idx``,
  ``include_last_offset``, float64, float16, bfloat16 and int32 ids. PyTorch has no ``sqrtn`` mode, so
  ``bag-sqrtn`` is not declared: those cases are not applicable, never failures.
- PyTorch's own refusals mapped (:func:`bag_errors`): its range checks of ids to ``index_out_of_range``; of
  offsets (``offsets[0] has to be 0``, ``offsets[-1] can not be greater than input's length``) to
  ``invalid_offsets``; an unknown mode, weights with mode max, a ``padding_idx`` outside [-V, V) and an
  ``include_last_offset`` that is not a bool (its ``TypeError``) to ``invalid_config``; weights of another shape,
  offsets with 2-D ids, 1-D ids without offsets and autograd's
  ``Mismatch in shape`` to ``shape_mismatch``. Anything else stays an untyped error (decreasing offsets trip an
  internal check, ``Expected i < index_size``).
- TorchRec (:mod:`embconf.adapters.torchrec`) pools with this module and shares these mappings.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, Callable, Optional

import numpy as np

from embconf.adapters.bags import OPERATIONS, BagCall, BagOperations
from embconf.adapters.convert import to_numpy, torch_tensor
from embconf.adapters.frameworks import FrameworkAdapter, import_framework, refusals
from embconf.model.contract import Capabilities

EXTRA = "torch"
TARGETS = {"": "nn.EmbeddingBag", "functional": "F.embedding_bag"}
FEATURES = frozenset(
    {"bag-sum", "bag-mean", "bag-max", "bag-2d", "bag-weights", "bag-padding", "bag-last-offset"}
    | {"float64", "float16", "bfloat16", "int32_ids"}
)
RANGE = ("which is not in the valid range", "Expected idx >= 0 && idx < num_embeddings", "is out of bounds: ")
OFFSETS = (
    "offsets[0] has to be 0",
    "offsets[-1] can not be greater than input's length",
    "the last offset value should be the size of the indices tensor",  # include_last_offset's own check
)
CONFIG = ("mode has to be one of", "padding_idx must be within", "only supported for mode='sum' (got mode='max')")
NOT_A_FLAG = "argument 'include_last_offset' (position 8) must be bool"
SHAPES = ("must have the same shape as the input", "then offsets has to be None", "offsets has to be a 1D Tensor")

# the forward of one case: (table, ids, offsets, weights) as torch tensors -> the pooled output
Pool = Callable[[Any, Any, Optional[Any], Optional[Any]], Any]


@contextmanager
def bag_errors() -> Iterator[None]:
    """PyTorch's own refusals of a bag call (its module's and function's) as the spec's error kinds."""
    with ExitStack() as stack:
        stack.enter_context(refusals(AssertionError, ("padding_idx must be within", "invalid_config")))
        stack.enter_context(refusals(TypeError, (NOT_A_FLAG, "invalid_config")))
        stack.enter_context(
            refusals((ValueError, NotImplementedError), (CONFIG, "invalid_config"), (SHAPES, "shape_mismatch"))
        )
        stack.enter_context(
            refusals(
                RuntimeError,
                (RANGE, "index_out_of_range"),
                (OFFSETS, "invalid_offsets"),
                (CONFIG, "invalid_config"),
                ("Mismatch in shape", "shape_mismatch"),
            )
        )
        yield


class TorchBags:
    """A bag forward and its backward on torch autograd, over a :data:`Pool` (the module, the function, TorchRec)."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch

    def tensor(self, array: Optional[np.ndarray], grad: bool = False) -> Any:
        if array is None:
            return None
        return torch_tensor(self.torch, array, copy=True).requires_grad_(grad)

    def run(self, pool: Pool, call: BagCall, grad_output: Optional[np.ndarray] = None) -> tuple[Any, Any, Any]:
        """(output, grad of the table, grad of the weights): the grads None without ``grad_output``."""
        table = self.tensor(call.weight, grad=True)
        weights = self.tensor(call.per_sample_weights, grad=grad_output is not None)
        with bag_errors():
            output, table = pool(table, self.tensor(call.ids), self.tensor(call.offsets), weights)
            if grad_output is None:
                return to_numpy(output), None, None
            output.backward(self.tensor(grad_output))
        grad_table = to_numpy(table.grad) if table.grad is not None else np.zeros_like(call.weight)
        if weights is None:
            return to_numpy(output), grad_table, None
        grad_weights = (
            to_numpy(weights.grad) if weights.grad is not None else np.zeros(weights.shape, call.weight.dtype)
        )
        return to_numpy(output), grad_table, grad_weights

    def forward(self, pool: Pool, call: BagCall) -> Any:
        return self.run(pool, call)[0]

    def backward(self, pool: Pool, call: BagCall, grad_output: np.ndarray) -> tuple[Any, Any]:
        return self.run(pool, call, grad_output)[1:]


class PooledBags(BagOperations):
    """The bag operations of a framework on torch: :meth:`_pool` gives the case's forward, :class:`TorchBags`
    runs it and its backward."""

    bags: TorchBags

    def _pool(self, call: BagCall) -> Pool:
        raise NotImplementedError

    def forward(self, call: BagCall) -> Any:
        return self.bags.forward(self._pool(call), call)

    def backward(self, call: BagCall, grad_output: np.ndarray) -> tuple[Any, Any]:
        return self.bags.backward(self._pool(call), call, grad_output)


class TorchBagAdapter(PooledBags, FrameworkAdapter):
    kind = "torch_bag"
    targets = tuple(TARGETS)

    def __init__(self, target: str = "") -> None:
        torch = import_framework("torch", EXTRA)
        self.functional = target == "functional"
        self.bags = TorchBags(torch)
        caps = Capabilities(OPERATIONS, FEATURES, notes=(f"torch.{TARGETS[target].replace('F.', 'nn.functional.')}",))
        name = f"torch_bag:{target}" if target else "torch_bag"
        super().__init__(name, torch, caps, f"PyTorch {TARGETS[target]}")

    def _pool(self, call: BagCall) -> Pool:
        torch = self.bags.torch
        options = {"mode": call.mode, "padding_idx": call.padding_idx, "include_last_offset": call.include_last_offset}

        def function(table: Any, ids: Any, offsets: Any, weights: Any) -> tuple[Any, Any]:
            output = torch.nn.functional.embedding_bag(ids, table, offsets, per_sample_weights=weights, **options)
            return output, table

        def module(table: Any, ids: Any, offsets: Any, weights: Any) -> tuple[Any, Any]:
            bag = torch.nn.EmbeddingBag(table.shape[0], table.shape[1], _weight=table.detach(), **options)
            return bag(ids, offsets, per_sample_weights=weights), bag.weight

        return function if self.functional else module
