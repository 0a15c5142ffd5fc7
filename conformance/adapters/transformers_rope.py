"""``transformers:MODEL`` for a model's rotary position embedding: its ``<Model>RotaryEmbedding`` and its
``apply_rotary_pos_emb``, called as the model's attention calls them (MODEL: llama, gpt_neox, qwen2, gemma, phi).

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
  ``q_embed`` kept; ``rope_backward``: torch autograd through the same call.
- Partial rotary is what the model does: GPT-NeoX's ``apply_rotary_pos_emb`` splits x at the tables' width
  itself; Phi's attention splits ``q[..., :rotary_ndims]`` (``int(head_dim * partial_rotary_factor)``) before the
  call and concatenates the rest after it, which the adapter repeats. Llama, Qwen2 and Gemma rotate the whole
  head (their default frequencies ignore ``partial_rotary_factor``): ``rope-partial`` is not declared and a case
  with ``rotary_dim != d`` is declined.
- Every model pairs (k, k + h) (``rotate_half``): ``rope-half_split`` only. The adapter rejects an unknown
  pairing and an x of rank < 2 (it cannot view it as heads) itself (decided by glue). Mapped: transformers'
  ``KeyError`` for an unknown ``rope_type`` (its ``ROPE_INIT_FUNCTIONS`` lookup) and its config's "RoPE requires
  an even rotary dimension" to invalid_config; torch's refusal to broadcast tables of another length and its
  autograd's "Mismatch in shape" of grad_output to shape_mismatch. Nothing else: a base <= 0 gives NaN.
- transformers documents yarn's ``original_max_position_embeddings`` as optional and fills it from
  ``max_position_embeddings`` (cited as :data:`HF_YARN_ORIGINAL`; the spec rejects its absence).
- rope_types recorded but not run: ``longrope`` (needs per-frequency factor lists the spec does not define) and
  ``proportional`` (Gemma 4's zero frequencies for the rest of the head): no spec feature names them.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Iterator, Optional

import numpy as np

from embconf.adapters.instances import Instances
from embconf.adapters.pytorch import to_numpy
from embconf.adapters.rope import check_pairing, check_rank, rope_features, rope_type
from embconf.model.contract import STATEFUL, Capabilities, DocumentedChoice
from embconf.model.errors import Decline
from embconf.reference.errors import EmbeddingError

HF_SCALINGS = ("linear", "dynamic", "yarn", "llama3")
DTYPES = frozenset({"float16", "bfloat16", "float64"})
EVEN = "RoPE requires an even rotary dimension"
TORCH_SHAPES = ("must match the size of tensor", "Mismatch in shape: grad_output")
HF_YARN_ORIGINAL = DocumentedChoice(
    "https://github.com/huggingface/transformers/blob/v5.0.0/src/transformers/modeling_rope_utils.py",
    "transformers documents original_max_position_embeddings as optional for yarn (RopeParameters) and "
    "standardize_rope_params fills it from max_position_embeddings",
    cases=("rope.error.yarn_missing_original",),
)


@dataclass(frozen=True)
class RopeModel:
    module: str  # under transformers.models
    prefix: str  # <prefix>RotaryEmbedding, <prefix>Config
    title: str
    partial: str  # "": the whole head; "apply": apply_rotary_pos_emb splits; "attention": the attention splits


ROPE_MODELS = {
    "llama": RopeModel("llama.modeling_llama", "Llama", "Llama rotary embedding", ""),
    "gpt_neox": RopeModel("gpt_neox.modeling_gpt_neox", "GPTNeoX", "GPT-NeoX rotary embedding", "apply"),
    "qwen2": RopeModel("qwen2.modeling_qwen2", "Qwen2", "Qwen2 rotary embedding", ""),
    "gemma": RopeModel("gemma.modeling_gemma", "Gemma", "Gemma rotary embedding", ""),
    "phi": RopeModel("phi.modeling_phi", "Phi", "Phi rotary embedding", "attention"),
}


def rope_capabilities(model: RopeModel) -> Capabilities:
    features = rope_features(("half_split",), HF_SCALINGS, partial=bool(model.partial), positions=True)
    return Capabilities(
        frozenset({"rope_tables", "rope_forward", "rope_backward"}),
        features | DTYPES | {STATEFUL},
        notes=(f"transformers.models.{model.module}: {model.prefix}RotaryEmbedding + apply_rotary_pos_emb",),
        documented=(HF_YARN_ORIGINAL,),
    )


class HfRope:
    """The three rope operations of one transformers model, on torch tensors."""

    def __init__(self, torch: Any, module: Any, model: RopeModel) -> None:
        self.torch, self.module, self.model = torch, module, model
        self.instances: Instances[Any] = Instances()  # the rotary module of an instance's first call

    # ----- operations (named and called as the spec's) -----------------------------------

    def rope_tables(
        self, position_ids: np.ndarray, rotary_dim: int, base: float, scaling: Mapping[str, Any], dtype: str
    ) -> tuple[Any, Any]:
        half = rotary_dim // 2
        with self.torch.no_grad():
            rotary = self._rotary(rotary_dim, rotary_dim, base, scaling)
            cos, sin = rotary(self.torch.empty(0, dtype=getattr(self.torch, dtype)), self._positions(position_ids))
        return to_numpy(cos[0, ..., :half]), to_numpy(sin[0, ..., :half])

    def rope_forward(
        self,
        x: np.ndarray,
        position_ids: np.ndarray,
        rotary_dim: int,
        base: float,
        scaling: Mapping[str, Any],
        pairing: str,
    ) -> Any:
        check_pairing(pairing, ("half_split",))
        with self.torch.no_grad(), torch_shape_errors():
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
        check_pairing(pairing, ("half_split",))
        rotate = partial(self._rotate, position_ids=position_ids, rotary_dim=rotary_dim, base=base, scaling=scaling)
        return autograd_backward(rotate, self._tensor(x), lambda: self._tensor(grad_output))

    # ----- the model's own calls ------------------------------------------------------------

    def _rotate(
        self, x: Any, position_ids: np.ndarray, rotary_dim: int, base: float, scaling: Mapping[str, Any]
    ) -> Any:
        """x rotated as the model's attention rotates its queries."""
        check_rank(x)
        width = x.shape[-1]
        if not self.model.partial and rotary_dim != width:
            raise Decline(f"{self.model.prefix} rotates the whole head: rotary_dim {rotary_dim} != d {width}")
        rotary = self._rotary(width, rotary_dim, base, scaling)
        cos, sin = rotary(x, self._positions(position_ids))
        heads = x.reshape(-1, 1, *x.shape[-2:])  # (batch, heads, T, d): what the attention passes
        if self.model.partial == "attention":  # PhiAttention.forward: rotate the first rotary_ndims, keep the rest
            ndims = int(width * rotary.config.rope_parameters["partial_rotary_factor"])
            rot, rest = heads[..., :ndims], heads[..., ndims:]
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
            parameters["partial_rotary_factor"] = rotary_dim / head_dim
        config_class = getattr(self.module, f"{self.model.prefix}Config")
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

    def _positions(self, position_ids: np.ndarray) -> Any:
        return self.torch.from_numpy(np.asarray(position_ids, dtype=np.int64).reshape(1, -1))

    def _tensor(self, array: np.ndarray) -> Any:
        array = np.asarray(array, order="C")
        if array.dtype.name == "bfloat16":  # ml_dtypes -> torch through the bit patterns
            return self.torch.from_numpy(array.view(np.uint16).copy()).view(self.torch.bfloat16)
        return self.torch.from_numpy(array.copy())


