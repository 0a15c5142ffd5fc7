"""``rotary_embedding_torch`` / ``rotary_embedding_torch:freqs``: the ``rotary-embedding-torch`` package's
``RotaryEmbedding`` (lucidrains; PyTorch), against the spec's rope operations.

- ``rotary_embedding_torch``: its main API, ``RotaryEmbedding(dim=rotary_dim, theta=base,
  interpolate_factor=factor).rotate_queries_or_keys(x, offset=p0)``: positions are ``offset + 0..T-1`` (a
  contiguous run: ``rope-positions`` is not declared), made by ``get_seq_pos`` in x's own dtype.
- ``rotary_embedding_torch:freqs``: ``freqs = RotaryEmbedding(...)(position_ids)`` (the angles at any positions,
  float32) and ``apply_rotary_emb(freqs, x)``, the package's documented route for positions of one's own:
  ``rope-positions`` is declared. ``interpolate_factor`` scales only the positions ``get_seq_pos`` makes, so
  this route declares no scaling.

What is the package's and what is the adapter's: it pairs (2k, 2k + 1) (its ``rotate_half`` works on
``(d r)`` with ``r = 2``): ``rope-interleaved`` only. It rotates the first ``dim`` features and leaves the rest
(``rope-partial``). ``interpolate_factor`` divides the positions of the main API: linear scaling (it asserts
a factor >= 1).
Its ``theta_rescale_factor`` is a static NTK base scaling, not the spec's dynamic NTK, and it has no YaRN or
llama3: only ``rope-linear`` is declared. ``rope_tables`` are read off its rotation of a probe
(:func:`embconf.adapters.rope.probe`); the backward is torch autograd. Its ``AssertionError`` for a
``rotary_dim`` wider than x is mapped to invalid_config and autograd's grad_output shape check to
shape_mismatch; an unknown pairing, and (main API, which sees their start only) position ids of another length
than x's sequence axis are the adapter's (decided by glue). Its ``theta_rescale_factor ** (dim / (dim - 2))``
divides by zero for ``rotary_dim`` 2 even with no rescaling: those cases fail as they are. A fresh module
serves each call; the calls on one instance (spec section 9.7) share their first call's, with its caches
(``cached_freqs``, EMB-STA-3).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import contextmanager
from functools import partial
from typing import Any, Iterator

import numpy as np

from embconf.adapters import ImplementationError
from embconf.adapters.common import Handler
from embconf.adapters.frameworks import FrameworkAdapter, import_framework
from embconf.adapters.instances import Instances
from embconf.adapters.pytorch import to_numpy
from embconf.adapters.rope import (
    check_offset_length,
    check_pairing,
    probe,
    require_contiguous,
    rope_features,
    rope_type,
    tables_of,
)
from embconf.adapters.transformers_rope import autograd_backward
from embconf.model.contract import STATEFUL, Capabilities, Reply
from embconf.model.errors import Decline
from embconf.reference.errors import EmbeddingError

EXTRA = "rotary-embedding-torch"
TARGETS = {"": "rotate_queries_or_keys", "freqs": "apply_rotary_emb"}
TOO_WIDE = "is not of sufficient size to rotate"


class RotaryTorchAdapter(FrameworkAdapter):
    kind = "rotary_embedding_torch"

    def __init__(self, target: str = "") -> None:
        if target not in TARGETS:
            raise ImplementationError(
                f"unknown rotary_embedding_torch target {target!r}; use rotary_embedding_torch or rotary_embedding_torch:freqs"
            )
        self.torch = import_framework("torch", EXTRA)
        self.package = import_framework("rotary_embedding_torch", EXTRA)
        self.positions = target == "freqs"
        handlers: dict[str, Handler] = {
            "rope_tables": self.rope_tables,
            "rope_forward": self.rope_forward,
            "rope_backward": self.rope_backward,
        }
        scalings = () if self.positions else ("linear",)  # interpolate_factor applies in get_seq_pos only
        features = rope_features(("interleaved",), scalings, partial=True, positions=self.positions)
        caps = Capabilities(
            frozenset(handlers), features | {"float16", "bfloat16", STATEFUL}, notes=(f"API {TARGETS[target]}",)
        )
        name = f"rotary_embedding_torch:{target}" if target else "rotary_embedding_torch"
        super().__init__(name, self.package, handlers, caps, f"rotary-embedding-torch {TARGETS[target]}")
        self._version = _version()
        self._modules: Instances[Any] = Instances()  # the module of an instance's first call

    def call_on(self, instance: int, operation: str, inputs: dict[str, Any]) -> Reply:
        with self._modules.on(instance):
            return self.call(operation, inputs)

    def rope_tables(
        self, position_ids: np.ndarray, rotary_dim: int, base: float, scaling: Mapping[str, Any], dtype: str
    ) -> tuple[Any, Any]:
        rows = self._tensor(probe(len(position_ids), rotary_dim, "interleaved", dtype))
        with self.torch.no_grad():
            rotated = self._rotate(rows, position_ids, rotary_dim, base, scaling)
        return tables_of(to_numpy(rotated), "interleaved")

    def rope_forward(
        self,
        x: np.ndarray,
        position_ids: np.ndarray,
        rotary_dim: int,
        base: float,
        scaling: Mapping[str, Any],
        pairing: str,
    ) -> Any:
        check_pairing(pairing, ("interleaved",))
        with self.torch.no_grad():
            return to_numpy(self._rotate(self._tensor(x), position_ids, rotary_dim, base, scaling))

    def rope_backward(
        self,
        x: np.ndarray,
        position_ids: np.ndarray,
        rotary_dim: int,
        base: float,
        scaling: Mapping[str, Any],
        pairing: str,
        grad_output: np.ndarray,
    ) -> Any:
        check_pairing(pairing, ("interleaved",))
        rotate = partial(self._rotate, position_ids=position_ids, rotary_dim=rotary_dim, base=base, scaling=scaling)
        return autograd_backward(rotate, self._tensor(x), lambda: self._tensor(grad_output))

    def _rotate(
        self, x: Any, position_ids: np.ndarray, rotary_dim: int, base: float, scaling: Mapping[str, Any]
    ) -> Any:
        kind = rope_type(scaling)
        if kind not in ("default", "linear"):
            raise Decline(f"rotary-embedding-torch has no {kind} scaling")
        if kind == "linear" and self.positions:
            raise Decline("its forward(positions) takes the positions as given (interpolate_factor scales get_seq_pos)")
        factor = float(scaling["factor"]) if kind == "linear" else 1.0
        build = partial(self.package.RotaryEmbedding, dim=rotary_dim, theta=base, interpolate_factor=factor)
        rotary = self._modules.get(build)[0]
        with too_wide_errors():
            if self.positions:
                freqs = rotary(self.torch.from_numpy(np.asarray(position_ids, dtype=np.int64)))
                return self.package.apply_rotary_emb(freqs, x)
            check_offset_length(x, position_ids)
            offset = require_contiguous(position_ids, "rotate_queries_or_keys (offset)")
            return rotary.rotate_queries_or_keys(x, offset=offset)

    def _tensor(self, array: np.ndarray) -> Any:
        array = np.asarray(array, order="C")
        if array.dtype.name == "bfloat16":  # ml_dtypes -> torch through the bit patterns
            return self.torch.from_numpy(array.view(np.uint16).copy()).view(self.torch.bfloat16)
        return self.torch.from_numpy(array.copy())


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rotary-embedding-torch")
    except PackageNotFoundError:
        return ""


@contextmanager
def too_wide_errors() -> Iterator[None]:
    """The package's assertion that x has rotary_dim features to rotate, as invalid_config."""
    try:
        yield
    except AssertionError as exc:
        if TOO_WIDE in str(exc):
            raise EmbeddingError("invalid_config", f"AssertionError: {exc}") from exc
        raise
