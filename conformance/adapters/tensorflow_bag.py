"""``tensorflow_bag`` / ``tensorflow_bag:safe``: TensorFlow's ``tf.nn.embedding_lookup_sparse`` or
``tf.nn.safe_embedding_lookup_sparse``, gradients by ``tf.GradientTape``, against the spec's bags (section 16).

What is TensorFlow's and what is the adapter's:

- The ids go in as the ``SparseTensor`` of the case's bags (bag b's k-th id at index ``[b, k]``, dense shape
  ``[B, longest bag]``), the per-sample weights as one of the same indices; the mode is the ``combiner``
  (``sum``, ``mean``, ``sqrtn``). Reading the bags off ``offsets`` is the adapter's (:mod:`embconf.adapters.bags`):
  a refused offset, 1-D ids without offsets and weights of another shape are the glue's verdicts. The backward is
  ``tape.gradient(output, [table, weights], output_gradients=grad_output)``, the table's ``IndexedSlices`` made
  dense. Nothing else is checked.
- Declared: modes sum, mean and sqrtn, weights in all three (a weighted mean divides by the weights' sum),
  float64, float16, bfloat16 and int32 ids. TensorFlow has no ``max`` combiner, no ``padding_idx`` and no
  offsets of its own (so no ``include_last_offset``); the 2-D form is not declared either (it takes no dense ids).
- ``tensorflow_bag:safe`` declares the bag conventions it follows (EMB-BAG-V1, V2): ids < 0 are dropped, not
  refused (``drop_negative_ids``), and positions whose weight is <= 0 are dropped (``prune_nonpositive_weights``).
- TensorFlow's own refusals mapped: its range check (``indices[i] == n out of range [0, V)``) to
  ``index_out_of_range``; an unknown combiner (``combiner must be one of``) to ``invalid_config``; in the
  backward, ``safe_``'s refusal to reshape an upstream gradient of another size to ``shape_mismatch``
  (``embedding_lookup_sparse`` takes one with more rows without a word: measured).
- ``safe_embedding_lookup_sparse`` prunes weights <= 0 only when the combiner is not ``sum`` (its code: ``if
  combiner != "sum"``), though its documentation says any id with a non-positive weight is pruned: the
  convention's sum case fails (docs/upstream-findings.yaml).
- ``embedding_lookup_sparse`` documents that it assumes every row has an id: a bag that is empty at the end of
  the batch has no output row (:data:`EMPTY_ROWS_ASSUMED`); ``safe_embedding_lookup_sparse`` returns zero rows.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from embconf.adapters.bags import OPERATIONS, BagCall, TapedBags, jagged_positions
from embconf.adapters.frameworks import FrameworkAdapter, import_framework, refusals
from embconf.model.bag_conventions import BagConvention
from embconf.model.contract import Capabilities, DocumentedChoice

EXTRA = "tensorflow"
TARGETS = {"": "embedding_lookup_sparse", "safe": "safe_embedding_lookup_sparse"}
FEATURES = frozenset({"bag-sum", "bag-mean", "bag-sqrtn", "bag-weights", "bag-weighted-mean"}) | frozenset(
    {"float64", "float16", "bfloat16", "int32_ids"}
)
UNKNOWN_COMBINER = "combiner must be one of"
WRONG_GRADIENT = "Input to reshape is a tensor with"  # safe_'s gradient refuses an upstream gradient of another size
EMPTY_ROWS_ASSUMED = DocumentedChoice(
    "https://www.tensorflow.org/api_docs/python/tf/nn/embedding_lookup_sparse",
    "tf.nn.embedding_lookup_sparse assumes that there is at least one id for each row (no rows with empty "
    "features): its output has a row per bag up to the last bag holding an id, so bags empty at the end of the "
    "batch are missing from it (safe_embedding_lookup_sparse returns zero rows for them).",
    requirements=("EMB-BAG-6",),
)


class TensorFlowBagAdapter(TapedBags, FrameworkAdapter):
    framework = "TensorFlow"
    wrong_gradient = WRONG_GRADIENT
    kind = "tensorflow_bag"
    targets = tuple(TARGETS)

    def __init__(self, target: str = "") -> None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # its start-up notices are no part of a report
        self.tf = import_framework("tensorflow", EXTRA)
        self.lookup = getattr(self.tf.nn, TARGETS[target])
        safe = target == "safe"
        conventions = frozenset(BagConvention) if safe else frozenset()
        caps = Capabilities(
            OPERATIONS,
            FEATURES,
            notes=(f"tf.nn.{TARGETS[target]}",),
            documented=() if safe else (EMPTY_ROWS_ASSUMED,),
            conventions=conventions,
        )
        name = f"tensorflow_bag:{target}" if target else "tensorflow_bag"
        super().__init__(name, self.tf, caps, f"TensorFlow {TARGETS[target]}")

    def _sparse(self, call: BagCall, values: Any) -> Any:
        """``values`` (the ids, or the weights) at the SparseTensor indices of the case's bags."""
        bounds = call.bounds()
        rows, places = jagged_positions(bounds)
        width = max((len(bag) for bag in bounds), default=0)
        indices = np.stack([rows, places], axis=1) if rows.size else np.zeros((0, 2), np.int64)
        return self.tf.SparseTensor(indices, values, [len(bounds), max(width, 1)])

    def _pooled(self, table: Any, call: BagCall, weights: Any) -> Any:
        sparse_ids = self._sparse(call, self.tf.constant(call.ids.reshape(-1)))
        sparse_weights = None if weights is None else self._sparse(call, weights)
        with refusals(Exception, (" out of range [0, ", "index_out_of_range"), (UNKNOWN_COMBINER, "invalid_config")):
            return self.lookup(table, sparse_ids, sparse_weights, combiner=call.mode)

    def _source(self, call: BagCall) -> Any:
        return self.tf.constant(call.weight)
