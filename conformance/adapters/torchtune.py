"""``torchtune`` / ``torchtune:llama3``: torchtune's ``RotaryPositionalEmbeddings`` and ``Llama3ScaledRoPE``
(``torchtune.modules`` and ``torchtune.models.llama3_1``), against the spec's rope operations.

What is torchtune's and what is the adapter's:

- ``RotaryPositionalEmbeddings(dim=rotary_dim, max_seq_len=..., base=base)`` (or ``Llama3ScaledRoPE(...,
  scale_factor=factor, low_freq_factor, high_freq_factor, old_context_len=original_max_position_embeddings)``)
  called as its attention calls it, ``rope(x, input_pos=position_ids)`` on x viewed as ``[b, s, n_h, h_d]``
  (every leading axis of x folded into ``b``, one head). ``input_pos`` indexes its cache: any positions
  (``rope-positions``). The cache holds ``max_seq_len`` positions: the adapter builds it up to the largest
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

from collections.abc import Mapping
from typing import Any

import numpy as np

from embconf.adapters import ImplementationError
from embconf.adapters.frameworks import FrameworkAdapter, import_framework
from embconf.adapters.rope import check_rank, rope_features, rope_type
from embconf.adapters.torch_rope import TorchRope, package_version
from embconf.model.contract import Capabilities
from embconf.model.errors import Decline

EXTRA = "torchtune"
TARGETS = {"": "RotaryPositionalEmbeddings", "llama3": "Llama3ScaledRoPE"}


class TorchtuneAdapter(FrameworkAdapter):
    kind = "torchtune"

    def __init__(self, target: str = "") -> None:
        if target not in TARGETS:
            raise ImplementationError(f"unknown torchtune target {target!r}; use torchtune or torchtune:llama3")
        self.torch = import_framework("torch", EXTRA)
        package = import_framework("torchtune", EXTRA)
        self.llama3 = target == "llama3"
        module = "torchtune.models.llama3_1" if self.llama3 else "torchtune.modules"
        self.module_class = getattr(import_framework(module, EXTRA), TARGETS[target])
        rope = TorchRope(self.torch, self._rotate, ("interleaved",))
        features = rope_features(("interleaved",), ("llama3",) if self.llama3 else (), positions=True)
        caps = Capabilities(
            frozenset(rope.handlers()), features | {"float16", "bfloat16"}, notes=(f"{module}.{TARGETS[target]}",)
        )
        name = f"torchtune:{target}" if target else "torchtune"
        super().__init__(name, package, rope.handlers(), caps, f"torchtune {TARGETS[target]}")
        self._version = package_version("torchtune") or self._version

    def _rotate(
        self, x: Any, position_ids: np.ndarray, rotary_dim: int, base: float, scaling: Mapping[str, Any], pairing: str
    ) -> Any:
        check_rank(x)
        if rotary_dim != x.shape[-1]:
            raise Decline(f"it rotates the whole head: rotary_dim {rotary_dim} != d {x.shape[-1]}")
        rope = self._module(rotary_dim, base, scaling, int(np.max(position_ids, initial=0)) + 1)
        heads = x.reshape(-1, x.shape[-2], 1, x.shape[-1])  # [b, s, n_h, h_d]
        positions = self.torch.from_numpy(np.asarray(position_ids, dtype=np.int64))
        return rope(heads, input_pos=positions).reshape(x.shape)

    def _module(self, rotary_dim: int, base: float, scaling: Mapping[str, Any], length: int) -> Any:
        kind = rope_type(scaling)
        if not self.llama3:
            if kind != "default":
                raise Decline(f"torchtune's RotaryPositionalEmbeddings has no {kind} scaling")
            return self.module_class(dim=rotary_dim, max_seq_len=length, base=base)
        if kind != "llama3":
            raise Decline(f"Llama3ScaledRoPE always applies llama3 scaling, not {kind}")
        return self.module_class(
            dim=rotary_dim,
            max_seq_len=length,
            base=base,
            scale_factor=scaling["factor"],
            low_freq_factor=scaling["low_freq_factor"],
            high_freq_factor=scaling["high_freq_factor"],
            old_context_len=scaling["original_max_position_embeddings"],
        )
