"""``ggml``: llama.cpp's tensor library (C), through the ``ggml-python`` bindings (ctypes over the C library they
build), against the spec: the lookup (``ggml_get_rows`` and ``ggml_get_rows_back``) and the rope operations
(``ggml_rope_ext`` and ``ggml_rope_ext_back``).

What is ggml's and what is the adapter's:

- Each call builds one ggml graph in a fresh context (``ggml_init``), copies the inputs in
  (``ggml.utils.from_numpy``), runs it on the CPU with one thread (``ggml_graph_compute_with_ctx``) and copies
  the result out. ggml's shapes are NumPy's reversed: a table ``(V, D)`` is ``ne = [D, V]``.
- Lookup: ``ggml_get_rows(weight, ids)`` on the ids flattened (its output rows are reshaped to ``ids.shape +
  (D,)``), and its backward ``ggml_get_rows_back(grad_output, ids, weight)``, which sums repeated ids in float32.
  Its row ids are ``int32``: int64 ids are narrowed when they fit and the call is declined when one does not
  (the C API cannot be handed it). ggml checks an id with ``GGML_ASSERT``, which aborts the process: an id
  outside ``[0, V)`` is a crash, as it is in llama.cpp. float32 tables only (``get_rows`` turns a float16 table
  into float32 rows).
- RoPE: ``ggml_rope_ext(x, positions, NULL, n_dims=rotary_dim, mode, ...)`` on x viewed as ``[B, T, 1 head, d]``
  (``ne = [d, 1, T, B]``), positions one int32 per row (any positions: ``rope-positions``). ``mode``
  ``GGML_ROPE_TYPE_NEOX`` pairs (k, k + h) (half_split), ``GGML_ROPE_TYPE_NORMAL`` pairs (2k, 2k + 1)
  (interleaved): both declared. Features past ``n_dims`` are copied (``rope-partial``). float32 and float16 x.
- Scaling, as llama.cpp drives it: linear is ``freq_scale = 1 / factor``; YaRN is ``freq_scale = 1 / factor``,
  ``ext_factor = 1``, ``n_ctx_orig = original_max_position_embeddings``, ``beta_fast``/``beta_slow`` (32 and 1 by
  default). ggml multiplies its ``attn_factor`` by ``1 + 0.1 ln(factor)`` itself, so the adapter passes the case's
  attention factor (explicit, or from ``mscale``/``mscale_all_dim``) divided by that. ggml always rounds the
  correction range (a case with ``truncate: false`` is declined). No dynamic NTK; llama3 and longrope reach ggml
  as per-frequency divisors that llama.cpp's model converter computes: not declared.
- M-RoPE (``rope-mrope``): ``ggml_rope_multi`` (``GGML_ROPE_TYPE_MROPE``, NEOX pairs only: an interleaved case is
  declined) with the case's ``mrope_section`` as its first three sections and the ``(3, T)`` positions as its
  temporal, height and width rows (the fourth, extra row is zero); ``(3, B, T)`` rows are declined.
- ``rope_tables`` are read off the rotation of a probe (:func:`embconf.adapters.rope.probe`); the backward is
  ``ggml_rope_ext_back`` on grad_output with the same parameters. ggml checks shapes, ``n_dims`` and positions
  with ``GGML_ASSERT`` too: what it refuses crashes the worker. The adapter rejects an unknown pairing, an x of
  rank < 2 and a grad_output of another shape than x (or than the lookup's output), which ggml's backward never
  sees (decided by glue); it declines a YaRN case without ``original_max_position_embeddings`` (``n_ctx_orig``
  is a plain int in the C API).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Mapping
from typing import Any, Callable, Optional

import numpy as np

from embconf.adapters.frameworks import FrameworkAdapter, glue_checks, import_framework, package_version
from embconf.adapters.rope import batches, check_rank, rope_type
from embconf.adapters.rope_operations import RopeCall, RopeOperations
from embconf.model.contract import Capabilities
from embconf.model.errors import Decline
from embconf.model.rope import MROPE_FEATURE, SECTION
from embconf.reference.errors import EmbeddingError

EXTRA = "ggml"
INT32 = np.iinfo(np.int32)
YARN_BETA_FAST, YARN_BETA_SLOW = 32.0, 1.0

Build = Callable[[Any, list[Any]], Any]  # (ctx, input tensors) -> the graph's output tensor


class GgmlAdapter(FrameworkAdapter):
    kind = "ggml"

    def __init__(self, target: str = "") -> None:
        self.ggml = import_framework("ggml", EXTRA)
        self.utils = import_framework("ggml.utils", EXTRA)
        rope = GgmlRope(self.ggml, self._compute)
        caps = Capabilities(
            rope.operations | {"embedding_forward", "embedding_backward"},
            rope.features() | {"float16", "int32_ids"},
            notes=("ggml_get_rows, ggml_get_rows_back, ggml_rope_ext, ggml_rope_ext_back on the CPU, one thread",),
        )
        super().__init__("ggml", self.ggml, caps, "ggml (llama.cpp's tensor library, C)", (rope,))
        self._version = package_version("ggml-python") or self._version

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "language": "c", "bindings": f"ggml-python {self._version}"}

    def embedding_forward(self, weight: np.ndarray, ids: np.ndarray) -> Any:
        ids = row_ids(ids)
        weight = np.ascontiguousarray(weight)
        shape = (*ids.shape, weight.shape[-1])
        return self._compute(lambda ctx, t: self.ggml.ggml_get_rows(ctx, t[0], t[1]), shape, weight, ids.reshape(-1))

    def embedding_backward(self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> Any:
        ids = row_ids(ids)
        same_shape(grad_output, np.empty((*ids.shape, np.shape(weight)[-1]), dtype=np.int8), "the lookup's output")
        grad = np.ascontiguousarray(grad_output).reshape(-1, np.shape(weight)[-1])
        table = np.ascontiguousarray(weight)
        return self._compute(
            lambda ctx, t: self.ggml.ggml_get_rows_back(ctx, t[0], t[1], t[2]),
            table.shape,
            grad,
            ids.reshape(-1),
            table,
        )

    def _compute(self, build: Build, shape: tuple[int, ...], *arrays: np.ndarray) -> np.ndarray:
        """The result of the graph ``build(ctx, tensors)`` makes over ``arrays``, copied out of a fresh context as
        ``shape`` (ggml drops trailing axes of length 1 from its own count of dimensions)."""
        ggml = self.ggml
        size = sum(4 * a.nbytes for a in arrays) + 64 * ggml.ggml_tensor_overhead() + ggml.ggml_graph_overhead()
        ctx = ggml.ggml_init(ggml.ggml_init_params(mem_size=size + (16 << 20), mem_buffer=None))
        try:
            tensors = [self.utils.from_numpy(np.ascontiguousarray(a), ctx) for a in arrays]
            out = build(ctx, tensors)
            graph = ggml.ggml_new_graph(ctx)
            ggml.ggml_build_forward_expand(graph, out)
            ggml.ggml_graph_compute_with_ctx(ctx, graph, 1)
            if ggml.ggml_nelements(out) == 0:  # nothing computed, no data to copy out (to_numpy refuses it)
                return np.zeros(shape, dtype=self.utils.GGML_TYPE_TO_NUMPY_DTYPE[out.contents.type])
            return np.array(self.utils.to_numpy(out), copy=True).reshape(shape)
        finally:
            ggml.ggml_free(ctx)


class GgmlRope(RopeOperations):
    """``ggml_rope_ext`` (NEOX or NORMAL mode) and ``ggml_rope_ext_back`` on x viewed as [B, T, 1 head, d]."""

    pairings = ("half_split", "interleaved")
    scalings = ("linear", "yarn")
    partial = True
    positions = True

    def __init__(self, ggml: Any, compute: Callable[..., np.ndarray]) -> None:
        self.ggml, self.compute = ggml, compute

    def rotated(self, x: np.ndarray, rotation: RopeCall) -> Any:
        return self._rope(x, rotation, backward=False)

    def gradient(self, x: np.ndarray, rotation: RopeCall, grad_output: np.ndarray) -> Any:
        same_shape(grad_output, x, "x")
        return self._rope(grad_output, rotation, backward=True)

    def features(self) -> frozenset[str]:
        return super().features() | {MROPE_FEATURE}

    def _rope(self, x: np.ndarray, rotation: RopeCall, backward: bool) -> Any:
        check_rank(x)
        x = np.asarray(x)
        heads = np.ascontiguousarray(x.reshape(batches(x), x.shape[-2], 1, x.shape[-1]))  # ne = [d, 1, T, B]
        scaling = {key: value for key, value in rotation.scaling.items() if key != SECTION}
        yarn = yarn_parameters(rotation.base, scaling)
        positions = row_ids(rotation.position_ids)
        if SECTION in rotation.scaling:  # M-RoPE: ggml_rope_multi, NEOX ordering always
            if rotation.pairing != "half_split":
                raise Decline("ggml's M-RoPE (GGML_ROPE_TYPE_MROPE) rotates NEOX pairs (half_split) only")
            if positions.ndim != 2:
                raise Decline("ggml_rope_multi takes one (temporal, height, width) row per token, not per batch row")
            sections = (ctypes.c_int * 4)(*(int(n) for n in rotation.scaling[SECTION]), 0)
            multi = self.ggml.ggml_rope_multi_back if backward else self.ggml.ggml_rope_multi
            mode = self.ggml.GGML_ROPE_TYPE_MROPE
            rows = np.concatenate([positions.reshape(-1), np.zeros(positions.shape[-1], np.int32)])  # t, h, w, e
            return self.compute(
                lambda ctx, t: multi(ctx, t[0], t[1], None, rotation.rotary_dim, sections, mode, *yarn),
                x.shape,
                heads,
                rows,
            )
        neox = rotation.pairing == "half_split"
        mode = self.ggml.GGML_ROPE_TYPE_NEOX if neox else self.ggml.GGML_ROPE_TYPE_NORMAL
        rope = self.ggml.ggml_rope_ext_back if backward else self.ggml.ggml_rope_ext
        return self.compute(
            lambda ctx, t: rope(ctx, t[0], t[1], None, rotation.rotary_dim, mode, *yarn), x.shape, heads, positions
        )


def same_shape(grad_output: np.ndarray, like: np.ndarray, what: str) -> None:
    """shape_mismatch (decided by glue) for a grad_output of another shape than ``like``: ggml's backward is
    handed grad_output alone and never sees the forward's shapes."""
    if np.shape(grad_output) != np.shape(like):
        with glue_checks():
            raise EmbeddingError(
                "shape_mismatch", f"grad_output of shape {np.shape(grad_output)} for {what} of {np.shape(like)}"
            )


