"""MLX's ``nn.RoPE`` for the rope operations of ``--impl mlx``.

What is MLX's and what is the adapter's:

- ``nn.RoPE(rotary_dim, traditional=pairing == "interleaved", base=base, scale=...)`` called on x with
  ``offset`` = the first position: ``traditional=False`` pairs (k, k + h) (half_split), ``True`` pairs
  (2k, 2k + 1) (interleaved), so both pairings are declared. Features past ``rotary_dim`` are left unchanged by
  MLX itself (``rope-partial``). ``nn.RoPE`` is a thin module over ``mx.fast.rope``, which is not run separately.
- Positions are ``offset + 0..T-1``: only a contiguous run, so ``rope-positions`` is not declared (and such a
  call is declined). ``scale`` multiplies the positions: linear scaling is ``scale = 1 / factor``; MLX has no
  dynamic, yarn or llama3 scaling of its own (``mx.fast.rope``'s ``freqs`` takes frequencies computed
  elsewhere), so only ``rope-linear`` is declared.
- MLX wants x of rank >= 3 (a batch axis): the adapter gives every x one leading axis of 1 and takes it away
  again. Its ``ValueError`` for a rank still below 3 (x of rank < 2) or a cotangent of another shape is
  shape_mismatch, for an odd, non-positive or too wide ``dims`` invalid_config; nothing else is mapped (a base
  <= 0 gives NaN). MLX never sees ``position_ids``, only their start: the adapter rejects ids of another length
  than x's sequence axis (shape_mismatch, decided by glue).
- ``rope_tables``: MLX has no tables API; they are read off its rotation of a probe
  (:func:`embconf.adapters.rope.probe`), in the case's dtype. ``rope_backward``: ``mx.vjp`` of the rotation.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Callable

import numpy as np

from embconf.adapters.convert import from_numpy, to_numpy
from embconf.adapters.frameworks import refusals
from embconf.adapters.rope import check_offset_length, require_contiguous
from embconf.adapters.rope_operations import RopeCall, RopeOperations
from embconf.model.errors import Decline

API = "MLX nn.RoPE"
SHAPES = ("[rope] Input must have at least 3 dimensions", "does not match cotangent shape")
DIMS = ("[rope] dims must be even", "[rope] dims must be positive", "[rope] dims must not exceed")


class MlxRope(RopeOperations):
    """The three rope operations on ``nn.RoPE``."""

    pairings = ("half_split", "interleaved")
    scalings = ("linear",)
    partial = True

    def __init__(self, mx: Any, nn: Any) -> None:
        self.mx, self.nn = mx, nn

    def _array(self, value: np.ndarray) -> Any:
        return mlx_array(self.mx, value)

    def rotated(self, x: np.ndarray, rotation: RopeCall) -> Any:
        check_offset_length(x, rotation.position_ids)
        out = self._rotation(rotation)(self._array(x))
        self.mx.eval(out)
        return to_numpy(out)

    def gradient(self, x: np.ndarray, rotation: RopeCall, grad_output: np.ndarray) -> Any:
        check_offset_length(x, rotation.position_ids)
        rotate = self._rotation(rotation)
        with rope_errors():
            _, (grad,) = self.mx.vjp(rotate, [self._array(x)], [self._array(grad_output)])
            self.mx.eval(grad)
        return to_numpy(grad)

    def _rotation(self, rotation: RopeCall) -> Callable[[Any], Any]:
        """x -> nn.RoPE(x[None], offset)[0], for this case's parameters."""
        kind = rotation.rope_type
        if kind not in ("default", "linear"):
            raise Decline(f"{API} has no {kind} scaling")
        offset = require_contiguous(rotation.position_ids, f"{API} (offset)")
        scale = 1.0 / float(rotation.scaling["factor"]) if kind == "linear" else 1.0
        with rope_errors():
            rope = self.nn.RoPE(
                rotation.rotary_dim, traditional=rotation.pairing == "interleaved", base=rotation.base, scale=scale
            )

        def rotate(x: Any) -> Any:
            with rope_errors():
                return rope(x[None], offset=offset)[0]

        return rotate


def mlx_array(mx: Any, value: np.ndarray) -> Any:
    """A NumPy array as an MLX array of the same dtype (MLX would narrow a float64 array unless told)."""
    return from_numpy(value, lambda a: mx.array(a, dtype=getattr(mx, a.dtype.name)), lambda m: m.view(mx.bfloat16))


def rope_errors() -> AbstractContextManager[None]:
    """MLX's own refusals: x without a batch axis or a cotangent of another shape as shape_mismatch, ``dims``
    odd, not positive or wider than x as invalid_config."""
    return refusals(ValueError, (SHAPES, "shape_mismatch"), (DIMS, "invalid_config"))
