"""``haiku`` / ``haiku:one_hot``: DeepMind Haiku's ``hk.Embed``, in either lookup style, backward through ``jax.vjp``.

What is Haiku's and what is the adapter's:

- ``hk.Embed`` is built with the fixture's table as its ``embedding_matrix`` and applied
  (``hk.transform``) with that table as its ``embeddings`` parameter; the gradient is ``jax.vjp`` in
  that parameter. No id, shape or dtype check is added.
- ``haiku`` (or ``haiku:array_index``) is ``lookup_style=ARRAY_INDEX``, a ``jnp`` gather: negative
  ids wrap and ids >= V are clamped to the last row. ``haiku:one_hot`` is ``lookup_style=ONE_HOT``,
  a one-hot matrix product: an id outside [0, V) selects nothing (a zero row), a half-precision table
  gives a float32 output, and a NaN or inf anywhere in the table spreads into every row (0 * NaN).
  Each is judged as it is.
- Haiku refuses float ids (``ValueError``), so ``float_ids`` is not declared; JAX's refusal of an
  upstream gradient of the wrong shape is ``shape_mismatch``. JAX's x64 mode stays off (its default).
- Haiku has no position or layer module; none is composed here.
"""

from __future__ import annotations

from typing import Any

from embconf.adapters.frameworks import import_framework
from embconf.adapters.jaxcommon import JAX_ARRAY_INDEXING, JaxLookupAdapter

EXTRA = "haiku"
STYLES = {"": "ARRAY_INDEX", "array_index": "ARRAY_INDEX", "one_hot": "ONE_HOT"}


class HaikuAdapter(JaxLookupAdapter):
    kind = "haiku"
    targets = tuple(STYLES)

    def __init__(self, target: str = "") -> None:
        self.hk = import_framework("haiku", EXTRA)
        self.style = STYLES[target]
        self.display_name = f"Haiku hk.Embed ({self.style})"
        documented = JAX_ARRAY_INDEXING if self.style == "ARRAY_INDEX" else ()  # ONE_HOT's zero rows are undocumented
        super().__init__(f"haiku:{target}" if target else "haiku", self.hk, (f"lookup_style {self.style}",), documented)

    def lookup(self, table: Any, ids: Any) -> Any:
        embed = self.hk.without_apply_rng(
            self.hk.transform(lambda i: self.hk.Embed(embedding_matrix=table, lookup_style=self.style)(i))
        )
        return embed.apply({"embed": {"embeddings": table}}, ids)
