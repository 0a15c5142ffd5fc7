"""``fbgemm``: FBGEMM's fused row-wise formats on the CPU (``fbgemm-gpu-cpu``, the operators TorchRec serves
quantized recommender tables with) on quantized tables (spec section 17): the conversion operators, the
table-batched lookup ``IntNBitTableBatchedEmbeddingBagsCodegen`` for the 4-bit rows, and PyTorch's
``quantized::embedding_bag_byte_rowwise_offsets`` (FBGEMM's ``EmbeddingSpMDM`` kernel) for the 8-bit ones.

What is FBGEMM's and what is the adapter's:

- ``quantize_table``: ``torch.ops.fbgemm.FloatToFused8BitRowwiseQuantized`` (fused8_rowwise) and
  ``FloatOrHalfToFusedNBitRowwiseQuantizedSBHalf(t, 4)`` (fused4_rowwise): their bytes are the formats'. The 4-bit
  operator refuses a width that is not a multiple of 4 ("ncols needs to be multiple of 2 Bytes"): declined.
- fused4_rowwise lookups and bags: an ``IntNBitTableBatchedEmbeddingBagsCodegen([("t", R, D, SparseType.INT4,
  EmbeddingLocation.HOST)], device="cpu", pooling_mode=NONE | SUM | MEAN, output_dtype=FP32 | FP16)``; its rows
  keep the float16 scale and bias at the FRONT and are padded: the adapter writes the row's nibbles and its four
  scale and bias bytes into the views ``split_embedding_weights()`` gives (FBGEMM places them). The TBE takes
  offsets ending with N (the glue appends it) and even widths only (an odd one is declined). Its default
  ``BoundsCheckMode.WARNING`` reads an id >= R as row 0 and an id -1 (its pruned-row mark) as a zero row
  (:data:`BOUNDS_WARNING`, documented). A weighted bag folds each weight into the row's scale and bias
  (``fma(w*scale, q, acc + w*bias)``, EmbeddingSpMDMNBit_ref); mean multiplies the sum by 1/count, also with
  weights (the spec divides a weighted mean by the weights' sum: those cases fail as FBGEMM answers them).
- fused8_rowwise lookups and bags: ``embedding_bag_byte_rowwise_offsets(qweight, ids, offsets, False, mode, False,
  per_sample_weights, None, False)``; a lookup is a sum over one-id bags. The operator only sums (its ``mode``
  is not read: mode 1 returns the sums, pytorch/pytorch#106105), so an 8-bit mean is declined. It refuses an id outside ``[0, R)``
  ("Index ... is out of bounds": ``index_out_of_range``); float32 outputs only (a float16 case is declined).
- ``quantized_table_bytes``: the width of the conversion operator's output for one zero row (FBGEMM's row
  layout), times the rows (the glue's product; a negative count is the glue's ``invalid_config``).
- Declared: fused8_rowwise, fused4_rowwise, bags with weights, float16 outputs (4-bit), int32 ids.
"""

from __future__ import annotations

import logging
from typing import Any, Optional

import numpy as np

from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import FrameworkAdapter, glue_checks, import_framework, package_version, refusals
from embconf.adapters.quantized_ops import QuantCall, QuantizedOperations
from embconf.model.contract import Capabilities, DocumentedChoice
from embconf.model.errors import Decline
from embconf.model.quantized import QuantFormat
from embconf.reference.errors import EmbeddingError

EXTRA = "torchrec"  # fbgemm-gpu-cpu comes with the torchrec extra (requirements-matrix.txt)
OPERATIONS = frozenset({"quantized_lookup", "quantize_table", "quantized_table_bytes", "quantized_bag_forward"})
FEATURES = frozenset({"quant-fused8_rowwise", "quant-fused4_rowwise", "quant-bag-weights", "float16", "int32_ids"})
OUT_OF_BOUNDS = "is out of bounds"
SUM = 0  # the byte operator's mode (it sums whatever it is told): a lookup is a sum over one-id bags
BOUNDS_WARNING = DocumentedChoice(
    "https://pytorch.org/FBGEMM/fbgemm_gpu-python-api/table_batched_embedding_ops.html",
    "FBGEMM's table-batched embedding runs with bounds_check_mode=BoundsCheckMode.WARNING by default: an id out of "
    "bounds is logged and read as row 0, and the inference kernels read an id -1 as a pruned row (zeros), not "
    "refused (BoundsCheckMode.FATAL would refuse them).",
    requirements=("EMB-QNT-15",),
)


