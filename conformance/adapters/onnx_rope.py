"""``onnxruntime_rope`` / ``onnxruntime_rope:contrib``: ONNX's ``RotaryEmbedding`` operator (opset 23) and ONNX
Runtime's contrib operator of the same name (domain ``com.microsoft``), each a one-node graph on the CPU provider,
against the spec's ``rope_forward``.

What is ONNX Runtime's and what is the adapter's:

- Both operators take the tables as inputs: ``RotaryEmbedding(X, cos_cache, sin_cache, position_ids)`` (opset 23;
  the contrib operator orders them ``X, position_ids, cos_cache, sin_cache``), ``cos_cache``/``sin_cache`` of
  shape ``(max_position + 1, rotary_dim / 2)`` indexed by ``position_ids`` of shape ``(B, T)``. The caches are
  the caller's: an exporter writes them into the model. The adapter computes them with the suite's reference
  (:func:`embconf.reference.rope.rope_tables`, each value rounded once to x's dtype) for positions
  ``0..max(max(position_ids), T - 1)`` (ONNX Runtime refuses caches shorter than the sequence, as an exporter's
  caches of ``max_position_embeddings`` rows never are), so what a case measures is the operator's rotation: its pairing, its partial
  rotary, its lookup of ``position_ids`` in the caches and its arithmetic. For that reason no scaling family is
  declared (a scaled table would be the reference's, not the operator's), and the reference's refusals of a
  configuration (odd or zero ``rotary_dim``, a base <= 0) are the adapter's (decided by glue).
- x is viewed as ``(B, T, d)`` with ``num_heads = 1`` (x's leading axes folded into ``B``); ``position_ids`` is
  given per batch row: the case's one row to each, or per-batch ``(B, T)`` rows (``rope-batch-positions``) each
  to the heads of its batch row (x of another batch than the rows is the adapter's shape_mismatch, decided by
  glue: the operator never sees x's own batch axis). ``interleaved = 1`` pairs (2k, 2k + 1), ``0`` pairs (k, k + h): both pairings.
  ``rotary_embedding_dim`` rotates the first ``rotary_dim`` features and keeps the rest (``rope-partial``).
- ``rope_apply`` (2.0.0, the tables as inputs) is the operator's own interface: the case's tables become the caches
  (row t of a ``(T, r)`` table at position t, of a ``(B, T, r)`` one at ``b * T + t``). A cache holds one cos and
  one sin per pair, so tables whose two columns of a pair differ cannot be given to it: declined. Their shapes
  are checked by the adapter (decided by glue): the operator only sees the per-pair caches.
- ONNX Runtime has no gradient and no tables API: ``rope_forward`` and ``rope_apply`` only. float32 and float16 (its Python binding
  takes no bfloat16 array). ONNX Runtime's own checks are mapped: ``rotary_embedding_dim`` wider than the head
  to invalid_config, ``position_ids`` of another length than the sequence to shape_mismatch; nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from embconf.adapters.frameworks import FrameworkAdapter, glue_checks, import_framework
from embconf.adapters.rope import batches, check_pairing, check_rank, rope_features, rope_type
from embconf.model.contract import Capabilities
from embconf.model.errors import Decline
from embconf.model.rope import BATCH_POSITIONS_FEATURE
from embconf.reference.errors import EmbeddingError
from embconf.reference.rope import check_batch, pair_columns
from embconf.reference.rope_apply import check_apply

EXTRA = "onnxruntime"
TARGETS = {
    "": ("", 23, "ONNX RotaryEmbedding (opset 23)"),
    "contrib": ("com.microsoft", 1, "com.microsoft RotaryEmbedding"),
}
ELEMENT_TYPES = {"float32": "FLOAT", "float16": "FLOAT16"}
PAIRINGS = ("half_split", "interleaved")
REFUSALS = {
    "rotary_embedding_dim must be less than or equal to head": "invalid_config",
    "Input 'position_ids' dimension 1 should be of size": "shape_mismatch",
}


class OnnxRopeAdapter(FrameworkAdapter):
    kind = "onnxruntime_rope"
    targets = tuple(TARGETS)

    def __init__(self, target: str = "") -> None:
        self.ort = import_framework("onnxruntime", EXTRA)
        self.onnx = import_framework("onnx", EXTRA)
        self.ort.set_default_logger_severity(4)
        self.domain, self.opset, title = TARGETS[target]
        self._sessions: dict[tuple[str, int, int], Any] = {}
        caps = Capabilities(
            frozenset({"rope_forward", "rope_apply"}),
            rope_features(PAIRINGS, (), partial=True, positions=True) | {"float16", BATCH_POSITIONS_FEATURE},
            notes=(f"{title}, one node, CPUExecutionProvider; caches from the suite's reference tables",),
        )
        name = f"onnxruntime_rope:{target}" if target else "onnxruntime_rope"
        super().__init__(name, self.ort, caps, f"ONNX Runtime {title}")

    def rope_forward(
        self,
        x: np.ndarray,
        position_ids: np.ndarray,
        rotary_dim: int,
        base: float,
        scaling: Mapping[str, Any],
        pairing: str,
    ) -> Any:
        check_pairing(pairing, PAIRINGS)
        check_rank(x)
        if rope_type(scaling) != "default":
            raise Decline("the caches are the caller's: a scaled table would be the reference's, not the operator's")
        from embconf.reference.rope import rope_tables

        x = np.asarray(x)
        positions = np.asarray(position_ids, dtype=np.int64)
        with glue_checks():  # the caller's tables, and the caller's refusals
            rows = max(int(positions.max(initial=0)) + 1, x.shape[-2])
            cos, sin = rope_tables(np.arange(rows), rotary_dim, base, None, x.dtype.name)
        return self._run(x, positions, cos, sin, pairing, rotary_dim)

    def rope_apply(self, x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairing: str) -> Any:
        """The case's own tables as the caches (one value per pair: tables whose pair columns differ are declined),
        row t of a (T, r) table at position t, row (b, t) of a (B, T, r) one at position b * T + t."""
        check_pairing(pairing, PAIRINGS)
        x, cos, sin = np.asarray(x), np.asarray(cos), np.asarray(sin)
        with glue_checks():  # the operator sees per-pair caches, never the tables' own shapes
            rotary = check_apply(x, cos, sin, pairing)
        first, second = pair_columns(rotary, pairing)
        if not (
            np.array_equal(cos[..., first], cos[..., second]) and np.array_equal(sin[..., first], sin[..., second])
        ):
            raise Decline("ONNX's RotaryEmbedding caches hold one cos and one sin per pair: these tables' pairs differ")
        length = x.shape[-2]
        positions = np.arange(cos.size // rotary, dtype=np.int64).reshape(cos.shape[:-1])
        cos_cache, sin_cache = (t[..., first].reshape(-1, rotary // 2) for t in (cos, sin))
        return self._run(x, positions, cos_cache, sin_cache, pairing, rotary) if length else x.copy()

    def _run(
        self, x: np.ndarray, positions: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairing: str, rotary_dim: int
    ) -> Any:
        """The one-node model on x viewed as (B, T, d), its position_ids one row per batch row."""
        if positions.ndim == 2:  # per-batch rows: x (B, ..., T, d), each batch row's heads given its row
            with glue_checks():
                check_batch(x, positions.shape[0])
            positions = np.repeat(positions, int(np.prod(x.shape[1:-2], dtype=np.int64)), axis=0)
        batch = np.ascontiguousarray(x.reshape(batches(x), *x.shape[-2:]))
        feeds = {
            "x": batch,
            "position_ids": np.ascontiguousarray(np.broadcast_to(positions, (batch.shape[0], positions.shape[-1]))),
            "cos_cache": np.ascontiguousarray(cos),
            "sin_cache": np.ascontiguousarray(sin),
        }
        with refusals(self.ort):
            (output,) = self._session(x.dtype.name, int(pairing == "interleaved"), rotary_dim).run(None, feeds)
        return output.reshape(x.shape)

    def _session(self, dtype: str, interleaved: int, rotary_dim: int) -> Any:
        key = (dtype, interleaved, rotary_dim)
        if key not in self._sessions:
            self._sessions[key] = self._build(*key)
        return self._sessions[key]

    def _build(self, dtype: str, interleaved: int, rotary_dim: int) -> Any:
        helper, proto = self.onnx.helper, self.onnx.TensorProto
        if dtype not in ELEMENT_TYPES:
            raise TypeError(f"no ONNX tensor type for {dtype} in this adapter")
        element = getattr(proto, ELEMENT_TYPES[dtype])
        inputs = ["x", "cos_cache", "sin_cache", "position_ids"]
        if self.domain:  # the contrib operator's order
            inputs = ["x", "position_ids", "cos_cache", "sin_cache"]
        node = helper.make_node(
            "RotaryEmbedding",
            inputs,
            ["output"],
            domain=self.domain,
            interleaved=interleaved,
            num_heads=1,
            rotary_embedding_dim=rotary_dim,
        )
        values = {name: helper.make_tensor_value_info(name, element, None) for name in ("x", "cos_cache", "sin_cache")}
        values["position_ids"] = helper.make_tensor_value_info("position_ids", proto.INT64, None)
        graph = helper.make_graph(
            [node],
            "rope_forward",
            [values[name] for name in inputs],
            [helper.make_tensor_value_info("output", element, None)],
        )
        opsets = [helper.make_opsetid("", 23)] + ([helper.make_opsetid(self.domain, 1)] if self.domain else [])
        model = helper.make_model(graph, opset_imports=opsets)
        model.ir_version = 10
        options = self.ort.SessionOptions()
        options.log_severity_level = 4
        return self.ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


@contextmanager
def refusals(ort: Any) -> Iterator[None]:
    """ONNX Runtime's InvalidArgument for a rotary width above the head's or position_ids of another length, typed."""
    try:
        yield
    except ort.capi.onnxruntime_pybind11_state.InvalidArgument as exc:
        kind = next((kind for text, kind in REFUSALS.items() if text in str(exc)), None)
        if kind is None:
            raise
        raise EmbeddingError(kind, f"InvalidArgument: {exc}") from exc
