"""A JAX-style serving engine's rotary layer: inv_freq cast to the model dtype before the phase, and dynamic NTK
scaling keyed to the current call's length.

Inspired by: sgl-project/sglang-jax #1472 ("RoPE inverse frequencies are quantized before phase computation":
``inv_freq = jnp.asarray(self._inv_freq_np, dtype=self.dtype)`` rounds the 64 frequencies to bfloat16, the product
with float32 positions cannot recover them, "the phase error grows with position") and transformers #29496 (a
Mistral ``inv_freq`` left in bfloat16); and dynamic NTK implementations that rescale the base from
``seq_len = x.shape[-2]`` (the length of this call) instead of the largest position, which a decode step with a
KV cache (one new token at position 10000) does not reach.
"""

import ml_dtypes
import numpy as np
from _spec import check_grad, check_rope

EMBCONF_FEATURES = ["rope-half_split", "rope-positions", "rope-dynamic", "rope-linear"]

MISTAKES = [
    {
        "phrase": "bfloat16",
        "mutants": ["rope.inv_freq_bfloat16", "rope.tables.inv_freq_bfloat16"],
        "claims": ["symptom:rope:angle_precision:*:inv_freq:bfloat16"],
    },
    {"phrase": ["frequenc", "base"], "mutants": []},  # dynamic NTK from the call's length, not max(position_ids)
]


def _phase(position_ids, dim, base, scaling):
    scaling = scaling or {"rope_type": "default"}
    if scaling.get("rope_type") == "dynamic":
        seq_len, original, factor = len(position_ids), scaling["original_max_position_embeddings"], scaling["factor"]
        if seq_len > original:  # the call's length, not max(position_ids) + 1
            base = base * ((factor * seq_len / original) - (factor - 1)) ** (dim / (dim - 2))
    inv_freq = 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float32) / dim)
    inv_freq = inv_freq.astype(ml_dtypes.bfloat16).astype(np.float32)  # jnp.asarray(..., dtype=self.dtype)
    positions = np.asarray(position_ids).astype(np.float32)
    if scaling.get("rope_type") == "linear":
        positions = positions / np.float32(scaling["factor"])
    return positions[:, None] * inv_freq[None, :]


def _rotate(v, phase, rotary_dim, sign=1.0):
    h = rotary_dim // 2
    cos, sin = np.cos(phase), sign * np.sin(phase)
    w = v.astype(np.float32)
    x1, x2 = w[..., :h], w[..., h:rotary_dim]
    out = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return np.concatenate([out.astype(v.dtype), v[..., rotary_dim:]], axis=-1)


def rope_tables(position_ids, rotary_dim, base, scaling, dtype="float32"):
    check_rope(None, position_ids, rotary_dim, base, scaling)
    phase = _phase(position_ids, rotary_dim, base, scaling)
    return np.cos(phase).astype(dtype), np.sin(phase).astype(dtype)


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    return _rotate(x, _phase(position_ids, rotary_dim, base, scaling), rotary_dim)


def rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    check_grad(x, grad_output)
    return _rotate(grad_output, _phase(position_ids, rotary_dim, base, scaling), rotary_dim, -1.0)
