"""``mlx_quant``: Apple MLX's ``nn.QuantizedEmbedding`` and ``mx.quantize`` (affine mode, its CPU build on Linux)
on quantized tables (spec section 17): the ``affine<b>_g<G>`` formats are MLX's own.

What is MLX's and what is the adapter's:

- ``quantized_lookup``: an ``nn.QuantizedEmbedding(R, D, group_size=G, bits=b)`` whose ``weight`` (uint32
  words), ``scales`` and ``biases`` are set to the table's (the row bytes split by
  :func:`embconf.reference.quantized_codec.affine_arrays`: the layout is MLX's arrays back to back), called on the
  ids. It gathers the packed rows, then ``mx.dequantize`` computes ``w * scales`` and ``+ biases`` in the scales'
  dtype: two roundings, float16 ones for a float16 table (the spec's tolerance for affine lookups). Its output
  dtype is the scales' dtype: a case asking another out_dtype is declined (MLX has no such argument), so bfloat16
  tables are never looked up.
- ``quantize_table``: ``mx.quantize(weight, G, b)`` on the table in the format's dtype (float32, or the float16 /
  bfloat16 values the case holds), its three arrays written back to back as the row's bytes. Its refusal of a
  width that is not a multiple of the group (``ValueError [quantize] The last dimension ... divisible``) and of a
  table that is not a matrix is ``shape_mismatch``.
- ``quantized_table_bytes``: the bytes of MLX's own three arrays for one row (``nbytes`` of ``mx.quantize`` of a
  zero row), times the rows (the glue's product; a negative count is the glue's ``invalid_config``).
- MLX does not check ids: a negative id wraps and an id >= R reads outside the table (garbage, or a segmentation
  fault), as ``nn.Embedding`` does (docs/upstream.md ``mlx-ids-outside-the-table``). Unlike ``nn.Embedding``,
  ``nn.QuantizedEmbedding`` refuses a scalar id (``mx.dequantize`` of one gathered row: "must have at least 2
  dimension") and an empty batch of ids ("[reshape] Cannot infer the shape of an empty array"): those cases are
  errors as MLX raises them (docs/upstream.md ``mlx-quantized-embedding-scalar-id``, ``...-empty-ids``). MLX 0.32.4
  quantizes a 1-bit group with ``bias = min`` and ``scale = max(max - min, 1e-7)``, without EMB-QNT-12's edge rule
  (EMB-QNT-V4's answer at one bit; its other widths follow the rule): a 1-bit quantize case fails as MLX answers it.
  Declared: the affine formats, float16 outputs, int32 ids; no bags (MLX pools nothing).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import FrameworkAdapter, glue_checks, import_framework, refusals
from embconf.adapters.mlx import EXTRA
from embconf.adapters.mlx_rope import mlx_array
from embconf.adapters.quantized_ops import QuantCall, QuantizedOperations
from embconf.model.contract import Capabilities
from embconf.model.dtypes import numpy_dtype
from embconf.model.errors import Decline
from embconf.model.quantized import QuantFormat
from embconf.reference.errors import EmbeddingError
from embconf.reference.quantized_codec import affine_arrays

OPERATIONS = frozenset({"quantized_lookup", "quantize_table", "quantized_table_bytes"})
FEATURES = frozenset({"quant-affine", "float16", "int32_ids"})
QUANTIZE = "[quantize]"  # MLX's refusals of the array it is given (group size and bits are the format's: valid)


class MlxQuantAdapter(QuantizedOperations, FrameworkAdapter):
    kind = "mlx_quant"
    framework = "MLX"

    def __init__(self, target: str = "") -> None:
        self.mx = import_framework("mlx.core", EXTRA)
        self.nn = import_framework("mlx.nn", EXTRA)
        caps = Capabilities(OPERATIONS, FEATURES, notes=(f"affine mode, device {self.mx.default_device()}",))
        super().__init__("mlx_quant", self.mx, caps, "MLX nn.QuantizedEmbedding, mx.quantize")

    @staticmethod
    def _affine(fmt: QuantFormat) -> tuple[int, int]:
        if fmt.kind != "affine" or fmt.group is None:
            raise Decline(f"MLX's affine mode has no {fmt.name} layout")
        return fmt.group, fmt.bits

    def lookup(self, call: QuantCall) -> Any:
        group, bits = self._affine(call.fmt)
        if call.out_dtype != call.fmt.scale_dtype:
            raise Decline(f"MLX's output dtype is its scales' ({call.fmt.scale_dtype}), never {call.out_dtype}")
        words, scales, biases = affine_arrays(call.qweight, call.fmt, call.embed_dim)
        dtype = numpy_dtype(call.fmt.scale_dtype)
        embedding = self.nn.QuantizedEmbedding(1, call.embed_dim, group_size=group, bits=bits)  # no R-row init
        embedding.num_embeddings = call.qweight.shape[0]
        embedding.weight = mlx_array(self.mx, words)
        embedding.scales = mlx_array(self.mx, scales.view(dtype))
        embedding.biases = mlx_array(self.mx, biases.view(dtype))
        output = embedding(mlx_array(self.mx, np.asarray(call.ids)))
        self.mx.eval(output)
        return to_numpy(output)

    def quantize(self, weight: np.ndarray, fmt: QuantFormat) -> Any:
        group, bits = self._affine(fmt)
        weight = np.asarray(weight)
        if weight.ndim > 2:
            with glue_checks():  # MLX quantizes a stack of matrices too; the spec's table is one matrix
                raise EmbeddingError("shape_mismatch", f"weight must be 2-D, got {weight.ndim}-D")
        table = mlx_array(self.mx, weight.astype(numpy_dtype(fmt.scale_dtype)))
        with quantize_errors():
            arrays = self.mx.quantize(table, group, bits)
            self.mx.eval(*arrays)
        rows = weight.shape[0]
        return np.concatenate([as_row_bytes(to_numpy(a), rows) for a in arrays[:3]], axis=1)

    def table_bytes(self, num_rows: int, embed_dim: int, fmt: QuantFormat) -> Any:
        group, bits = self._affine(fmt)
        if num_rows < 0:
            with glue_checks():
                raise EmbeddingError("invalid_config", f"num_rows must be >= 0, got {num_rows}")
        zero = self.mx.zeros((1, int(embed_dim)), dtype=getattr(self.mx, fmt.scale_dtype))
        with quantize_errors():
            arrays = self.mx.quantize(zero, group, bits)
            self.mx.eval(*arrays)
        row = sum(int(a.nbytes) for a in arrays[:3])
        return row, row * int(num_rows)


def as_row_bytes(array: np.ndarray, rows: int) -> np.ndarray:
    """An MLX array's bytes (little-endian, bfloat16 as its bits), one line per table row."""
    raw = np.ascontiguousarray(array)
    if raw.dtype.name == "bfloat16":
        raw = raw.view(np.uint16)
    return raw.view(np.uint8).reshape(rows, -1)


def quantize_errors() -> AbstractContextManager[None]:
    """MLX's refusal of a width its groups do not divide, or of an array that is no matrix, as shape_mismatch (a
    group size or bit width it refuses cannot reach it: the format's name holds only the ones it has)."""
    return refusals(ValueError, (QUANTIZE, "shape_mismatch"))
