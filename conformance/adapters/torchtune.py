"""``torchtune`` / ``torchtune:llama3``: torchtune's ``RotaryPositionalEmbeddings`` and ``Llama3ScaledRoPE``
(``torchtune.modules`` and ``torchtune.models.llama3_1``), against the spec's rope operations.

What is torchtune's and what is the adapter's:

- ``RotaryPositionalEmbeddings(dim=rotary_dim, max_seq_len=..., base=base)`` (or ``Llama3ScaledRoPE(...,
  scale_factor=factor, low_freq_factor, high_freq_factor, old_context_len=original_max_position_embeddings)``)
  called as its attention calls it, ``rope(x, input_pos=position_ids)`` on x viewed as ``[b, s, n_h, h_d]`` (x's
  leading axes as heads of one batch row, or, for per-batch ``(B, T)`` positions, its first axis as ``b``: its
  packed-sample ``input_pos``). ``input_pos`` indexes its cache: any positions (``rope-positions``,
  ``rope-batch-positions``). The cache holds ``max_seq_len`` positions: the adapter builds it up to the largest
  position asked for, as a model configured for that length would.
- It pairs ``(2k, 2k + 1)`` (``xshaped = x.reshape(..., -1, 2)``): ``rope-interleaved`` only. It rotates the
  whole head (``dim`` is the head width): a case with ``rotary_dim != d`` is declined, so no ``rope-partial``.
- ``torchtune`` has no scaling; ``torchtune:llama3`` has only llama3 scaling (a case without it is declined):
  ``rope-llama3``. It computes in float32 (``x.float()``) and casts back: float16 and bfloat16 are declared,
  float64 is not.
- Mapped: autograd's grad_output shape check, to shape_mismatch; an unknown pairing is the adapter's (decided by
  glue). Nothing else: torchtune checks neither ``position_ids`` against x's sequence nor an odd width (torch's
  refusal to view the cached rows stays an untyped RuntimeError), and a base <= 0 gives NaN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.adapters.frameworks import FrameworkAdapter, import_framework, package_version
from embconf.adapters.rope import check_rank
from embconf.adapters.rope_operations import RopeCall
from embconf.adapters.torch_rope import TorchRope
from embconf.model.contract import Capabilities
from embconf.model.errors import Decline
from embconf.model.rope import BATCH_POSITIONS_FEATURE

EXTRA = "torchtune"
TARGETS = {"": "RotaryPositionalEmbeddings", "llama3": "Llama3ScaledRoPE"}


class TorchtuneAdapter(FrameworkAdapter):
    kind = "torchtune"
    targets = tuple(TARGETS)

    def __init__(self, target: str = "") -> None:
        torch = import_framework("torch", EXTRA)
        package = import_framework("torchtune", EXTRA)
        module = "torchtune.models.llama3_1" if target == "llama3" else "torchtune.modules"
        rope = TorchtuneRope(torch, getattr(import_framework(module, EXTRA), TARGETS[target]), target == "llama3")
        caps = Capabilities(
            rope.operations, rope.features() | {"float16", "bfloat16"}, notes=(f"{module}.{TARGETS[target]}",)
        )
        name = f"torchtune:{target}" if target else "torchtune"
        super().__init__(name, package, caps, f"torchtune {TARGETS[target]}", (rope,))
        self._version = package_version("torchtune") or self._version


class TorchtuneRope(TorchRope):
    """``module(x, input_pos=position_ids)`` on x viewed as [b, s, n_h, h_d], for one module class."""

    pairings = ("interleaved",)
    positions = True

    def features(self) -> frozenset[str]:
        return super().features() | {BATCH_POSITIONS_FEATURE}

    def __init__(self, torch: Any, module_class: Any, llama3: bool) -> None:
        super().__init__(torch)
        self.module_class, self.llama3 = module_class, llama3
        self.scalings = ("llama3",) if llama3 else ()

    def rotate(self, x: Any, rotation: RopeCall) -> Any:
        check_rank(x)
        if rotation.rotary_dim != x.shape[-1]:
            raise Decline(f"it rotates the whole head: rotary_dim {rotation.rotary_dim} != d {x.shape[-1]}")
        rope = self._module(rotation, int(np.max(rotation.position_ids, initial=0)) + 1)
        positions = np.asarray(rotation.position_ids, dtype=np.int64)
        batch = x.shape[0] if positions.ndim == 2 else 1  # per-batch rows: x is (B, ..., T, d)
        heads = x.reshape(batch, -1, *x.shape[-2:]).transpose(1, 2)  # [b, s, n_h, h_d]
        out = rope(heads, input_pos=self.torch.from_numpy(positions))
        return out.transpose(1, 2).reshape(x.shape)

    def _module(self, rotation: RopeCall, length: int) -> Any:
        kind, scaling = rotation.rope_type, rotation.scaling
        if not self.llama3:
            if kind != "default":
                raise Decline(f"torchtune's RotaryPositionalEmbeddings has no {kind} scaling")
            return self.module_class(dim=rotation.rotary_dim, max_seq_len=length, base=rotation.base)
        if kind != "llama3":
            raise Decline(f"Llama3ScaledRoPE always applies llama3 scaling, not {kind}")
        return self.module_class(
            dim=rotation.rotary_dim,
            max_seq_len=length,
            base=rotation.base,
            scale_factor=scaling["factor"],
            low_freq_factor=scaling["low_freq_factor"],
            high_freq_factor=scaling["high_freq_factor"],
            old_context_len=scaling["original_max_position_embeddings"],
        )
