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

import functools
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from embconf.adapters.frameworks import FrameworkAdapter, import_framework, refusals
from embconf.adapters.instances import CallsOnInstances, Instances
from embconf.adapters.rope import check_offset_length, require_contiguous
from embconf.adapters.rope_operations import RopeCall
from embconf.adapters.torch_rope import TorchRope
from embconf.model.contract import STATEFUL, Capabilities
from embconf.model.errors import Decline

EXTRA = "rotary-embedding-torch"
TARGETS = {"": "rotate_queries_or_keys", "freqs": "apply_rotary_emb"}
TOO_WIDE = "is not of sufficient size to rotate"


class RotaryTorchAdapter(CallsOnInstances, FrameworkAdapter):
    kind = "rotary_embedding_torch"
    targets = tuple(TARGETS)

    def __init__(self, target: str = "") -> None:
        torch = import_framework("torch", EXTRA)
        rope = RotaryTorchRope(torch, import_framework("rotary_embedding_torch", EXTRA), target == "freqs")
        caps = Capabilities(
            rope.operations, rope.features() | {"float16", "bfloat16", STATEFUL}, notes=(f"API {TARGETS[target]}",)
        )
        name = f"rotary_embedding_torch:{target}" if target else "rotary_embedding_torch"
        super().__init__(name, rope.package, caps, f"rotary-embedding-torch {TARGETS[target]}", (rope,))
        self._version = _version()
        self.rope = rope
        self.instances = rope.instances  # the rotary module of an instance's first call (spec section 9.7)


class RotaryTorchRope(TorchRope):
    """The package's rotation: ``rotate_queries_or_keys`` at an offset, or ``apply_rotary_emb`` of its freqs."""

    pairings = ("interleaved",)
    partial = True

    def __init__(self, torch: Any, package: Any, freqs: bool) -> None:
        super().__init__(torch)
        self.package, self.positions = package, freqs
        self.scalings = () if freqs else ("linear",)  # interpolate_factor applies in get_seq_pos only
        self.instances: Instances[Any] = Instances()  # the module of an instance's first call (EMB-STA-3)

    def rotate(self, x: Any, rotation: RopeCall) -> Any:
        kind = rotation.rope_type
        if kind not in ("default", "linear"):
            raise Decline(f"rotary-embedding-torch has no {kind} scaling")
        if kind == "linear" and self.positions:
            raise Decline("its forward(positions) takes the positions as given (interpolate_factor scales get_seq_pos)")
        factor = float(rotation.scaling["factor"]) if kind == "linear" else 1.0
        build = functools.partial(
            self.package.RotaryEmbedding, dim=rotation.rotary_dim, theta=rotation.base, interpolate_factor=factor
        )
        rotary = self.instances.get(build)[0]
        with too_wide_errors():
            if self.positions:
                freqs = rotary(self.torch.from_numpy(np.asarray(rotation.position_ids, dtype=np.int64)))
                return self.package.apply_rotary_emb(freqs, x)
            check_offset_length(x, rotation.position_ids)
            offset = require_contiguous(rotation.position_ids, "rotate_queries_or_keys (offset)")
            return rotary.rotate_queries_or_keys(x, offset=offset)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rotary-embedding-torch")
    except PackageNotFoundError:
        return ""


def too_wide_errors() -> AbstractContextManager[None]:
    """The package's assertion that x has rotary_dim features to rotate, as invalid_config."""
    return refusals(AssertionError, (TOO_WIDE, "invalid_config"))