def row_ids(ids: np.ndarray) -> np.ndarray:
    """ids as the C API's int32 (Decline when one has no int32 form; floats are not ids to ggml)."""
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise Decline(f"ggml's row ids are int32; {ids.dtype} ids are not passed")
    if ids.size and (ids.min() < INT32.min or ids.max() > INT32.max):
        raise Decline("ggml's row ids are int32; an id outside the int32 range cannot be passed")
    return np.array(ids, dtype=np.int32, order="C")  # 0-d stays 0-d


def yarn_parameters(base: float, scaling: Mapping[str, Any]) -> tuple[int, float, float, float, float, float, float]:
    """``(n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow)`` for a case's scaling,
    as llama.cpp passes them (Decline for a family ggml_rope_ext does not implement)."""
    kind = rope_type(scaling)
    if kind not in ("default", "linear", "yarn"):
        raise Decline(f"ggml_rope_ext has no {kind} scaling of its own")
    if kind == "default":
        return 0, base, 1.0, 0.0, 1.0, 0.0, 0.0
    factor = float(scaling["factor"])
    if kind == "linear":
        return 0, base, 1.0 / factor, 0.0, 1.0, 0.0, 0.0
    if scaling.get("truncate") is False:
        raise Decline("ggml always rounds YaRN's correction range (ggml_rope_yarn_corr_dims)")
    attention = yarn_attention(factor, scaling)
    internal = 1.0 + 0.1 * math.log(factor)  # what ggml multiplies attn_factor by when ext_factor != 0
    if not scaling.get("original_max_position_embeddings"):
        raise Decline("ggml_rope_ext takes n_ctx_orig as a plain int: it cannot be told that there is none")
    original = int(scaling["original_max_position_embeddings"])
    fast = float(scaling.get("beta_fast") or YARN_BETA_FAST)
    slow = float(scaling.get("beta_slow") or YARN_BETA_SLOW)
    return original, base, 1.0 / factor, 1.0, attention / internal, fast, slow


def yarn_attention(factor: float, scaling: Mapping[str, Any]) -> float:
    """The case's YaRN attention factor: explicit, else from mscale and mscale_all_dim, else 0.1 ln(factor) + 1."""

    def mscale(m: float = 1.0) -> float:
        return 1.0 if factor <= 1 else 0.1 * m * math.log(factor) + 1.0

    explicit: Optional[float] = scaling.get("attention_factor")
    if explicit is not None:
        return float(explicit)
    if scaling.get("mscale") and scaling.get("mscale_all_dim"):
        return mscale(float(scaling["mscale"])) / mscale(float(scaling["mscale_all_dim"]))
    return mscale()
