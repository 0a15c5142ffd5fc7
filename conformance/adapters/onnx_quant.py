"""``onnxruntime_quant``: ONNX Runtime's ``com.microsoft`` ``GatherBlockQuantized`` (the gather ONNX Runtime GenAI
runs on block-quantized token tables) on its CPU provider, and its weight-only quantizer for Gather, against the
spec's ggml block formats (section 17).

What is ONNX Runtime's and what is the adapter's:

- ``quantized_lookup``: a one-node model ``GatherBlockQuantized(data, ids, scales)`` (``gather_axis=0``,
  ``quantize_axis=1``, ``block_size=32``) with uint8 ``data`` and no zero points, so ONNX Runtime applies its
  default zero point ``2^(bits-1)``: ``value = (data - zp) * scale``. That is ggml's Q4_0 (bits 4: ``(q - 8) d``)
  and Q8_0 (bits 8, the int8 ``q`` stored as ``q + 128``), re-encoded by the glue, exactly: a Q8_0 byte has its top
  bit flipped; a Q4_0 block's nibbles (element ``j`` low, ``j + 16`` high) are re-packed as ONNX Runtime reads
  them (element ``2k`` low, ``2k + 1`` high); the block's float16 ``d`` becomes the ``scales`` input, float16 for
  a float16 output and float32 (exact) for a float32 one (the output dtype is the scales'). The product is
  ONNX Runtime's, one rounding. One session per (bits, scale dtype, id dtype), cached.
- ONNX Runtime does not refuse an id: one in ``[-R, 0)`` counts from the back (ONNX's Gather semantics) and one
  outside ``[-R, R)`` gives a row of zeros (docs/upstream.md ``onnxruntime-gather-block-quantized-zero-row``).
- ``quantize_table`` (q4_0): ``DefaultWeightOnlyQuantizer.quantize_ndarray(weight, 1, 32, True)`` of
  ``onnxruntime.quantization.matmul_nbits_quantizer``, what its ``quantize_gather`` writes into a model: per block
  ``m`` = the max if ``|max| > |min|`` else the min, ``scale = m / -8``, ``q = round(x / scale)`` (NumPy: a tie to
  even, a division) clipped to ``[-8, 7]``, int4 in adjacent pairs and float32 scales; the glue stores ``q + 8`` in
  ggml's nibble order and the scale as float16 (ggml stores its float32 ``d`` the same way). So it declares the
  convention ``round_half_even`` (EMB-QNT-V1); where ``|max| = |min|`` it keeps the minimum (ggml the first) and
  it pads a width that is not a multiple of 32 (a last short block) instead of refusing it: those cases fail as
  it answers them.
- Declared: q8_0 and q4_0 lookups, q4_0 quantization, float16 outputs, int32 ids; no sizes, no bags.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.adapters.frameworks import FrameworkAdapter, import_framework
from embconf.adapters.onnxruntime import ELEMENT_TYPES, EXTRA
from embconf.adapters.quantized_ops import QuantCall, QuantizedOperations
from embconf.model.contract import Capabilities
from embconf.model.errors import Decline
from embconf.model.quantize_conventions import QuantizeConvention
from embconf.model.quantized import GGML_BLOCK, QuantFormat

OPERATIONS = frozenset({"quantized_lookup", "quantize_table"})
FEATURES = frozenset({"quant-q8_0", "quant-q4_0", "float16", "int32_ids"})
BITS = {"q8_0": 8, "q4_0": 4}
HALF = GGML_BLOCK // 2


class OnnxQuantAdapter(QuantizedOperations, FrameworkAdapter):
    kind = "onnxruntime_quant"
    framework = "ONNX Runtime"

    def __init__(self, target: str = "") -> None:
        self.ort = import_framework("onnxruntime", EXTRA)
        self.onnx = import_framework("onnx", EXTRA)
        self.ort.set_default_logger_severity(4)
        self._sessions: dict[tuple[int, str, str], Any] = {}
        caps = Capabilities(
            OPERATIONS,
            FEATURES,
            notes=(
                f"GatherBlockQuantized (com.microsoft), block_size 32, CPUExecutionProvider; onnx {self.onnx.__version__}",
            ),
            conventions=frozenset({QuantizeConvention.ROUND_HALF_EVEN}),
        )
        super().__init__("onnxruntime_quant", self.ort, caps, "ONNX Runtime GatherBlockQuantized")

    def lookup(self, call: QuantCall) -> Any:
        if call.fmt.kind not in BITS:
            raise Decline(f"GatherBlockQuantized has no {call.fmt.name} layout (integer zero points only)")
        rows, blocks = call.qweight.shape[0], call.embed_dim // GGML_BLOCK
        table = call.qweight.reshape(rows, blocks, -1)
        scales = np.ascontiguousarray(table[..., :2]).view(np.float16).reshape(rows, blocks).astype(call.out_dtype)
        body = table[..., 2:]
        if call.fmt.kind == "q8_0":
            data = (body ^ 0x80).reshape(rows, -1)  # int8 q as the uint8 q + 128 (zero point 128)
        else:
            codes = np.concatenate([body & 15, body >> 4], axis=-1)  # ggml: element j low, j + 16 high
            data = (codes[..., 0::2] | (codes[..., 1::2] << 4)).reshape(rows, -1)  # ONNX: 2k low, 2k + 1 high
        ids = np.asarray(call.ids)
        session = self._session(BITS[call.fmt.kind], call.out_dtype, ids.dtype.name)
        feeds = {"data": np.ascontiguousarray(data, dtype=np.uint8), "ids": ids, "scales": scales}
        (output,) = session.run(None, feeds)
        return output

    def _session(self, bits: int, scale_dtype: str, ids_dtype: str) -> Any:
        key = (bits, scale_dtype, ids_dtype)
        if key not in self._sessions:
            self._sessions[key] = self._build(*key)
        return self._sessions[key]

    def _build(self, bits: int, scale_dtype: str, ids_dtype: str) -> Any:
        helper, proto = self.onnx.helper, self.onnx.TensorProto
        if ids_dtype not in ("int64", "int32"):
            raise Decline(f"GatherBlockQuantized takes int32 or int64 indices, not {ids_dtype}")
        node = helper.make_node(
            "GatherBlockQuantized",
            ["data", "ids", "scales"],
            ["output"],
            domain="com.microsoft",
            gather_axis=0,
            quantize_axis=1,
            block_size=GGML_BLOCK,
            bits=bits,
        )
        scale_type = getattr(proto, ELEMENT_TYPES[scale_dtype])
        graph = helper.make_graph(
            [node],
            "quantized_lookup",
            [
                helper.make_tensor_value_info("data", proto.UINT8, None),
                helper.make_tensor_value_info("ids", getattr(proto, ELEMENT_TYPES[ids_dtype]), None),
                helper.make_tensor_value_info("scales", scale_type, None),
            ],
            [helper.make_tensor_value_info("output", scale_type, None)],
        )
        opsets = [helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)]
        model = helper.make_model(graph, opset_imports=opsets)
        model.ir_version = 10
        options = self.ort.SessionOptions()
        options.log_severity_level = 4
        return self.ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])

    def quantize(self, weight: np.ndarray, fmt: QuantFormat) -> Any:
        if fmt.kind != "q4_0":
            raise Decline(f"ONNX Runtime's Gather quantizer writes 4-bit blocks only, not {fmt.name}")
        quantizer = import_framework("onnxruntime.quantization.matmul_nbits_quantizer", EXTRA)
        table = np.asarray(weight, dtype=np.float32)
        packed, scales, _ = quantizer.DefaultWeightOnlyQuantizer.quantize_ndarray(table, 1, GGML_BLOCK, True)
        rows, width = table.shape
        pairs = np.asarray(packed, dtype=np.uint8).reshape(-1)
        q = np.stack([pairs & 15, pairs >> 4], axis=-1).reshape(-1)[: rows * width].reshape(rows, -1)
        nibbles = (q.astype(np.int16) ^ 8).astype(np.uint8)  # int4 two's complement + 8 = the unsigned nibble
        blocks = -(-width // GGML_BLOCK)
        padded = np.zeros((rows, blocks * GGML_BLOCK), dtype=np.uint8)
        padded[:, :width] = nibbles
        codes = padded.reshape(rows, blocks, GGML_BLOCK)
        body = codes[..., :HALF] | (codes[..., HALF:] << 4)
        head = np.asarray(scales, dtype=np.float32).reshape(rows, blocks, 1).astype(np.float16).view(np.uint8)
        return np.concatenate([head, body], axis=-1).reshape(rows, -1)
