"""``torchao``: PyTorch's torchao weight-only quantization of ``nn.Embedding`` (``quantize_(model,
IntxWeightOnlyConfig(weight_dtype=torch.int8 | torch.int4, granularity=PerGroup(32)), filter_fn=...)``, whose
weight becomes an ``IntxUnpackedToInt8Tensor``) on the spec's ggml block formats (section 17).

What is torchao's and what is the adapter's:

- torchao keeps no byte layout of its own: an ``IntxUnpackedToInt8Tensor`` holds one int8 per value, a scale and
  an integer zero point per block. A Q8_0 table is exactly such a tensor (``target_dtype=torch.int8``,
  ``block_size=(1, 32)``, scale ``d``, zero point 0) and so is a Q4_0 one (``torch.int4``, values ``q - 8``): the
  glue reads the blocks' integers and ``d`` (:func:`embconf.reference.quantized_codec.split_rows`) into it.
- ``quantized_lookup``: an ``nn.Embedding`` whose weight is that tensor, called on the ids: torchao's
  ``aten.embedding`` override dequantizes the table (``(q - zero_point) * scale`` in the output dtype: float32, or
  float16 for a float16 output, one rounding) and calls ``F.embedding``, whose ``IndexError`` for an id outside
  ``[0, R)`` (negative ones too) is ``index_out_of_range``.
- ``quantize_table``: ``IntxUnpackedToInt8Tensor.from_hp(weight, (1, 32), torch.int8 | torch.int4,
  intx_choose_qparams_algorithm=None, custom_scale=d, custom_zero_point=0)``: torchao's ``quantize_affine``
  (``clamp(round(x * (1 / scale)), qmin, qmax)``, ``torch.round``: a tie to even) with the format's float32 scale
  as the custom scale it takes (the glue computes ``d``: ``amax / 127`` for Q8_0, ``m / -8`` for Q4_0, as the spec
  does; torchao's own ``choose_qparams_affine`` picks ``amax / 127.5`` and ``amax / 7.5``, no spec format).
  So it declares ``round_half_even`` (EMB-QNT-V1). A width that is not a multiple of 32 fails its block assertion
  (``AssertionError ... divisible by block_size``): ``shape_mismatch``.
- Declared: q8_0 and q4_0 lookups and quantization, float16 outputs, int32 ids; no sizes (no byte layout), no
  bags (``nn.EmbeddingBag`` over the tensor is NotImplementedError in torchao 0.16).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import FrameworkAdapter, glue_checks, import_framework, refusals
from embconf.adapters.quantized_ops import QuantCall, QuantizedOperations
from embconf.model.contract import Capabilities
from embconf.model.errors import Decline
from embconf.model.quantize_conventions import QuantizeConvention
from embconf.model.quantized import GGML_BLOCK, QuantFormat
from embconf.reference.errors import EmbeddingError
from embconf.reference.quantized_codec import split_rows, write_scales

EXTRA = "torchao"
OPERATIONS = frozenset({"quantized_lookup", "quantize_table"})
FEATURES = frozenset({"quant-q8_0", "quant-q4_0", "float16", "int32_ids"})
TARGETS = {"q8_0": ("int8", 0, 127.0), "q4_0": ("int4", 8, -8.0)}  # torch dtype, nibble offset, d = m / divisor


class TorchaoAdapter(QuantizedOperations, FrameworkAdapter):
    kind = "torchao"
    framework = "torchao"

    def __init__(self, target: str = "") -> None:
        self.torch = import_framework("torch", EXTRA)
        self.torchao = import_framework("torchao", EXTRA)
        self.tensor = import_framework("torchao.quantization", EXTRA).IntxUnpackedToInt8Tensor
        caps = Capabilities(
            OPERATIONS,
            FEATURES,
            notes=("IntxUnpackedToInt8Tensor weights of nn.Embedding, block (1, 32), CPU",),
            conventions=frozenset({QuantizeConvention.ROUND_HALF_EVEN}),
        )
        super().__init__("torchao", self.torchao, caps, "torchao weight-only nn.Embedding (int8 / int4, groups of 32)")

    def _target(self, fmt: QuantFormat) -> tuple[Any, int, float]:
        if fmt.kind not in TARGETS:
            raise Decline(f"torchao's integer tensors have no {fmt.name} layout (an integer zero point, no bias)")
        name, offset, divisor = TARGETS[fmt.kind]
        return getattr(self.torch, name), offset, divisor

    def lookup(self, call: QuantCall) -> Any:
        torch = self.torch
        target, _, _ = self._target(call.fmt)
        q, scale, _ = split_rows(call.qweight, call.fmt, call.embed_dim)  # Q4_0's q read signed: the nibble less 8
        rows, blocks = call.qweight.shape[0], call.embed_dim // GGML_BLOCK
        dtype = getattr(torch, call.out_dtype)
        weight = self.tensor(
            torch.from_numpy(q.astype(np.int8)),
            torch.from_numpy(scale[:, ::GGML_BLOCK].astype(np.float16)).to(dtype),  # each block's d, exactly
            torch.zeros((rows, blocks), dtype=torch.int8),
            target,
            (1, GGML_BLOCK),
            dtype,
            None,
        )
        embedding = torch.nn.Embedding(rows, call.embed_dim, dtype=dtype)
        embedding.weight = torch.nn.Parameter(weight, requires_grad=False)
        with refusals(IndexError, ("index out of range", "index_out_of_range")), torch.no_grad():
            return to_numpy(embedding(torch.from_numpy(np.asarray(call.ids).astype(np.int64))))

    def quantize(self, weight: np.ndarray, fmt: QuantFormat) -> Any:
        torch = self.torch
        target, offset, divisor = self._target(fmt)
        table = np.asarray(weight, dtype=np.float32)
        if table.ndim != 2:
            with glue_checks():
                raise EmbeddingError("shape_mismatch", f"weight must be 2-D, got {table.ndim}-D")
        rows, width = table.shape
        scale = block_scales(table, fmt, divisor)
        with refusals(AssertionError, ("divisible by block_size", "shape_mismatch")):
            quantized = self.tensor.from_hp(
                torch.from_numpy(table),
                (1, GGML_BLOCK),
                target,
                intx_choose_qparams_algorithm=None,
                custom_scale=torch.from_numpy(scale),
                custom_zero_point=torch.zeros(scale.shape, dtype=torch.int8),
            )
        q = to_numpy(quantized.qdata).astype(np.int64).reshape(rows, -1, GGML_BLOCK) + offset
        d = write_scales(scale.reshape(rows, -1, 1).astype(np.float16), "float16")
        if fmt.kind == "q8_0":
            body = q.astype(np.int8).view(np.uint8)
        else:
            body = (q[..., : GGML_BLOCK // 2] | (q[..., GGML_BLOCK // 2 :] << 4)).astype(np.uint8)
        return np.concatenate([d, body], axis=-1).reshape(rows, -1)


def block_scales(table: np.ndarray, fmt: QuantFormat, divisor: float) -> np.ndarray:
    """Each block's float32 scale as the spec states it (EMB-QNT-8, 9): ``amax / 127`` (Q8_0), the first value of
    largest magnitude over -8 (Q4_0); (R, D/32), or (R, ceil) blocks of what a short width gives (refused later)."""
    rows, width = table.shape
    blocks = table[:, : width - width % GGML_BLOCK].reshape(rows, -1, GGML_BLOCK) if width >= GGML_BLOCK else None
    if blocks is None or width % GGML_BLOCK:
        return np.ones((rows, max(1, -(-width // GGML_BLOCK))), dtype=np.float32)  # torchao refuses the width
    if fmt.kind == "q8_0":
        return (np.abs(blocks).max(axis=-1) / np.float32(divisor)).astype(np.float32)
    first = np.take_along_axis(blocks, np.abs(blocks).argmax(axis=-1)[..., None], axis=-1)[..., 0]
    return (first / np.float32(divisor)).astype(np.float32)
