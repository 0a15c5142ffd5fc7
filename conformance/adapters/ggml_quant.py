"""``ggml_quant``: llama.cpp's tensor library (C, through ``ggml-python``) on quantized tables (spec section 17): the
lookup ``ggml_get_rows`` on a ``GGML_TYPE_Q8_0`` or ``GGML_TYPE_Q4_0`` table, the quantizer ``ggml_quantize_chunk``
and the sizes ``ggml_row_size`` / ``ggml_nbytes``.

What is ggml's and what is the adapter's:

- The table's bytes are the format's ``block_q8_0`` / ``block_q4_0`` structs back to back, exactly ggml's memory:
  the adapter copies them into a ``ggml_new_tensor_2d(ctx, type, D, R)`` and runs ``ggml_get_rows`` on the ids
  (int32, as :func:`embconf.adapters.ggml.row_ids` narrows them) on the CPU with one thread. ``get_rows`` always
  returns float32 rows; a float16 output is ``ggml_cast(rows, GGML_TYPE_F16)`` in the same graph (llama.cpp's
  own cast: the float32 value ``d * q`` is exact, so one rounding).
- ``quantize_table`` is ``ggml_quantize_chunk(type, x, dst, 0, R, D, NULL)``, ggml's reference quantizers
  (``quantize_row_q8_0_ref``, ``quantize_row_q4_0_ref``: what llama-quantize writes into a GGUF file), into a zeroed
  buffer of ``R * ggml_row_size(type, D)`` bytes.
- ``ggml_quant:cpy`` quantizes only, with ``ggml_cpy`` of a float32 tensor into a Q8_0 / Q4_0 one: the CPU
  backend's own ``from_float`` (how ggml fills a quantized KV cache at run time). For Q4_0 it is the reference; for
  Q8_0 it is ``quantize_row_q8_0`` (ggml-cpu/arch/x86/quants.c), ``id = 127 / amax`` and
  ``_mm256_round_ps(.., _MM_ROUND_NEAREST)``: a tie rounds to EVEN where ``ggml_quantize_chunk`` rounds it away
  (docs/upstream.md ``ggml-two-q8-0-quantizers``). It declares no convention (Q4_0 still rounds ties up).
- ``quantized_table_bytes``: ``ggml_row_size(type, D)`` and ``ggml_nbytes`` of a ``(D, R)`` tensor in a context
  that allocates nothing.
- Declared: formats q8_0 and q4_0 (ggml's own), float16 outputs, int32 ids; no bags (ggml pools nothing).
- ggml checks an id with ``GGML_ASSERT``: an id outside ``[0, R)`` aborts the worker (a crash, as for the float
  lookup, docs/upstream.md ``ggml-get-rows-aborts``). ggml checks no width: ``ggml_row_size`` has only a C
  ``assert`` (compiled out in a release build), so a D that is not a multiple of 32 is quantized, sized and read
  with a truncated row (``ggml_row_size(Q8_0, 40)`` is 42 bytes, a tensor's row stride 34) instead of refused;
  and a negative number of rows is a table of 0 bytes. Those cases fail as ggml answers them
  (docs/upstream.md ``ggml-quantized-sizes-unchecked``).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from embconf.adapters.frameworks import FrameworkAdapter, import_framework, package_version
from embconf.adapters.ggml import EXTRA, row_ids
from embconf.adapters.quantized_ops import QuantCall, QuantizedOperations
from embconf.model.contract import Capabilities
from embconf.model.errors import Decline
from embconf.model.quantized import QuantFormat

TYPES = {"q8_0": "GGML_TYPE_Q8_0", "q4_0": "GGML_TYPE_Q4_0"}
OPERATIONS = frozenset({"quantized_lookup", "quantize_table", "quantized_table_bytes"})
FEATURES = frozenset({"quant-q8_0", "quant-q4_0", "float16", "int32_ids"})


TARGETS = {"": "ggml get_rows on Q8_0 / Q4_0 (C)", "cpy": "ggml_cpy F32 to Q8_0 / Q4_0 (its CPU quantizers, C)"}


class GgmlQuantAdapter(QuantizedOperations, FrameworkAdapter):
    kind = "ggml_quant"
    framework = "ggml"
    targets = tuple(TARGETS)

    def __init__(self, target: str = "") -> None:
        self.ggml = import_framework("ggml", EXTRA)
        self.utils = import_framework("ggml.utils", EXTRA)
        self.cpy = target == "cpy"
        notes = (
            "ggml_cpy of a float32 tensor into a Q8_0 / Q4_0 one (the CPU backend's from_float); CPU, one thread"
            if self.cpy
            else "ggml_get_rows on GGML_TYPE_Q8_0 / Q4_0 tables, ggml_quantize_chunk, ggml_row_size; CPU, one thread",
        )
        caps = Capabilities(frozenset({"quantize_table"}) if self.cpy else OPERATIONS, FEATURES, notes=notes)
        super().__init__(f"ggml_quant:{target}" if target else "ggml_quant", self.ggml, caps, TARGETS[target])
        self._version = package_version("ggml-python") or self._version

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "language": "c", "bindings": f"ggml-python {self._version}"}

    def _type(self, fmt: QuantFormat) -> int:
        if fmt.kind not in TYPES:
            raise Decline(f"ggml has no {fmt.name} type")
        return int(getattr(self.ggml, TYPES[fmt.kind]))

    def lookup(self, call: QuantCall) -> Any:
        ggml, kind = self.ggml, self._type(call.fmt)
        ids = row_ids(call.ids)
        rows, width = call.qweight.shape[0], call.embed_dim
        table = np.ascontiguousarray(call.qweight)
        context = ggml.ggml_init(
            ggml.ggml_init_params(mem_size=table.nbytes + 16 * ids.size * width + (16 << 20), mem_buffer=None)
        )
        try:
            weight = ggml.ggml_new_tensor_2d(context, kind, width, rows)
            ctypes.memmove(ggml.ggml_get_data(weight), table.ctypes.data, table.nbytes)
            found = ggml.ggml_get_rows(context, weight, self.utils.from_numpy(ids.reshape(-1), context))
            if call.out_dtype == "float16":
                found = ggml.ggml_cast(context, found, ggml.GGML_TYPE_F16)
            graph = ggml.ggml_new_graph(context)
            ggml.ggml_build_forward_expand(graph, found)
            ggml.ggml_graph_compute_with_ctx(context, graph, 1)
            if ids.size == 0:  # nothing computed: to_numpy refuses an empty tensor
                return np.zeros((*ids.shape, width), dtype=call.out_dtype)
            return np.array(self.utils.to_numpy(found), copy=True).reshape(*ids.shape, width)
        finally:
            ggml.ggml_free(context)

    def quantize(self, weight: np.ndarray, fmt: QuantFormat) -> Any:
        ggml, kind = self.ggml, self._type(fmt)
        source = np.ascontiguousarray(weight, dtype=np.float32)
        if source.ndim != 2:
            raise Decline("ggml quantizes a 2-D table (rows, values per row) here")
        if self.cpy:
            return self._copied(source, kind)
        rows, width = source.shape
        row = int(ggml.ggml_row_size(kind, width))
        out = np.zeros((rows, row), dtype=np.uint8)
        pointer = source.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        ggml.ggml_quantize_chunk(kind, pointer, out.ctypes.data_as(ctypes.c_void_p), 0, rows, width, None)
        return out

    def _copied(self, source: np.ndarray, kind: int) -> np.ndarray:
        """The bytes ``ggml_cpy`` writes into a (D, R) tensor of ``kind`` from the float32 table ``source``."""
        ggml = self.ggml
        rows, width = source.shape
        context = ggml.ggml_init(ggml.ggml_init_params(mem_size=3 * source.nbytes + (16 << 20), mem_buffer=None))
        try:
            table = ggml.ggml_new_tensor_2d(context, kind, width, rows)
            copied = ggml.ggml_cpy(context, self.utils.from_numpy(source, context), table)
            graph = ggml.ggml_new_graph(context)
            ggml.ggml_build_forward_expand(graph, copied)
            ggml.ggml_graph_compute_with_ctx(context, graph, 1)
            out = np.empty(int(ggml.ggml_nbytes(table)), dtype=np.uint8)
            ctypes.memmove(out.ctypes.data, ggml.ggml_get_data(table), out.nbytes)
            return out.reshape(rows, -1) if rows else np.zeros((0, ggml.ggml_row_size(kind, width)), np.uint8)
        finally:
            ggml.ggml_free(context)

    def table_bytes(self, num_rows: int, embed_dim: int, fmt: QuantFormat) -> Any:
        ggml, kind = self.ggml, self._type(fmt)
        context = ggml.ggml_init(ggml.ggml_init_params(mem_size=1 << 16, mem_buffer=None, no_alloc=True))
        try:
            table = ggml.ggml_new_tensor_2d(context, kind, int(embed_dim), int(num_rows))
            return int(ggml.ggml_row_size(kind, int(embed_dim))), int(ggml.ggml_nbytes(table))
        finally:
            ggml.ggml_free(context)
