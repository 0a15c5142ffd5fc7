"""keras_hub's ``RotaryEmbedding`` for the rope operations of ``--impl keras`` / ``keras:BACKEND``.

What is keras_hub's and what is the adapter's:

- ``RotaryEmbedding(max_wavelength=base, rope_type=..., scaling_factor=..., sequence_axis=-2, feature_axis=-1,
  dtype=x's dtype)`` called with ``positions=position_ids`` (its argument for arbitrary positions; ``start_index``
  covers a contiguous run only), so ``rope-positions`` is declared. It splits the feature axis into halves and
  rotates ``(-x2, x1)`` with tables ``[freq, freq]``: pairs (k, k + h), ``rope-half_split`` only.
- It rotates the whole feature axis: no partial rotary (``rotary_dim != d`` is declined). It assumes a batch
  axis (axis 0, apart from the sequence and feature axes): every x gets one leading axis of 1, taken away after
  (an x of rank < 2 is shape_mismatch, decided by glue).
- Scaling: ``default`` is its ``linear`` type with ``scaling_factor`` 1, ``linear`` its ``linear`` type with the
  factor, ``yarn`` its ``yarn`` type (``beta_fast``, ``beta_slow``, ``original_max_position_embeddings``,
  ``truncate``; the attention factor is always its own ``0.1 ln(factor) + 1``, so a case naming
  ``attention_factor``, ``mscale`` or ``mscale_all_dim`` is declined). Its documented default
  ``original_max_position_embeddings`` of 4096 is cited (:data:`KERAS_YARN_ORIGINAL`) where the spec rejects
  a yarn scaling without one.
  Its ``dynamic`` type is a static NTK-style base scaling by ``factor ** (r / (r - 2))`` that does not depend on
  the positions (not the spec's dynamic NTK): ``rope-dynamic`` is not declared, nor ``rope-llama3`` (it has none).
  Any other rope_type is passed as it is (keras_hub treats one it does not know as unscaled).
- Tables are computed in float32 and cast to the layer's compute dtype; ``rope_tables`` reads them off its
  rotation of a probe (:func:`embconf.adapters.rope.probe`). Gradients are the backend's own autodiff.
- Its ``ValueError`` for an odd feature width is invalid_config; nothing else is mapped.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Callable, Sequence

import numpy as np

from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import refusals
from embconf.adapters.rope import check_rank
from embconf.adapters.rope_operations import RopeCall, RopeOperations
from embconf.model.contract import DocumentedChoice
from embconf.model.errors import Decline

YARN_KEYS = ("beta_fast", "beta_slow", "original_max_position_embeddings", "truncate")
YARN_UNSUPPORTED = ("attention_factor", "mscale", "mscale_all_dim")
KERAS_YARN_ORIGINAL = DocumentedChoice(
    "https://keras.io/keras_hub/api/modeling_layers/rotary_embedding/",
    "keras_hub documents original_max_position_embeddings of RotaryEmbedding as defaulting to 4096",
    cases=("rope.error.yarn_missing_original",),
)
ODD = "Rotary dimension must be even"

Gradients = Callable[[Any, Callable[..., Any], Sequence[np.ndarray], np.ndarray], tuple[list[Any], list[Any]]]


class KerasRope(RopeOperations):
    """The three rope operations on keras_hub's RotaryEmbedding; ``gradients`` is the keras adapter's own."""

    scalings = ("linear", "yarn")
    positions = True

    def __init__(self, hub: Any, ops: Any, gradients: Gradients) -> None:
        self.hub, self.ops, self._gradients = hub, ops, gradients

    def rotated(self, x: np.ndarray, rotation: RopeCall) -> Any:
        layer = self._layer(x, rotation)
        with rope_errors():
            return to_numpy(self.ops.convert_to_numpy(self._rotate(layer, x, rotation.position_ids)))

    def gradient(self, x: np.ndarray, rotation: RopeCall, grad_output: np.ndarray) -> Any:
        layer = self._layer(x, rotation)
        with rope_errors():
            (grad_x,), _ = self._gradients(
                layer, lambda call, x_: self._rotate(call, x_, rotation.position_ids), [x], grad_output
            )
        return grad_x

    def _rotate(self, call: Any, x: Any, position_ids: np.ndarray) -> Any:
        """x rotated at ``position_ids`` by ``call`` (the layer), through one leading batch axis."""
        positions = self.ops.convert_to_tensor(np.asarray(position_ids))
        return call(self.ops.expand_dims(x, 0), positions=positions)[0]

    def _layer(self, x: np.ndarray, rotation: RopeCall) -> Any:
        check_rank(x)
        if rotation.rotary_dim != np.shape(x)[-1]:
            raise Decline(
                f"keras_hub's RotaryEmbedding rotates the whole feature axis, not {rotation.rotary_dim} of it"
            )
        kind, scaling = rotation.rope_type, rotation.scaling
        options: dict[str, Any] = {"rope_type": "linear" if kind == "default" else kind}
        options["scaling_factor"] = float(scaling.get("factor", 1.0))
        if kind == "yarn":
            unsupported = [key for key in YARN_UNSUPPORTED if key in scaling]
            if unsupported:
                raise Decline(
                    f"keras_hub's YaRN has no {', '.join(unsupported)} (its attention factor: 0.1 ln(factor) + 1)"
                )
            options.update({key: scaling[key] for key in YARN_KEYS if key in scaling})
        return self.hub.layers.RotaryEmbedding(
            max_wavelength=rotation.base, sequence_axis=-2, feature_axis=-1, dtype=np.asarray(x).dtype.name, **options
        )


def rope_errors() -> AbstractContextManager[None]:
    """keras_hub's refusal of an odd feature width as invalid_config."""
    return refusals(ValueError, (ODD, "invalid_config"))
