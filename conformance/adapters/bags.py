"""What the bag adapters share (spec section 16): the bag operations' signature, the declared bag features, and
the glue that turns a case's ``offsets`` into the jagged rows a framework without offsets takes.

PyTorch (``torch_bag``) and TorchRec take the case's offsets as they are. TensorFlow's ``embedding_lookup_sparse``
takes a ``SparseTensor`` and Keras-RS's ``EmbedReduce`` a ``RaggedTensor``: their adapters read each bag's
``[start, end)`` off the offsets with :func:`bag_bounds`, by the spec's rules (EMB-BAG-1, 8, 13), so a refused
offset there is the glue's verdict (``decided_by: glue``), never the framework's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

import numpy as np

from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import glue_checks, refusals
from embconf.model.bag import BAG_OPERATIONS
from embconf.model.errors import Decline
from embconf.reference.bag import bag_count, bag_ranges  # the spec's shape and offset rules (EMB-BAG-1, 8, 13)
from embconf.reference.errors import EmbeddingError

OPERATIONS = frozenset(BAG_OPERATIONS)


def bag_bounds(ids: np.ndarray, offsets: Optional[np.ndarray], include_last_offset: bool = False) -> list[range]:
    """Each bag's positions in the flattened ids: the rows of 2-D ids, or the offsets' bags (glue checks)."""
    with glue_checks():
        bag_count(ids, offsets, bool(include_last_offset))  # the shapes first, as the spec orders its checks
        return [range(start, end) for start, end in bag_ranges(ids, offsets, bool(include_last_offset))]


def check_weights_shape(per_sample_weights: Optional[np.ndarray], ids: np.ndarray) -> None:
    """Per-sample weights of another shape than the ids, refused by the glue that pairs them with the ids."""
    if per_sample_weights is not None and np.shape(per_sample_weights) != ids.shape:
        with glue_checks():
            raise EmbeddingError(
                "shape_mismatch", f"per_sample_weights has shape {np.shape(per_sample_weights)}, the ids {ids.shape}"
            )


def jagged_positions(bounds: list[range]) -> tuple[np.ndarray, np.ndarray]:
    """(bag, place in its bag) of every position, bag after bag: a SparseTensor's indices (row-major)."""
    rows = np.array([b for b, bag in enumerate(bounds) for _ in bag], dtype=np.int64)
    places = np.array([j for bag in bounds for j in range(len(bag))], dtype=np.int64)
    return rows, places


@dataclass(frozen=True)
class BagCall:
    """One bag call's inputs, as the spec's operations take them."""

    weight: np.ndarray
    ids: np.ndarray
    offsets: Optional[np.ndarray]
    mode: str
    per_sample_weights: Optional[np.ndarray] = None
    padding_idx: Optional[int] = None
    include_last_offset: bool = False

    def bounds(self) -> list[range]:
        return bag_bounds(self.ids, self.offsets, self.include_last_offset)

    def flat_weights(self) -> Optional[np.ndarray]:
        """The per-sample weights flattened as the ids are (their shape checked by the glue that pairs them)."""
        check_weights_shape(self.per_sample_weights, self.ids)
        return None if self.per_sample_weights is None else self.per_sample_weights.reshape(-1)

    def decline_absent(self, framework: str, padding: bool = True, last_offset: bool = True) -> None:
        """Decline an option the framework has no argument for (its feature is not declared: a guard)."""
        if padding and self.padding_idx is not None:
            raise Decline(f"{framework} has no padding_idx")
        if last_offset and self.include_last_offset:
            raise Decline(f"{framework} takes no offsets with a last one")


class BagOperations:
    """The bag operations, named and called as the spec's, over a framework's :meth:`forward` and :meth:`backward`."""

    def embedding_bag_forward(
        self,
        weight: np.ndarray,
        ids: np.ndarray,
        offsets: Optional[np.ndarray],
        mode: str,
        per_sample_weights: Optional[np.ndarray] = None,
        padding_idx: Optional[int] = None,
        include_last_offset: bool = False,
    ) -> Any:
        return self.forward(BagCall(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset))

    def embedding_bag_backward(
        self,
        weight: np.ndarray,
        ids: np.ndarray,
        offsets: Optional[np.ndarray],
        mode: str,
        grad_output: np.ndarray,
        per_sample_weights: Optional[np.ndarray] = None,
        padding_idx: Optional[int] = None,
        include_last_offset: bool = False,
    ) -> tuple[Any, Any]:
        call = BagCall(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset)
        return self.backward(call, grad_output)

    def forward(self, call: BagCall) -> Any:
        """The pooled output (B, D), as NumPy."""
        raise NotImplementedError

    def backward(self, call: BagCall, grad_output: np.ndarray) -> tuple[Any, Any]:
        """(grad of the table, grad of the per-sample weights or None), as NumPy."""
        raise NotImplementedError


def tape_gradients(
    tf: Any,
    pooled: Callable[[], Any],
    table: Any,
    weights: Any,
    call: BagCall,
    grad_output: np.ndarray,
    wrong_gradient: Union[str, tuple[str, ...]] = (),
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """TensorFlow's gradients of ``pooled()`` to the table and the weights (tensors watched by ``tf.GradientTape``):
    dense NumPy, zeros where nothing flowed; its refusal of an upstream gradient (a ``wrong_gradient`` text) is
    shape_mismatch."""
    watched = [table] + ([weights] if weights is not None else [])
    with tf.GradientTape() as tape:
        tape.watch(watched)
        output = pooled()
    with refusals(Exception, (wrong_gradient, "shape_mismatch")):
        grads = tape.gradient(output, watched, output_gradients=tf.constant(grad_output))
    dense = [to_numpy(tf.convert_to_tensor(g)) if g is not None else None for g in grads]
    grad_table = dense[0] if dense[0] is not None else np.zeros_like(call.weight)
    if weights is None:
        return grad_table, None
    grad_weights = dense[1] if dense[1] is not None else np.zeros(call.ids.shape, call.weight.dtype)
    return grad_table, grad_weights.reshape(call.ids.shape)


class TapedBags(BagOperations):
    """The bag operations of a framework on TensorFlow: :meth:`_source` gives what holds the table, :meth:`_pooled`
    the output from it and the weights, :meth:`_table` the tensor the tape watches; the gradients are
    ``tf.GradientTape``'s (:func:`tape_gradients`)."""

    tf: Any
    framework: str  # its name, as a declined option says it
    wrong_gradient: str = ""  # the framework's words for an upstream gradient of another shape (shape_mismatch)

    def _source(self, call: BagCall) -> Any:
        raise NotImplementedError

    def _inputs(self, call: BagCall) -> tuple[Any, Any]:
        """(what holds the table, the flat weights as a tensor or None); options it has no argument for declined."""
        call.decline_absent(self.framework)
        flat = call.flat_weights()
        return self._source(call), None if flat is None else self.tf.constant(flat)

    def _pooled(self, source: Any, call: BagCall, weights: Any) -> Any:
        raise NotImplementedError

    def _table(self, source: Any) -> Any:
        return source

    def forward(self, call: BagCall) -> Any:
        source, weights = self._inputs(call)
        return to_numpy(self._pooled(source, call, weights))

    def backward(self, call: BagCall, grad_output: np.ndarray) -> tuple[Any, Any]:
        source, weights = self._inputs(call)
        pooled = lambda: self._pooled(source, call, weights)  # noqa: E731
        table = self._table(source)
        return tape_gradients(self.tf, pooled, table, weights, call, grad_output, self.wrong_gradient)
