"""What the JAX-based adapters (flax, haiku, equinox, keras on jax) share: x64 mode, backward through ``jax.vjp``,
and the deviations JAX documents as its design (:data:`JAX_INDEXING`).

JAX computes in 32 bits unless its x64 mode is on (``jax_enable_x64``); then int64 ids and float64
tables keep their dtype. The mode is process-wide, so it is chosen once, before the first array.
:class:`JaxLookupAdapter` is the adapter of a library whose lookup is a function of (table, ids).
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType
from typing import Any, Callable

import numpy as np

from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import FrameworkAdapter
from embconf.model.contract import Capabilities, DocumentedChoice
from embconf.reference.errors import EmbeddingError

# jax.vjp's pullback given a cotangent whose type differs from the output's
_COTANGENT = re.compile(r"unexpected JAX type.*got (\w+)\[([\d,]*)\], but expected (\w+)\[([\d,]*)\]", re.S)


# JAX's documented indexing, which jnp.take (nnx.Embed's lookup) and its gradient follow: no error is raised
# for an index out of bounds (code on an accelerator cannot raise), and a negative index counts from the end.
JAX_INDEXING = (
    DocumentedChoice(
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#out-of-bounds-indexing",
        "JAX never raises for an out-of-bounds index, because code on an accelerator cannot raise: jnp.take "
        "fills such a row with NaN by default (mode='fill') or clamps it (mode='clip'), and an out-of-bounds "
        "gradient update is dropped.",
        requirements=("EMB-IDX-1",),
    ),
    DocumentedChoice(
        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html",
        "JAX indexing counts a negative index from the end of the array, as NumPy does "
        "(wrap_negative_indices=True, the default).",
        requirements=("EMB-IDX-2",),
    ),
)


# The same documented design for a lookup written as array indexing (``table[ids]``: haiku's ARRAY_INDEX, Equinox):
# a retrieval clamps an out-of-bounds index to the bounds.
JAX_ARRAY_INDEXING = (
    DocumentedChoice(
        JAX_INDEXING[0].link,
        "JAX never raises for an out-of-bounds index, because code on an accelerator cannot raise: array indexing "
        "clamps the index to the bounds of the array for a retrieval, and an out-of-bounds gradient update is dropped.",
        requirements=("EMB-IDX-1",),
    ),
    JAX_INDEXING[1],
)


def enable_x64(jax: ModuleType, on: bool) -> None:
    """Switch JAX's x64 mode (process-wide) to ``on``."""
    jax.config.update("jax_enable_x64", bool(on))


def x64_enabled(jax: ModuleType) -> bool:
    return bool(jax.config.read("jax_enable_x64"))


def vjp(jax: ModuleType, fn: Callable[[Any], Any], primal: Any, grad_output: np.ndarray) -> Any:
    """The gradient of ``fn`` at ``primal`` for the upstream gradient ``grad_output``, by ``jax.vjp``.

    JAX's own refusal of a cotangent of the wrong shape (same dtype) is ``shape_mismatch``; a
    refusal for any other reason (a dtype) stays the exception it is.
    """
    _, pullback = jax.vjp(fn, primal)
    try:
        (grad,) = pullback(jax.numpy.asarray(grad_output))
    except ValueError as exc:
        found = _COTANGENT.search(str(exc))
        if found and found.group(1) == found.group(3) and found.group(2) != found.group(4):
            raise EmbeddingError("shape_mismatch", f"ValueError: {exc}") from exc
        raise
    return grad


class JaxLookupAdapter(FrameworkAdapter):
    """A JAX library's lookup as ``lookup(table, ids)``: the forward is it, the backward ``jax.vjp`` of it in ``table``.

    JAX runs with its default x64 mode off (int64 ids and float64 tables are narrowed), so float64 is
    not declared; subclasses set ``kind``, ``display_name`` and implement :meth:`lookup`.
    """

    FEATURES = frozenset({"int32_ids", "float16", "bfloat16"})

    def __init__(
        self,
        target: str,
        library: ModuleType,
        notes: tuple[str, ...] = (),
        documented: tuple[DocumentedChoice, ...] = JAX_ARRAY_INDEXING,
    ) -> None:
        self.jax = importlib.import_module("jax")  # the library imported it
        enable_x64(self.jax, False)
        caps = Capabilities(
            frozenset({"embedding_forward", "embedding_backward"}),
            self.FEATURES,
            notes=(f"jax {self.jax.__version__}, x64 mode off", *notes),
            documented=documented,
        )
        super().__init__(target, library, caps)

    def lookup(self, table: Any, ids: Any) -> Any:
        raise NotImplementedError

    def embedding_forward(self, weight: np.ndarray, ids: np.ndarray) -> Any:
        jnp = self.jax.numpy
        return to_numpy(self.lookup(jnp.asarray(weight), jnp.asarray(ids)))

    def embedding_backward(self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> Any:
        jnp = self.jax.numpy
        ids_j, table = jnp.asarray(ids), jnp.asarray(weight)
        out = self.jax.eval_shape(lambda t: self.lookup(t, ids_j), table)
        if np.can_cast(grad_output.dtype, out.dtype, "safe"):  # a float32 output of a half table (one-hot matmul):
            grad_output = grad_output.astype(out.dtype)  # its upstream gradient is float32 too; widening is exact
        return to_numpy(vjp(self.jax, lambda t: self.lookup(t, ids_j), table, grad_output))
