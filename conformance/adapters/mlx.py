"""``mlx``: Apple MLX's ``mlx.nn.Embedding`` (its CPU build on Linux), forward and backward through ``mx.vjp``.

What is MLX's and what is the adapter's:

- The lookup is ``nn.Embedding`` with the fixture's table as its ``weight``, held in the table's own
  dtype (``mx.array(..., dtype=...)``: MLX would narrow a float64 NumPy array to float32 unless told).
  The gradient is ``mx.vjp`` of the module as a function of its weight. No id, shape or dtype check
  is added: MLX wraps negative ids and does not check ids >= V at all (it reads outside the table; far
  away that is a segmentation fault, which the runner's worker process turns into a one-line crash).
- MLX's ``[vjp] ... does not match cotangent shape`` ``ValueError`` for an upstream gradient of the
  wrong shape is mapped to ``shape_mismatch``; nothing else is mapped. MLX refuses float ids
  (``[gather] ... Indices must be integral``), so ``float_ids`` is not declared.
- Declared dtypes: float64, float16 and bfloat16 tables (bfloat16 crosses as its bit patterns: MLX
  exports no bfloat16 buffer to NumPy), int32 ids.
- ``nn.SinusoidalPositionalEncoding`` with its defaults computes ``sinusoidal_table``: applied to the
  positions ``0..L-1`` (in the case's dtype), it gives a concatenated table with log-spaced frequencies
  and a ``sqrt(2/D)`` amplitude, so the adapter declares the spec's ``mlx`` profile (EMB-SIN-V4); its
  ``ValueError`` for an odd D is ``invalid_config``, as that profile asks. MLX has no learned-position
  module or embedding layer; none is composed here.
- ``nn.RoPE`` provides the rope operations, both pairings (``traditional``), partial rotary and linear
  scaling, for a contiguous run of positions: :mod:`embconf.adapters.mlx_rope`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import FrameworkAdapter, import_framework, refusals
from embconf.adapters.mlx_rope import MlxRope, mlx_array
from embconf.model.contract import Capabilities
from embconf.model.dtypes import numpy_dtype
from embconf.model.sinusoid import declaring

EXTRA = "mlx"
COTANGENT_SHAPE = "does not match cotangent shape"
ODD_DIMS = "[SinusoidalPositionalEncoding] dims must be positive and even"


class MlxAdapter(FrameworkAdapter):
    kind = "mlx"
    display_name = "MLX nn.Embedding, nn.RoPE"

    def __init__(self, target: str = "") -> None:
        self.mx = import_framework("mlx.core", EXTRA)  # the extra's line names mlx[cpu]
        self.nn = import_framework("mlx.nn", EXTRA)
        rope = MlxRope(self.mx, self.nn)
        caps = Capabilities(
            frozenset({"embedding_forward", "embedding_backward", "sinusoidal_table"}) | rope.operations,
            frozenset({"float64", "int32_ids", "float16", "bfloat16"}) | rope.features(),
            conventions=declaring("mlx"),
            notes=(f"device {self.mx.default_device()}",),
        )
        super().__init__("mlx", self.mx, caps, parts=(rope,))

    def _array(self, value: np.ndarray) -> Any:
        return mlx_array(self.mx, value)

    def _embed(self, weight: np.ndarray) -> Any:
        rows, dim = weight.shape
        embedding = self.nn.Embedding(rows, dim)
        embedding.weight = self._array(weight)
        return embedding

    def embedding_forward(self, weight: np.ndarray, ids: np.ndarray) -> Any:
        output = self._embed(weight)(self._array(ids))
        self.mx.eval(output)
        return to_numpy(output)

    def embedding_backward(self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> Any:
        embedding, ids_m = self._embed(weight), self._array(ids)

        def lookup(table: Any) -> Any:
            embedding.weight = table
            return embedding(ids_m)

        with mlx_errors():
            _, (grad,) = self.mx.vjp(lookup, [self._array(weight)], [self._array(grad_output)])
            self.mx.eval(grad)
        return to_numpy(grad)

    def sinusoidal_table(self, max_len: int, embed_dim: int, dtype: str = "float32") -> Any:
        with mlx_errors():
            encoding = self.nn.SinusoidalPositionalEncoding(embed_dim)
        table = encoding(self._array(np.arange(max_len, dtype=numpy_dtype(dtype))))
        self.mx.eval(table)
        return to_numpy(table)


def mlx_errors() -> AbstractContextManager[None]:
    """MLX's refusal of an upstream gradient of the wrong shape as the spec's shape_mismatch, and of an odd
    sinusoid width as invalid_config."""
    return refusals(ValueError, (COTANGENT_SHAPE, "shape_mismatch"), (ODD_DIMS, "invalid_config"))
