"""``onnxruntime``: a one-node ONNX graph (``Gather``, axis 0) run by ONNX Runtime's CPU provider, forward only.

What is ONNX Runtime's and what is the adapter's:

- The adapter builds the smallest model that is an embedding lookup: inputs ``weight`` and ``ids``,
  one ``Gather`` node (opset 13), output ``output``; one session per (table dtype, id dtype), cached.
  Nothing else is computed: the lookup, its output shape and dtype are ONNX Runtime's.
- ONNX defines ``Gather`` indices in [-V, V-1], negative ones counting from the back (the ONNX
  operator spec), so ``lookup.error.negative_*`` fail by definition: a documented design choice.
  ONNX Runtime's ``InvalidArgument`` "indices element out of data bounds" for an index outside
  that range is mapped to ``index_out_of_range``; every other refusal stays an untyped error.
- ONNX is an inference format: no gradient, positions or layer are declared. Table dtypes float32,
  float64 and float16; int64 and int32 ids. ONNX Runtime's Python binding takes no bfloat16 NumPy
  array, so ``bfloat16`` is not declared; ONNX has no float ids.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from embconf.adapters.frameworks import FrameworkAdapter, import_framework
from embconf.model.contract import Capabilities, DocumentedChoice
from embconf.reference.errors import EmbeddingError

EXTRA = "onnxruntime"
# The ONNX operator spec defines negative Gather indices: every conformant runtime fails EMB-IDX-2 by definition.
ONNX_GATHER = DocumentedChoice(
    "https://onnx.ai/onnx/operators/onnx__Gather.html",
    "ONNX defines Gather indices in [-s, s-1] along an axis of size s, a negative index counting from the back: "
    "negative ids are valid in every ONNX runtime.",
    requirements=("EMB-IDX-2",),
)
OPSET = 13
OUT_OF_BOUNDS = "indices element out of data bounds"
# NumPy dtype name -> ONNX TensorProto element type name
ELEMENT_TYPES = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "FLOAT16", "int64": "INT64", "int32": "INT32"}


class OnnxRuntimeAdapter(FrameworkAdapter):
    kind = "onnxruntime"
    display_name = "ONNX Runtime Gather"

    def __init__(self, target: str = "") -> None:
        self.ort = import_framework("onnxruntime", EXTRA)
        self.onnx = import_framework("onnx", EXTRA)
        self.ort.set_default_logger_severity(4)  # its own log of every refused index would flood stderr
        self._sessions: dict[tuple[str, str], Any] = {}
        caps = Capabilities(
            frozenset({"embedding_forward"}),
            frozenset({"float64", "int32_ids", "float16"}),
            notes=(f"one Gather node, opset {OPSET}, CPUExecutionProvider; onnx {self.onnx.__version__}",),
            documented=(ONNX_GATHER,),
        )
        super().__init__("onnxruntime", self.ort, caps)

    def _session(self, weight_dtype: str, ids_dtype: str) -> Any:
        key = (weight_dtype, ids_dtype)
        if key not in self._sessions:
            self._sessions[key] = self._build(*key)
        return self._sessions[key]

    def _build(self, weight_dtype: str, ids_dtype: str) -> Any:
        helper, proto = self.onnx.helper, self.onnx.TensorProto
        if weight_dtype not in ELEMENT_TYPES or ids_dtype not in ELEMENT_TYPES:
            raise TypeError(f"no ONNX tensor type for a {weight_dtype} table with {ids_dtype} ids in this adapter")
        graph = helper.make_graph(
            [helper.make_node("Gather", ["weight", "ids"], ["output"], axis=0)],
            "embedding_forward",
            [
                helper.make_tensor_value_info("weight", getattr(proto, ELEMENT_TYPES[weight_dtype]), None),
                helper.make_tensor_value_info("ids", getattr(proto, ELEMENT_TYPES[ids_dtype]), None),
            ],
            [helper.make_tensor_value_info("output", getattr(proto, ELEMENT_TYPES[weight_dtype]), None)],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = 8  # readable by every ONNX Runtime that knows opset 13
        options = self.ort.SessionOptions()
        options.log_severity_level = 4
        return self.ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])

    def embedding_forward(self, weight: np.ndarray, ids: np.ndarray) -> Any:
        session = self._session(weight.dtype.name, ids.dtype.name)
        with onnx_errors(self.ort):
            (output,) = session.run(None, {"weight": np.asarray(weight, order="C"), "ids": np.asarray(ids, order="C")})
        return output


@contextmanager
def onnx_errors(ort: Any) -> Iterator[None]:
    """ONNX Runtime's refusal of an index outside [-V, V-1] as the spec's index_out_of_range."""
    invalid = ort.capi.onnxruntime_pybind11_state.InvalidArgument
    try:
        yield
    except invalid as exc:
        if OUT_OF_BOUNDS in str(exc):
            raise EmbeddingError("index_out_of_range", f"InvalidArgument: {exc}") from exc
        raise
