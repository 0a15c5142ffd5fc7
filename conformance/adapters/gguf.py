"""``gguf``: the ``gguf`` package's NumPy quantizer (``gguf.quants``, llama.cpp's gguf-py, what its model converters
write GGUF files with) on quantized tables (spec section 17), against ggml's C (the ``ggml_quant`` column).

What is gguf's and what is the adapter's:

- ``quantize_table``: ``gguf.quants.quantize(weight, GGMLQuantizationType.Q8_0 | Q4_0)``, uint8 rows of the
  block structs; its refusal of a width that is not a multiple of the block (``QuantError "Can't quantize
  tensor with shape ..."``) is ``shape_mismatch``.
- ``quantized_lookup``: gguf-py has no lookup, it dequantizes tensors: the adapter takes the ids' rows of bytes
  (the glue: an id outside ``[0, R)`` is ``index_out_of_range`` decided by the glue, never a NumPy wrap) and
  ``gguf.quants.dequantize(rows, type)`` gives their float32 values; a float16 output is NumPy's ``astype``
  (one rounding: ``d * q`` is exact in float32).
- ``quantized_table_bytes``: ``gguf.quants.quant_shape_to_byte_shape((R, D), type)`` (its ``ValueError`` for a
  width that is not a multiple of the block is ``shape_mismatch``); it checks nothing else, so a negative row
  count or a width of 0 is sized as any other (a deviation of EMB-QNT-13: its answer, not refused).
- Declared: formats q8_0 and q4_0 (gguf-py also has Q4_1, Q5_*, K-quants' dequantizers: no spec format), float16
  outputs, int32 ids; no bags.
- Measured against ggml (``ggml_quantize_chunk``): byte-identical on q8_0 and q4_0 for random, integer, tie,
  tiny and huge tables; they differ on a NaN in a block (gguf stores d = NaN, ggml skips the NaN) and on a block
  of -0.0 (gguf stores d = +0.0, ggml -0.0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.adapters.frameworks import FrameworkAdapter, glue_checks, import_framework, package_version, refusals
from embconf.adapters.quantized_ops import QuantCall, QuantizedOperations
from embconf.model.contract import Capabilities
from embconf.model.errors import Decline
from embconf.model.quantized import QuantFormat
from embconf.reference.lookup import validate_ids

EXTRA = "gguf"
TYPES = {"q8_0": "Q8_0", "q4_0": "Q4_0"}
OPERATIONS = frozenset({"quantized_lookup", "quantize_table", "quantized_table_bytes"})
FEATURES = frozenset({"quant-q8_0", "quant-q4_0", "float16", "int32_ids"})
NOT_A_MULTIPLE = ("Can't quantize tensor with shape", "is not a multiple of")


class GgufAdapter(QuantizedOperations, FrameworkAdapter):
    kind = "gguf"
    framework = "gguf-py"

    def __init__(self, target: str = "") -> None:
        self.gguf = import_framework("gguf", EXTRA)
        self.quants = import_framework("gguf.quants", EXTRA)
        caps = Capabilities(OPERATIONS, FEATURES, notes=("gguf.quants.quantize / dequantize (NumPy)",))
        super().__init__("gguf", self.gguf, caps, "gguf-py NumPy quantizer (Q8_0 / Q4_0)")
        self._version = package_version("gguf") or self._version

    def _type(self, fmt: QuantFormat) -> Any:
        if fmt.kind not in TYPES:
            raise Decline(f"gguf-py has no {fmt.name} type")
        return getattr(self.gguf.GGMLQuantizationType, TYPES[fmt.kind])

    def lookup(self, call: QuantCall) -> Any:
        kind = self._type(call.fmt)
        with glue_checks():  # gguf-py dequantizes whole tensors: picking the rows is the glue's
            ids = validate_ids(call.ids, call.qweight.shape[0])
        rows = call.qweight[ids.reshape(-1)]
        values = self.quants.dequantize(rows, kind) if rows.size else np.zeros((0, call.embed_dim), np.float32)
        return np.asarray(values).astype(call.out_dtype).reshape(*ids.shape, call.embed_dim)

    def quantize(self, weight: np.ndarray, fmt: QuantFormat) -> Any:
        kind = self._type(fmt)
        with refusals((self.quants.QuantError, ValueError), (NOT_A_MULTIPLE, "shape_mismatch")):
            return np.asarray(self.quants.quantize(np.asarray(weight, dtype=np.float32), kind))

    def table_bytes(self, num_rows: int, embed_dim: int, fmt: QuantFormat) -> Any:
        kind = self._type(fmt)
        with refusals(ValueError, (NOT_A_MULTIPLE, "shape_mismatch")):
            rows, row = self.quants.quant_shape_to_byte_shape((int(num_rows), int(embed_dim)), kind)
        return int(row), int(rows) * int(row)
