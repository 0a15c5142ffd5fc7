"""``transformers:MODEL`` for a model's rotary position embedding: its ``<Model>RotaryEmbedding`` and its
``apply_rotary_pos_emb``, called as the model's attention calls them (MODEL: llama, gpt_neox, qwen2, gemma, phi, phi3,
qwen2_vl).

What is transformers' and what is the adapter's:

- The config is the model's own config class with ``head_dim = d`` (one head), ``rope_parameters`` = the case's
  ``scaling`` mapping plus ``rope_theta = base`` (the same key names: transformers' own), and for a partial model
  ``partial_rotary_factor = rotary_dim / d``. transformers' dynamic NTK scaling measures growth against
  ``max_position_embeddings``: the case's ``original_max_position_embeddings`` is passed there (and for yarn and
  llama3 it is also their own ``original_max_position_embeddings``). A fresh rotary module serves each call, and
  the calls on one instance (spec section 9.7) share the module of their first call, as a model's layers do: its
  dynamic NTK state is then transformers' own (EMB-STA-2).
- ``rope_tables``: the rotary module's ``forward(x, position_ids)`` on an empty tensor of the case's dtype (it
  returns ``(.., r)`` tables, the ``h`` frequencies twice: ``[..., :h]`` is kept).
- ``rope_forward``: ``apply_rotary_pos_emb(q=x, k=x, cos, sin)`` on x viewed as (batch, 1 head, T, d), its
  ``q_embed`` kept; ``rope_backward``: torch autograd through the same call. Per-batch ``(B, T)`` positions
  (2.0.0) go to the rotary module as they are, with x viewed as (B, heads, T, d).
- ``rope_apply`` (2.0.0): the same ``apply_rotary_pos_emb`` with the case's tables (``(T, r)`` given a batch axis
  of 1, as the rotary module returns them); ``rope_apply_backward``: autograd through it.
- Partial rotary is what the model does: GPT-NeoX's and Phi-3's ``apply_rotary_pos_emb`` split x at the tables'
  width themselves; Phi's attention splits ``q[..., :rotary_ndims]`` (``int(head_dim * partial_rotary_factor)``)
  before the call and concatenates the rest after it, which the adapter repeats. Llama, Qwen2, Gemma and Qwen2-VL
  rotate the whole head (their default frequencies ignore ``partial_rotary_factor``): ``rope-partial`` is not
  declared and a case with ``rotary_dim != d`` is declined.
- Every model pairs (k, k + h) (``rotate_half``): ``rope-half_split`` only. The adapter rejects an unknown
  pairing and an x of rank < 2 (it cannot view it as heads) itself (decided by glue). Mapped: transformers'
  ``KeyError`` for an unknown ``rope_type`` (its ``ROPE_INIT_FUNCTIONS`` lookup) and its config's "RoPE requires
  an even rotary dimension" to invalid_config; torch's refusal to broadcast tables of another length and its
  autograd's "Mismatch in shape" of grad_output to shape_mismatch. Nothing else: a base <= 0 gives NaN.
- transformers documents yarn's ``original_max_position_embeddings`` as optional and fills it from
  ``max_position_embeddings`` (cited as :data:`HF_YARN_ORIGINAL`; the spec rejects its absence).
- ``longrope`` (2.0.0) runs through the same rotary module (its ``longrope_frequency_update`` picks the long
  factors past ``original_max_position_embeddings``); Phi-3's config accepts ``default`` and ``longrope`` only
  ("type field must be one of", mapped to invalid_config, as the even-dimension refusal is) and turns a ``yarn``
  scaling into ``longrope``: it declares ``rope-longrope`` alone. Not run: ``proportional`` (Gemma 4's zero
  frequencies for the rest of the head), which no spec feature names.
- Qwen2-VL (config class ``Qwen2VLTextConfig``) takes M-RoPE position ids (temporal, height, width rows: ``(3, T)``
  or ``(3, B, T)``, ``rope-mrope``) and recomposes its tables from ``mrope_section``, the case's. A case with one
  row of positions gives it that row for every axis, and ``mrope_section`` in Qwen2-VL's proportions for the head
  width (:func:`text_sections`): with one position per token every split rotates alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, Iterator, Optional

import numpy as np

from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import glue_checks
from embconf.adapters.instances import Instances
from embconf.adapters.rope import batches, check_pairing, check_rank, check_table_dtype, rope_type, rotary_fraction
from embconf.adapters.rope_operations import RopeCall
from embconf.adapters.torch_rope import TorchRope, torch_shape_errors
from embconf.model.contract import STATEFUL, Capabilities, DocumentedChoice
from embconf.model.errors import Decline
from embconf.model.rope import BATCH_POSITIONS_FEATURE, MROPE_FEATURE, SECTION, batch_positions
from embconf.reference.errors import EmbeddingError
from embconf.reference.rope_apply import check_apply

HF_SCALINGS = ("linear", "dynamic", "yarn", "llama3", "longrope")
DTYPES = frozenset({"float16", "bfloat16", "float64"})
EVEN = "RoPE requires an even rotary dimension"
ONE_OF = "type field must be one of"  # a config that accepts only some rope_types (Phi-3: default and longrope)
HF_YARN_ORIGINAL = DocumentedChoice(
    "https://github.com/huggingface/transformers/blob/v5.0.0/src/transformers/modeling_rope_utils.py",
    "transformers documents original_max_position_embeddings as optional for yarn (RopeParameters) and "
    "standardize_rope_params fills it from max_position_embeddings",
    cases=("rope.error.yarn_missing_original",),
)
APPLY_OPERATIONS = frozenset({"rope_apply", "rope_apply_backward"})


@dataclass(frozen=True)
class RopeModel:
    module: str  # under transformers.models
    prefix: str  # <prefix>RotaryEmbedding, <prefix>Config
    title: str
    partial: str  # "": the whole head; "apply": apply_rotary_pos_emb splits; "attention": the attention splits
    config: str = ""  # the config class, when it is not <prefix>Config
    sections: bool = False  # M-RoPE: rope_parameters carry mrope_section (temporal, height, width frequencies)
    scalings: tuple[str, ...] = HF_SCALINGS  # the rope_types its config accepts


ROPE_MODELS = {
    "llama": RopeModel("llama.modeling_llama", "Llama", "Llama rotary embedding", ""),
    "gpt_neox": RopeModel("gpt_neox.modeling_gpt_neox", "GPTNeoX", "GPT-NeoX rotary embedding", "apply"),
    "qwen2": RopeModel("qwen2.modeling_qwen2", "Qwen2", "Qwen2 rotary embedding", ""),
    "gemma": RopeModel("gemma.modeling_gemma", "Gemma", "Gemma rotary embedding", ""),
    "phi": RopeModel("phi.modeling_phi", "Phi", "Phi rotary embedding", "attention"),
    "phi3": RopeModel("phi3.modeling_phi3", "Phi3", "Phi-3 rotary embedding", "apply", scalings=("longrope",)),
    "qwen2_vl": RopeModel(
        "qwen2_vl.modeling_qwen2_vl", "Qwen2VL", "Qwen2-VL rotary embedding (M-RoPE)", "", "Qwen2VLTextConfig", True
    ),
}


def rope_capabilities(rope: "HfRope") -> Capabilities:
    model = rope.model
    return Capabilities(
        rope.operations | APPLY_OPERATIONS,
        rope.features() | DTYPES | {BATCH_POSITIONS_FEATURE, STATEFUL} | ({MROPE_FEATURE} if model.sections else set()),
        notes=(f"transformers.models.{model.module}: {model.prefix}RotaryEmbedding + apply_rotary_pos_emb",),
        documented=(HF_YARN_ORIGINAL,),
    )


class HfRope(TorchRope):
    """The rope operations of one transformers model, on torch tensors: its rotary module and
    apply_rotary_pos_emb, and that function alone with given tables (rope_apply)."""

    positions = True

    def __init__(self, torch: Any, module: Any, model: RopeModel) -> None:
        super().__init__(torch)
        self.module, self.model, self.partial, self.scalings = module, model, bool(model.partial), model.scalings
        self.instances: Instances[Any] = Instances()  # the rotary module of an instance's first call

    def rope_tables(
        self, position_ids: np.ndarray, rotary_dim: int, base: float, scaling: Mapping[str, Any], dtype: str
    ) -> tuple[Any, Any]:
        """The rotary module's own tables, for an empty tensor of the case's dtype."""
        check_table_dtype(dtype)
        half = rotary_dim // 2
        with self.torch.no_grad():
            rotary = self._rotary(rotary_dim, rotary_dim, base, scaling)
            empty = self.torch.empty(0, dtype=getattr(self.torch, dtype))
            cos, sin = rotary(empty, self._positions(position_ids, scaling))
        batched = batch_positions(np.ndim(position_ids), SECTION in scaling)
        return to_numpy(cos[..., :half] if batched else cos[0, ..., :half]), to_numpy(
            sin[..., :half] if batched else sin[0, ..., :half]
        )

    def errors(self) -> AbstractContextManager[None]:
        return torch_shape_errors()

    def rope_apply(self, x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairing: str) -> Any:
        check_tables(x, cos, sin, pairing)
        with self.torch.no_grad(), torch_shape_errors():
            return to_numpy(self._apply(self.tensor(x), cos, sin))

    def rope_apply_backward(
        self, x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairing: str, grad_output: np.ndarray
    ) -> Any:
        check_tables(x, cos, sin, pairing)
        return self.autograd(partial(self._apply, cos=cos, sin=sin), x, grad_output)

    def rotate(self, x: Any, rotation: RopeCall) -> Any:
        """x rotated as the model's attention rotates its queries."""
        check_rank(x)
        width = x.shape[-1]
        if not self.model.partial and rotation.rotary_dim != width:
            raise Decline(f"{self.model.prefix} rotates the whole head: rotary_dim {rotation.rotary_dim} != d {width}")
        rotary = self._rotary(width, rotation.rotary_dim, rotation.base, rotation.scaling)
        cos, sin = rotary(x, self._positions(rotation.position_ids, rotation.scaling))
        ndims = int(width * rotary.config.rope_parameters.get("partial_rotary_factor", 1.0))
        batched = batch_positions(np.ndim(rotation.position_ids), SECTION in rotation.scaling)
        return self._attend(x, cos, sin, ndims if self.model.partial == "attention" else cos.shape[-1], batched)

    # ----- the model's own calls ------------------------------------------------------------

    def _apply(self, x: Any, cos: np.ndarray, sin: np.ndarray) -> Any:
        """x rotated by the model's apply_rotary_pos_emb with the given (T, r) or (B, T, r) tables."""
        c, s = (self.tensor(t) for t in (cos, sin))
        c, s = (t[None] if t.dim() == 2 else t for t in (c, s))
        return self._attend(x, c, s, c.shape[-1], batch=cos.ndim == 3)

    def _attend(self, x: Any, cos: Any, sin: Any, rotary: int, batch: bool) -> Any:
        """x viewed as (batch, heads, T, d) and rotated as the model's attention rotates its queries by (cos, sin)
        of width ``rotary`` (Phi's attention splits x at it; GPT-NeoX's apply_rotary_pos_emb does so itself)."""
        check_rank(x)
        width = x.shape[-1]
        if not self.model.partial and rotary != width:
            raise Decline(f"{self.model.prefix} rotates the whole head: rotary width {rotary} != d {width}")
        lead = (x.shape[0], int(np.prod(x.shape[1:-2]))) if batch else (batches(x), 1)  # no -1: T may be 0
        heads = x.reshape(*lead, *x.shape[-2:])  # (batch, heads, T, d)
        if self.model.partial == "attention":  # PhiAttention.forward: rotate the first rotary_ndims, keep the rest
            rot, rest = heads[..., :rotary], heads[..., rotary:]
            out = self.torch.cat((self.module.apply_rotary_pos_emb(rot, rot, cos, sin)[0], rest), dim=-1)
        else:
            out = self.module.apply_rotary_pos_emb(heads, heads, cos, sin)[0]
        return out.reshape(x.shape)

    def _rotary(self, head_dim: int, rotary_dim: int, base: float, scaling: Mapping[str, Any]) -> Any:
        """A fresh ``<Model>RotaryEmbedding`` for this head width, rotary width, base and scaling; on an instance,
        the one its first call built."""
        return self.instances.get(lambda: self._new_rotary(head_dim, rotary_dim, base, scaling))[0]

    def _new_rotary(self, head_dim: int, rotary_dim: int, base: float, scaling: Mapping[str, Any]) -> Any:
        parameters = {**dict(scaling), "rope_theta": base}
        if self.model.partial:
            parameters["partial_rotary_factor"] = rotary_fraction(rotary_dim, head_dim)
        if self.model.sections and SECTION not in parameters:
            parameters[SECTION] = text_sections(rotary_dim // 2)
        config_class = getattr(self.module, self.model.config or f"{self.model.prefix}Config")
        original = scaling.get("original_max_position_embeddings")
        lengths = {"max_position_embeddings": int(original)} if original else {}  # else the config's default
        with rope_type_errors(rope_type(scaling)):
            config = config_class(
                hidden_size=head_dim,
                num_attention_heads=1,
                num_key_value_heads=1,
                head_dim=head_dim,
                rope_parameters=parameters,
                **lengths,
            )
            return getattr(self.module, f"{self.model.prefix}RotaryEmbedding")(config)

    def _positions(self, position_ids: np.ndarray, scaling: Mapping[str, Any]) -> Any:
        """(1, T) for one row of positions, (B, T) per batch row (as the model's forward passes them); with M-RoPE
        sections (3, 1, T) or (3, B, T)."""
        ids = np.asarray(position_ids, dtype=np.int64)
        if SECTION in scaling:
            return self.torch.from_numpy(np.ascontiguousarray(ids[:, None] if ids.ndim == 2 else ids))
        return self.torch.from_numpy(ids if ids.ndim == 2 else ids.reshape(1, -1))


def text_sections(half: int) -> list[int]:
    """An M-RoPE split of ``half`` frequencies into (temporal, height, width) sections, in Qwen2-VL's proportions
    (16, 24, 24 of 64). With one position per token (text), every section rotates by the same positions, so any
    split gives the same rotation: it only has to add up to ``half``."""
    height = half * 3 // 8
    return [half - 2 * height, height, height]


def check_tables(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairing: str) -> None:
    """The pairing, and tables of the shapes EMB-ROPE-16 defines, checked by the adapter (decided by glue):
    apply_rotary_pos_emb broadcasts whatever it is given, or splits x at another width."""
    check_pairing(pairing, ("half_split",))
    with glue_checks():
        check_apply(np.asarray(x), np.asarray(cos), np.asarray(sin), pairing)


@contextmanager
def rope_type_errors(kind: Optional[str]) -> Iterator[None]:
    """transformers' KeyError for a rope_type its ROPE_INIT_FUNCTIONS does not have, and its config's refusal of
    an odd rotary dimension or of a rope_type it does not take, as invalid_config."""
    try:
        yield
    except KeyError as exc:
        if exc.args and exc.args[0] == kind:
            raise EmbeddingError("invalid_config", f"KeyError: unknown rope_type {kind!r}") from exc
        raise
    except Exception as exc:  # a validation error class of huggingface_hub's, wrapping the ValueError
        for refusal in (EVEN, ONE_OF):
            if refusal in str(exc):
                raise EmbeddingError("invalid_config", f"{type(exc).__name__}: {refusal}") from exc
        raise
