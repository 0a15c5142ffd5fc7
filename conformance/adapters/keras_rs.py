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
  ``index_out_of_range``, an unknown combiner to ``invalid_config``, and in the backward TensorFlow's refusal of an
  upstream gradient of another shape (``Incompatible shapes``) to ``shape_mismatch``. Measured: Keras's
  ``ops.take`` counts a negative id from the end of the table, as NumPy does, and a long float16 bag is summed in
  float16 (``ops.sum``): those cases fail.
- ``DistributedEmbedding``, its sharded lookup, places a table that is not on a TPU's SparseCore (on a CPU, every
  table: placement ``default_device``) in this same ``EmbedReduce``: it is not run separately.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.adapters.bags import OPERATIONS, BagCall, TapedBags
from embconf.adapters.frameworks import FrameworkAdapter, import_framework, refusals
from embconf.adapters.keras import _import_keras
from embconf.model.contract import Capabilities

EXTRA = "keras-rs"
WRONG_GRADIENT = "Incompatible shapes"  # TensorFlow's refusal to combine an upstream gradient of another shape
FEATURES = frozenset({"bag-sum", "bag-mean", "bag-sqrtn", "bag-weights", "bag-weighted-mean", "bag-2d"}) | frozenset(
    {"float64", "float16", "bfloat16", "int32_ids"}
)


class KerasRsAdapter(TapedBags, FrameworkAdapter):
    framework = "Keras-RS"
    wrong_gradient = WRONG_GRADIENT
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

    def _bags(self, values: Any, call: BagCall) -> Any:
        """``values`` (the ids, or the weights) as the layer takes them: dense for 2-D ids, else ragged bags."""
        if call.ids.ndim == 2 and call.offsets is None:
            return self.tf.reshape(values, call.ids.shape)
        splits = np.array([bag.start for bag in call.bounds()] + [call.ids.shape[0]], dtype=np.int64)
        return self.tf.RaggedTensor.from_row_splits(values, splits)

    def _pooled(self, layer: Any, call: BagCall, weights: Any) -> Any:
        bags = self._bags(self.tf.constant(call.ids.reshape(-1)), call)
        weighted = None if weights is None else self._bags(weights, call)
        with refusals(Exception, (" is not in [0, ", "index_out_of_range")):
            return layer(bags, weighted)

    def _table(self, layer: Any) -> Any:
        return layer.embeddings.value

    def _source(self, call: BagCall) -> Any:
        return self._layer(call.weight, call.mode)