class FbgemmAdapter(QuantizedOperations, FrameworkAdapter):
    kind = "fbgemm"
    framework = "FBGEMM"

    def __init__(self, target: str = "") -> None:
        self.torch = import_framework("torch", EXTRA)
        self.fbgemm = import_framework("fbgemm_gpu", EXTRA)
        inference = import_framework("fbgemm_gpu.split_table_batched_embeddings_ops_inference", EXTRA)
        common = import_framework("fbgemm_gpu.split_table_batched_embeddings_ops_common", EXTRA)
        self.tbe, self.common = inference.IntNBitTableBatchedEmbeddingBagsCodegen, common
        self.sparse_type = import_framework("fbgemm_gpu.split_embedding_configs", EXTRA).SparseType
        self.ops = self.torch.ops.fbgemm
        logging.getLogger("fbgemm_gpu").setLevel(logging.ERROR)  # one line per table built otherwise
        notes = ("conversion ops; IntNBitTableBatchedEmbeddingBagsCodegen (4-bit), embedding_bag_byte_rowwise (8-bit)",)
        caps = Capabilities(OPERATIONS, FEATURES, notes=notes, documented=(BOUNDS_WARNING,))
        super().__init__("fbgemm", self.fbgemm, caps, "FBGEMM fused row-wise (CPU)")
        self._version = package_version("fbgemm-gpu-cpu") or self._version

    def _converted(self, weight: np.ndarray, fmt: QuantFormat) -> Any:
        """FBGEMM's conversion of a float table into ``fmt`` (a torch uint8 tensor)."""
        table = self.torch.from_numpy(np.ascontiguousarray(weight, dtype=np.float32))
        if fmt.kind == "fused8_rowwise":
            return self.ops.FloatToFused8BitRowwiseQuantized(table)
        if fmt.kind != "fused4_rowwise":
            raise Decline(f"FBGEMM has no {fmt.name} rows")
        if table.ndim == 2 and table.shape[1] % 4:
            raise Decline(
                "FBGEMM's 4-bit conversion takes widths that are multiples of 4 (ncols ... multiple of 2 Bytes)"
            )
        return self.ops.FloatOrHalfToFusedNBitRowwiseQuantizedSBHalf(table, 4)

    def quantize(self, weight: np.ndarray, fmt: QuantFormat) -> Any:
        with refusals(RuntimeError, ("dim", "shape_mismatch")):
            return to_numpy(self._converted(weight, fmt))

    def table_bytes(self, num_rows: int, embed_dim: int, fmt: QuantFormat) -> Any:
        row = int(self._converted(np.zeros((1, int(embed_dim)), np.float32), fmt).shape[1])
        if num_rows < 0:
            with glue_checks():
                raise EmbeddingError("invalid_config", f"num_rows must be >= 0, got {num_rows}")
        return row, row * int(num_rows)

    def lookup(self, call: QuantCall) -> Any:
        ids = np.asarray(call.ids).astype(np.int64).reshape(-1)
        one_each = np.arange(ids.size + 1, dtype=np.int64)
        rows = self._pooled(call, ids, one_each, "NONE", None, call.out_dtype)
        return rows.reshape(*np.shape(call.ids), call.embed_dim)

    def bag(self, call: QuantCall, offsets: np.ndarray, mode: str, weights: Optional[np.ndarray]) -> Any:
        ids = np.asarray(call.ids).astype(np.int64)
        ends = np.concatenate([np.asarray(offsets, dtype=np.int64).reshape(-1), [ids.size]])  # offsets end with N
        return self._pooled(call, ids, ends, mode.upper(), weights, "float32")

    def _pooled(
        self, call: QuantCall, ids: np.ndarray, ends: np.ndarray, pooling: str, weights: Optional[np.ndarray], out: str
    ) -> np.ndarray:
        """The rows (pooling NONE) or bags (SUM, MEAN) of ``ids``, bag b from ``ends[b]`` to ``ends[b + 1]``."""
        torch = self.torch
        flat, bounds = torch.from_numpy(ids), torch.from_numpy(ends)
        scaled = None if weights is None else torch.from_numpy(np.ascontiguousarray(weights, dtype=np.float32))
        table = torch.from_numpy(np.ascontiguousarray(call.qweight))
        if call.fmt.kind == "fused8_rowwise":
            if out != "float32":
                raise Decline("FBGEMM's 8-bit row-wise bag returns float32 rows only")
            if pooling == "MEAN":
                raise Decline("quantized::embedding_bag_byte_rowwise_offsets sums: its mode argument is not read")
            starts = bounds[:-1]  # the byte operator takes offsets without N
            with refusals(RuntimeError, (OUT_OF_BOUNDS, "index_out_of_range")):
                pooled = torch.ops.quantized.embedding_bag_byte_rowwise_offsets(
                    table, flat, starts, False, SUM, False, scaled, None, False
                )
            return to_numpy(pooled)
        if call.fmt.kind != "fused4_rowwise":
            raise Decline(f"FBGEMM has no {call.fmt.name} rows")
        kernel = self._kernel(call, pooling, out)
        return to_numpy(kernel(flat, bounds, per_sample_weights=scaled)).reshape(-1, call.embed_dim)

    def _kernel(self, call: QuantCall, pooling: str, out: str) -> Any:
        """A table-batched 4-bit kernel over the case's table: its codes and scale/bias bytes written where
        FBGEMM keeps them (``split_embedding_weights`` views)."""
        if call.embed_dim % 2:
            raise Decline(f"FBGEMM's 4-bit kernels pack whole bytes: width {call.embed_dim} is odd")
        common, sparse = self.common, self.sparse_type
        rows, width = call.qweight.shape[0], -(-call.embed_dim // 2)
        kernel = self.tbe(
            [("t", rows, call.embed_dim, sparse.INT4, common.EmbeddingLocation.HOST)],
            device="cpu",
            pooling_mode=getattr(common.PoolingMode, pooling),
            output_dtype=sparse.FP16 if out == "float16" else sparse.FP32,
        )
        kernel.fill_random_weights()  # allocates the rows
        codes, scale_bias = kernel.split_embedding_weights()[0]
        table = self.torch.from_numpy(np.ascontiguousarray(call.qweight))
        codes.copy_(table[:, :width])
        scale_bias.copy_(table[:, width:])
        return kernel
