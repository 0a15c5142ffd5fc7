"""``flax`` / ``flax:x64``: Flax's ``flax.nnx.Embed``, backward through ``jax.vjp``, against the spec.

What is Flax's and what is the adapter's:

- The lookup is ``nnx.Embed`` with the fixture's table as its ``embedding`` parameter and the
  table's dtype as ``dtype`` and ``param_dtype``. The gradient is ``jax.vjp`` of the module applied
  to the ids, taken with respect to the module's state (``nnx.split`` / ``nnx.merge``). No id,
  shape or dtype check is added: what Flax returns for a negative id or an id >= V is what is judged.
- Flax refuses float ids (``ValueError: Input type must be an integer``), so ``float_ids`` is not
  declared. JAX's refusal of an upstream gradient of the wrong shape is ``shape_mismatch``.
- Out-of-range and negative ids are not errors in JAX, by its documented design (``JAX_INDEXING``): the
  failures are cited as documented choices, and still fail.
- JAX runs in 32 bits unless x64 mode is on: ``flax`` leaves it off (JAX's default: int64 ids and
  float64 tables are narrowed), ``flax:x64`` turns it on and declares ``float64``.
- Flax has no module for learned or sinusoidal positions or for the layer; none is composed here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import FrameworkAdapter, import_framework
from embconf.adapters.jaxcommon import JAX_INDEXING, enable_x64, vjp
from embconf.model.contract import Capabilities

EXTRA = "flax"


class FlaxAdapter(FrameworkAdapter):
    kind = "flax"
    display_name = "Flax nnx.Embed"
    targets = ("", "x64")

    def __init__(self, target: str = "") -> None:
        self.jax = import_framework("jax", EXTRA)
        enable_x64(self.jax, target == "x64")
        self.nnx = import_framework("flax.nnx", EXTRA)
        flax = import_framework("flax", EXTRA)
        features = {"int32_ids"} | ({"float64"} if target == "x64" else set())
        caps = Capabilities(
            frozenset({"embedding_forward", "embedding_backward"}),
            frozenset(features),
            notes=(f"jax {self.jax.__version__}, x64 mode {'on' if target == 'x64' else 'off'}",),
            documented=JAX_INDEXING,
        )
        super().__init__(
            f"flax:{target}" if target else "flax",
            flax,
            caps,
            self.display_name + (" (jax x64)" if target == "x64" else ""),
        )

    def _embed(self, weight: np.ndarray) -> Any:
        jnp = self.jax.numpy
        rows, dim = weight.shape
        embed = self.nnx.Embed(rows, dim, dtype=weight.dtype, param_dtype=weight.dtype, rngs=self.nnx.Rngs(0))
        embed.embedding.value = jnp.asarray(weight)
        return embed

    def embedding_forward(self, weight: np.ndarray, ids: np.ndarray) -> Any:
        return to_numpy(self._embed(weight)(self.jax.numpy.asarray(ids)))

    def embedding_backward(self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> Any:
        graph, state = self.nnx.split(self._embed(weight))
        ids_j = self.jax.numpy.asarray(ids)
        grad = vjp(self.jax, lambda s: self.nnx.merge(graph, s)(ids_j), state, grad_output)
        return to_numpy(grad["embedding"].value)