@contextmanager
def rope_type_errors(kind: Optional[str]) -> Iterator[None]:
    """transformers' KeyError for a rope_type its ROPE_INIT_FUNCTIONS does not have, and its config's refusal of
    an odd rotary dimension, as invalid_config."""
    try:
        yield
    except KeyError as exc:
        if exc.args and exc.args[0] == kind:
            raise EmbeddingError("invalid_config", f"KeyError: unknown rope_type {kind!r}") from exc
        raise
    except Exception as exc:  # a validation error class of huggingface_hub's, wrapping the ValueError
        if EVEN in str(exc):
            raise EmbeddingError("invalid_config", f"{type(exc).__name__}: {EVEN}") from exc
        raise


def autograd_backward(rotate: Callable[[Any], Any], x: Any, grad_output: Callable[[], Any]) -> Any:
    """The gradient of ``rotate`` at the torch tensor ``x`` for the tensor ``grad_output()`` gives, by autograd
    (torch's shape refusals typed as shape_mismatch), as NumPy."""
    xt = x.requires_grad_(True)
    with torch_shape_errors():
        rotate(xt).backward(grad_output())
    return to_numpy(xt.grad)


@contextmanager
def torch_shape_errors() -> Iterator[None]:
    """torch's refusal of tables or a grad_output of another shape than x's, as shape_mismatch."""
    try:
        yield
    except RuntimeError as exc:
        if any(text in str(exc) for text in TORCH_SHAPES):
            raise EmbeddingError("shape_mismatch", f"RuntimeError: {exc}") from exc
        raise
