"""``equinox``: Equinox's ``eqx.nn.Embedding``, mapped over the ids with ``jax.vmap``, backward through ``jax.vjp``.

What is Equinox's and what is the adapter's:

- ``eqx.nn.Embedding(weight=table)`` holds the fixture's table. It takes one scalar id; ids of any
  shape are looked up as Equinox documents, by ``jax.vmap`` over each axis (the adapter's only glue,
  numerically nothing). The gradient is ``jax.vjp`` in the table. No id, shape or dtype check is added:
  negative ids wrap and ids >= V are clamped to the last row, as ``jnp`` indexing does.
- Equinox takes integer ids only (``float_ids`` is not declared); JAX's refusal of an upstream gradient
  of the wrong shape is ``shape_mismatch``. JAX's x64 mode stays off (its default).
- Equinox has no position or layer module for this; none is composed here.
"""

from __future__ import annotations

from typing import Any, Callable

from embconf.adapters.frameworks import import_framework
from embconf.adapters.jaxcommon import JaxLookupAdapter

EXTRA = "equinox"


class EquinoxAdapter(JaxLookupAdapter):
    kind = "equinox"
    display_name = "Equinox nn.Embedding"

    def __init__(self, target: str = "") -> None:
        self.eqx = import_framework("equinox", EXTRA)
        super().__init__("equinox", self.eqx)

    def lookup(self, table: Any, ids: Any) -> Any:
        embedding: Callable[[Any], Any] = self.eqx.nn.Embedding(weight=table)
        for _ in range(ids.ndim):  # one vmap per axis of the ids
            embedding = self.jax.vmap(embedding)
        return embedding(ids)
