"""``keras_rs``: Keras Recommenders' ``keras_rs.layers.EmbedReduce`` (an embedding with a combiner) on Keras's
TensorFlow backend (the backend that takes ragged bags), gradients by ``tf.GradientTape``, against the spec's bags.

What is Keras-RS's and what is the adapter's:

- ``EmbedReduce(V, D, combiner=mode, dtype=table's)``, built and its ``embeddings`` set to the case's table, called
  as ``layer(ids, weights)``: 2-D ids (the fixed-length form) go in as they are; 1-D ids with offsets go in as the
  ``tf.RaggedTensor`` of the case's bags (row splits read off the offsets by the glue,
  :mod:`embconf.adapters.bags`, whose refusals are ``decided_by: glue``), the weights as one ragged the same way.
  The backward is ``tape.gradient`` to the table's variable and the weights.
- Declared: combiners sum, mean and sqrtn with weights (a weighted mean divides by the weights' sum; a zero
  divisor gives a zero row, ``divide_no_nan``), the 2-D form, float64, float16, bfloat16 and int32 ids. It has no
  ``max``, no ``padding_idx`` (``mask_zero`` masks id 0 for later layers only) and no offsets of its own.
- Keras's refusals mapped: TensorFlow's range check (``indices[i] = n is not in [0, V)``) to
  ``index_out_of_range``, an unknown combiner to ``invalid_config``. Keras's ``ops.take`` counts a negative id
  from the end of the table, as NumPy does (measured): that case fails.
- ``DistributedEmbedding``, its other bag lookup, needs a TPU's SparseCore (its CPU path is a plain lookup);
  it is not run.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from embconf.adapters.bags import OPERATIONS, bag_bounds, check_weights_shape, decline_absent
from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import FrameworkAdapter, import_framework, refusals
from embconf.adapters.keras import _import_keras
from embconf.model.contract import Capabilities

EXTRA = "keras-rs"
FEATURES = frozenset({"bag-sum", "bag-mean", "bag-sqrtn", "bag-weights", "bag-weighted-mean", "bag-2d"}) | frozenset(
    {"float64", "float16", "bfloat16", "int32_ids"}
)


class KerasRsAdapter(FrameworkAdapter):
    kind = "keras_rs"

    def __init__(self, target: str = "") -> None:
        self.keras = _import_keras("tensorflow")
        self.tf = import_framework("tensorflow", EXTRA)
        self.rs = import_framework("keras_rs", EXTRA)
        caps = Capabilities(OPERATIONS, FEATURES, notes=("keras_rs.layers.EmbedReduce, backend tensorflow",))
        super().__init__("keras_rs", self.rs, caps, "Keras-RS EmbedReduce (tensorflow)")

    def _layer(self, weight: np.ndarray, mode: str) -> Any:
        with refusals(ValueError, ("Invalid `combiner`", "invalid_config")):
            layer = self.rs.layers.EmbedReduce(weight.shape[0], weight.shape[1], combiner=mode, dtype=str(weight.dtype))
        layer.build((None, None))
        layer.embeddings.assign(weight)
        return layer

    def _bags(self, values: Any, ids: np.ndarray, offsets: Optional[np.ndarray], last: bool) -> Any:
        """``values`` (the ids, or the weights) as the layer takes them: dense for 2-D ids, else ragged bags."""
        if ids.ndim == 2 and offsets is None:
            return self.tf.reshape(values, ids.shape)
        bounds = bag_bounds(ids, offsets, last)
        splits = np.array([bag.start for bag in bounds] + [ids.shape[0]], dtype=np.int64)
        return self.tf.RaggedTensor.from_row_splits(values, splits)

    def _pooled(self, layer: Any, ids: np.ndarray, offsets: Any, weights: Any, last: bool) -> Any:
        bags = self._bags(self.tf.constant(ids.reshape(-1)), ids, offsets, last)
        weighted = None if weights is None else self._bags(weights, ids, offsets, last)
        with refusals(Exception, (" is not in [0, ", "index_out_of_range")):
            return layer(bags, weighted)

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
        decline_absent("Keras-RS", padding_idx, include_last_offset)
        check_weights_shape(per_sample_weights, ids)
        weights = None if per_sample_weights is None else self.tf.constant(per_sample_weights.reshape(-1))
        return to_numpy(self._pooled(self._layer(weight, mode), ids, offsets, weights, False))

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
        decline_absent("Keras-RS", padding_idx, include_last_offset)
        check_weights_shape(per_sample_weights, ids)
        tf = self.tf
        layer = self._layer(weight, mode)
        weights = None if per_sample_weights is None else tf.constant(per_sample_weights.reshape(-1))
        watched = [layer.embeddings.value] + ([weights] if weights is not None else [])
        with tf.GradientTape() as tape:
            tape.watch(watched)
            output = self._pooled(layer, ids, offsets, weights, False)
        with refusals(Exception, ("Incompatible shapes", "shape_mismatch")):
            grads = tape.gradient(output, watched, output_gradients=tf.constant(grad_output))
        dense = [to_numpy(tf.convert_to_tensor(g)) if g is not None else None for g in grads]
        grad_table = dense[0] if dense[0] is not None else np.zeros_like(weight)
        if weights is None:
            return grad_table, None
        grad_weights = dense[1] if dense[1] is not None else np.zeros(weights.shape, weight.dtype)
        return grad_table, grad_weights.reshape(ids.shape)
