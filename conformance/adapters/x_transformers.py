"""``x_transformers``: x-transformers' ``RotaryEmbedding`` and ``apply_rotary_pos_emb`` (lucidrains; PyTorch), as
its ``Attention`` calls them, against the spec's rope operations.

What is x-transformers' and what is the adapter's:

- ``freqs, scale = RotaryEmbedding(dim=rotary_dim, base=base, interpolation_factor=factor)(position_ids)`` (the
  angles at any positions: ``rope-positions``), then ``apply_rotary_pos_emb(x, freqs, scale)``, which rotates the
  first ``rotary_dim`` features and keeps the rest (``rope-partial``). Its ``rotate_half`` pairs
  ``(2k, 2k + 1)`` (``'... (d r) -> ... d r', r = 2``): ``rope-interleaved`` only.
- ``interpolation_factor`` divides the angles: linear scaling (``rope-linear``; it asserts a factor >= 1). Its
  ``base_rescale_factor`` is a static NTK base scaling, none of the spec's families: nothing else is declared.
- ``apply_rotary_pos_emb`` wants a batch axis: x is viewed as ``(batch, T, d)`` (every leading axis folded into
  the batch), or for per-batch ``(B, T)`` positions (``rope-batch-positions``: its ``RotaryEmbedding`` takes them
  as they are) as ``(B, heads, T, d)`` ( an x of rank < 2 is shape_mismatch, decided by glue). It computes in the tables' float32 and casts
  back: float16 and bfloat16 are declared, float64 is not.
- Mapped: torch's refusal to broadcast tables of another length and autograd's grad_output shape check, to
  shape_mismatch. Its ``base_rescale_factor ** (dim / (dim - 2))`` divides by zero for ``rotary_dim`` 2 even
  with no rescaling asked: those cases fail as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.adapters.frameworks import FrameworkAdapter, import_framework, package_version
from embconf.adapters.rope import batches, check_rank
from embconf.adapters.rope_operations import RopeCall
from embconf.adapters.torch_rope import TorchRope
from embconf.model.contract import Capabilities
from embconf.model.errors import Decline
from embconf.model.rope import BATCH_POSITIONS_FEATURE

EXTRA = "x-transformers"


class XTransformersAdapter(FrameworkAdapter):
    kind = "x_transformers"

    def __init__(self, target: str = "") -> None:
        torch = import_framework("torch", EXTRA)
        package = import_framework("x_transformers", EXTRA)
        rope = XTransformersRope(torch, import_framework("x_transformers.x_transformers", EXTRA))
        caps = Capabilities(
            rope.operations,
            rope.features() | {"float16", "bfloat16"},
            notes=("x_transformers.x_transformers: RotaryEmbedding + apply_rotary_pos_emb",),
        )
        super().__init__("x_transformers", package, caps, "x-transformers RotaryEmbedding", (rope,))
        self._version = package_version("x-transformers") or self._version


class XTransformersRope(TorchRope):
    """``apply_rotary_pos_emb(x, *RotaryEmbedding(...)(position_ids))`` on x viewed as (batch, T, d)."""

    pairings = ("interleaved",)
    scalings = ("linear",)
    partial = True
    positions = True

    def features(self) -> frozenset[str]:
        return super().features() | {BATCH_POSITIONS_FEATURE}

    def __init__(self, torch: Any, module: Any) -> None:
        super().__init__(torch)
        self.module = module

    def rotate(self, x: Any, rotation: RopeCall) -> Any:
        check_rank(x)
        kind = rotation.rope_type
        if kind not in ("default", "linear"):
            raise Decline(f"x-transformers' RotaryEmbedding has no {kind} scaling")
        factor = float(rotation.scaling["factor"]) if kind == "linear" else 1.0
        rotary = self.module.RotaryEmbedding(rotation.rotary_dim, base=rotation.base, interpolation_factor=factor)
        freqs, scale = rotary(self.torch.from_numpy(np.asarray(rotation.position_ids, dtype=np.int64)))
        if np.ndim(rotation.position_ids) == 2:  # per-batch rows: x is (B, ..., T, d), seen as (B, heads, T, d)
            return self.module.apply_rotary_pos_emb(x.reshape(x.shape[0], -1, *x.shape[-2:]), freqs, scale).reshape(
                x.shape
            )
        return self.module.apply_rotary_pos_emb(x.reshape(batches(x), *x.shape[-2:]), freqs, scale).reshape(x.shape)
