"""``megatron``: Megatron-Core's ``RotaryEmbedding`` and its unfused PyTorch rotation (the path
``apply_rotary_pos_emb`` takes without Transformer Engine's fused kernel), against the spec's rope operations.

What is Megatron-Core's and what is the adapter's:

- ``RotaryEmbedding(kv_channels=d, rotary_percent=rotary_dim / d, rotary_interleaved=..., rotary_base=base,
  seq_len_interpolation_factor=..., rope_scaling=..., rope_scaling_factor=..., use_cpu_initialization=True)``.
  Its ``get_freqs_non_repeated(T, offset)`` gives the angles of positions ``offset + 0..T-1`` (a contiguous run:
  ``rope-positions`` is not declared). ``forward``/``get_emb`` first move its frequencies to the current CUDA
  device, which a CPU-only PyTorch has not: the adapter lays the angles out as ``get_emb`` does (``[f, f]`` for
  half_split, each angle twice for interleaved, shape ``[T, 1, 1, r]``) and calls
  ``rope_utils._apply_rotary_pos_emb_bshd``, the function ``apply_rotary_pos_emb`` calls when
  ``apply_rope_fusion`` is off (its public wrapper also needs an initialised context-parallel group).
- x is viewed as ``[s, b, h, d]`` (x's leading axes folded into ``b``, one head). ``rotary_interleaved`` chooses
  the pairing: both are declared. The rotation splits off the first ``rotary_dim`` features and keeps the rest
  (``rope-partial``).
- Scaling: ``seq_len_interpolation_factor`` multiplies the positions by ``1 / factor`` (``rope-linear``);
  ``rope_scaling=True`` is llama3 scaling, and its constructor takes only the factor: low_freq_factor 1,
  high_freq_factor 4 and original_max_position_embeddings 8192 are fixed inside ``_apply_scaling``, so a case
  with other values gets Megatron's constants (declared: ``rope-llama3``, measured as it is). No dynamic NTK;
  its YaRN is another class (``YarnRotaryEmbedding``), not run here.
- Dtypes: the angles are float32 and cos/sin are cast to x's dtype before the product: float16 and bfloat16
  are declared, float64 is not. Mapped: autograd's grad_output shape check and torch's broadcast refusal, to
  shape_mismatch; the adapter rejects an unknown pairing, an x of rank < 2 and ``position_ids`` of another
  length than x's sequence axis (decided by glue). Nothing else.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from embconf.adapters.frameworks import FrameworkAdapter, import_framework, package_version
from embconf.adapters.rope import (
    batches,
    check_offset_length,
    check_rank,
    require_contiguous,
    rope_type,
    rotary_fraction,
)
from embconf.adapters.rope_operations import RopeCall
from embconf.adapters.torch_rope import TorchRope
from embconf.model.contract import Capabilities
from embconf.model.errors import Decline

EXTRA = "megatron"
EMBEDDINGS = "megatron.core.models.common.embeddings"


class MegatronAdapter(FrameworkAdapter):
    kind = "megatron"

    def __init__(self, target: str = "") -> None:
        torch = import_framework("torch", EXTRA)
        with warnings.catch_warnings():  # "Transformer Engine and Apex are not installed": the CPU path is the point
            warnings.simplefilter("ignore")
            package = import_framework("megatron.core", EXTRA)
            rotary = import_framework(f"{EMBEDDINGS}.rotary_pos_embedding", EXTRA)
            utils = import_framework(f"{EMBEDDINGS}.rope_utils", EXTRA)
        rope = MegatronRope(torch, rotary, utils)
        caps = Capabilities(
            rope.operations,
            rope.features() | {"float16", "bfloat16"},
            notes=(f"{EMBEDDINGS}: RotaryEmbedding + rope_utils._apply_rotary_pos_emb_bshd (unfused, CPU)",),
        )
        super().__init__("megatron", package, caps, "Megatron-Core RotaryEmbedding", (rope,))
        self._version = package_version("megatron-core") or self._version


class MegatronRope(TorchRope):
    """RotaryEmbedding's angles at an offset, laid out as get_emb lays them, rotated by the unfused bshd path."""

    pairings = ("half_split", "interleaved")
    scalings = ("linear", "llama3")
    partial = True

    def __init__(self, torch: Any, rotary: Any, utils: Any) -> None:
        super().__init__(torch)
        self.rotary, self.utils = rotary, utils

    def rotate(self, x: Any, rotation: RopeCall) -> Any:
        check_rank(x)
        check_offset_length(x, rotation.position_ids)
        offset = require_contiguous(rotation.position_ids, "Megatron's get_freqs_non_repeated (an offset)")
        interleaved = rotation.pairing == "interleaved"
        width, length = x.shape[-1], x.shape[-2]
        rotary = self.rotary.RotaryEmbedding(
            kv_channels=width,
            rotary_percent=rotary_fraction(rotation.rotary_dim, width),
            rotary_interleaved=interleaved,
            rotary_base=rotation.base,
            use_cpu_initialization=True,
            **scaling_arguments(rotation.scaling),
        )
        freqs = rotary.get_freqs_non_repeated(length, offset)
        if interleaved:  # get_emb's layout, without its move to the GPU
            emb = self.torch.stack((freqs.view(-1, 1), freqs.view(-1, 1)), dim=-1).view(freqs.shape[0], -1)
        else:
            emb = self.torch.cat((freqs, freqs), dim=-1)
        sbhd = x.reshape(batches(x), length, 1, width).transpose(0, 1)  # [s, b, h, d]
        out = self.utils._apply_rotary_pos_emb_bshd(sbhd, emb[:, None, None, :], rotary_interleaved=interleaved)
        return out.transpose(0, 1).reshape(x.shape)


def scaling_arguments(scaling: Mapping[str, Any]) -> dict[str, Any]:
    """The RotaryEmbedding keywords of a case's scaling (Decline for a family Megatron's class has not)."""
    kind = rope_type(scaling)
    if kind == "default":
        return {}
    if kind == "linear":
        return {"seq_len_interpolation_factor": float(scaling["factor"])}
    if kind == "llama3":
        return {"rope_scaling": True, "rope_scaling_factor": float(scaling["factor"])}
    raise Decline(f"Megatron-Core's RotaryEmbedding has no {kind} scaling")
